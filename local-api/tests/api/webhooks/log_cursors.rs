//! The delivery log at volume: cursor walks return each attempt once, in order, for every filter.

use base64::Engine;
use hosting_domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
use serde_json::{Value, json};

use super::{log, register, seeded_attempt};
use crate::common::*;

/// Every page of a walk with `query`, following `next_cursor`; `between_pages` runs after the
/// first.
async fn walk(
    api: &TestApp,
    id: &str,
    query: &str,
    mut between_pages: impl AsyncFnMut(),
) -> Vec<Value> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page_query = match &cursor {
            Some(cursor) => format!("{query}&cursor={cursor}"),
            None => query.to_owned(),
        };
        let page = log(api, id, &page_query).await;
        seen.extend(page["deliveries"].as_array().unwrap().iter().cloned());
        if cursor.is_none() {
            between_pages().await;
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
}

/// A cursor as a client could forge one: the right webhook and no filters, any position,
/// unsigned.
fn forged_cursor(webhook_id: &str, position: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"w": webhook_id, "s": "", "e": "", "p": position}).to_string())
}

/// `cursor` (`<payload>.<tag>`) with its payload changed by `alter`, its tag kept.
fn altered(cursor: &str, alter: impl FnOnce(&mut Value)) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = cursor.split_once('.').expect("a signed cursor");
    let mut json: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    alter(&mut json);
    format!("{}.{tag}", URL_SAFE_NO_PAD.encode(json.to_string()))
}

#[tokio::test]
async fn cursor_walks_return_each_attempt_once_in_order_for_every_filter() {
    let api = TestApp::new().await;
    let (id, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/a").await;
    let store = api.runtime.app.store.clone();
    let start = api.now() - chrono::Duration::days(2);
    let seeded: Vec<(DeliveryAttempt, DeliveredEvent)> = (0..90)
        .map(|n| seeded_attempt(&id, n, start, false))
        .collect();
    for (attempt, event) in &seeded {
        store.record_attempt(attempt, event).await.unwrap();
    }
    let newest_first = |keep: &dyn Fn(&DeliveryAttempt) -> bool| -> Vec<(String, u64)> {
        seeded
            .iter()
            .rev()
            .map(|(a, _)| a)
            .filter(|a| keep(a))
            .map(|a| (a.event_id.clone(), u64::from(a.attempt)))
            .collect()
    };
    let shown = |entries: &[Value]| -> Vec<(String, u64)> {
        entries
            .iter()
            .map(|e| {
                (
                    e["event_id"].as_str().unwrap().to_owned(),
                    e["attempt"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let event = format!("evt_{:032x}", 7);
    type Keep<'a> = Box<dyn Fn(&DeliveryAttempt) -> bool + 'a>;
    let cases: [(String, Keep<'_>); 5] = [
        ("?limit=7".into(), Box::new(|_| true)),
        ("?limit=7&status=failed".into(), Box::new(|a| !a.succeeded)),
        (
            "?limit=4&status=succeeded".into(),
            Box::new(|a| a.succeeded),
        ),
        (
            format!("?limit=2&event_id={event}"),
            Box::new(|a| a.event_id == event),
        ),
        (
            format!("?limit=1&event_id={event}&status=failed"),
            Box::new(|a| a.event_id == event && !a.succeeded),
        ),
    ];
    for (query, keep) in &cases {
        let walked = walk(&api, &id, query, async || {}).await;
        assert_eq!(shown(&walked), newest_first(keep.as_ref()), "{query}");
    }

    // Attempts recorded during a walk appear only on a new walk.
    let later: Vec<_> = (0..5)
        .map(|n| seeded_attempt(&id, 300 + n, api.now(), false))
        .collect();
    let walked = walk(&api, &id, "?limit=10", async || {
        for (attempt, event) in &later {
            store.record_attempt(attempt, event).await.unwrap();
        }
    })
    .await;
    assert_eq!(shown(&walked), newest_first(&|_| true));
    assert_eq!(walk(&api, &id, "?limit=100", async || {}).await.len(), 95);

    // A cursor belongs to its webhook and its filters.
    let first = log(&api, &id, "?limit=3&status=failed").await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (other, _) = register(&api, &Keys::test_a(), "https://hooks.example.com/b").await;
    for (webhook, query) in [
        (id.as_str(), format!("?cursor={cursor}")),
        (id.as_str(), format!("?status=succeeded&cursor={cursor}")),
        (
            id.as_str(),
            format!("?status=failed&event_id={event}&cursor={cursor}"),
        ),
        (other.as_str(), format!("?status=failed&cursor={cursor}")),
        (id.as_str(), "?cursor=not-a-cursor".into()),
        (id.as_str(), "?cursor=".into()),
        (id.as_str(), "?cursor=e30".into()),
        (
            id.as_str(),
            format!("?cursor={}", forged_cursor(&id, &"9".repeat(3000))),
        ),
        (
            id.as_str(),
            format!(
                "?cursor={}",
                forged_cursor(&id, "2026-01-01T00:00:00.000000Z#evt_x")
            ),
        ),
        // The service's own cursor, altered: a far-future position, another place, an extra
        // field, an array form; and its tag cut, dropped or changed.
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}",
                altered(&cursor, |c| c["p"] =
                    json!("2999-01-01T00:00:00.000000Z#evt_x#1"))
            ),
        ),
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}",
                altered(&cursor, |c| c["p"] =
                    json!(format!("{}0", c["p"].as_str().unwrap())))
            ),
        ),
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}",
                altered(&cursor, |c| c["x"] = json!(1))
            ),
        ),
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}",
                altered(&cursor, |c| *c = json!([c["w"], c["s"], c["e"], c["p"]]))
            ),
        ),
        (
            id.as_str(),
            format!("?status=failed&cursor={}", &cursor[..cursor.len() - 2]),
        ),
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}",
                cursor.split('.').next().unwrap()
            ),
        ),
        (
            id.as_str(),
            format!(
                "?status=failed&cursor={}.AAAAAAAAAAAAAAAAAAAAAA",
                cursor.split('.').next().unwrap()
            ),
        ),
    ] {
        api.get(
            &format!("/webhooks/{webhook}/deliveries{query}"),
            &Keys::test_a(),
        )
        .await
        .assert_error(400, "invalid_fields");
    }
    // An event id that cannot be one matches nothing.
    let long = "e".repeat(5_000);
    let page = log(&api, &id, &format!("?event_id={long}")).await;
    assert_eq!(page["deliveries"], json!([]));
    // The same cursor with its filters goes on.
    let next = log(
        &api,
        &id,
        &format!("?limit=3&status=failed&cursor={cursor}"),
    )
    .await;
    assert_eq!(next["deliveries"].as_array().unwrap().len(), 3);
    // A cursor whose place aged out of the 30 days has nothing after it.
    api.advance(chrono::Duration::days(31));
    let page = log(
        &api,
        &id,
        &format!("?limit=3&status=failed&cursor={cursor}"),
    )
    .await;
    assert_eq!(
        (page["deliveries"].clone(), page["next_cursor"].clone()),
        (json!([]), Value::Null)
    );
}
