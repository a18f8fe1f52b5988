//! The product under the faults real AWS produces and moto does not (scripts/aws/fault_proxy.py):
//! throttling, internal errors, transaction conflicts (drawn at random, and DynamoDB's own:
//! a transaction overlapping another on an item is cancelled) and throttled cancellations,
//! answers lost after the write was applied, SQS 500s, lagging indexes (empty or an earlier
//! answer), batches that leave keys and items unprocessed. A concurrent workload of several
//! brands runs with faults on; every answer must be a documented status in the envelope, and
//! once the faults stop and the streams settle, nothing is lost or doubled: every started
//! stream is listed, no brand has more streams than starts, and every transition's event is
//! delivered under exactly one event id.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::fake_livekit::{FakeLiveKit, agent_joined};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

pub(crate) const FAULTS: &str = r#"{"throttling": 0.03, "provisioned_throughput": 0.02, "internal_error": 0.02,
    "transaction_conflict": 0.05, "transaction_throttled": 0.05, "lost_response": 0.03,
    "sqs_500": 0.05, "gsi_stale": 0.2, "stale_index": 0.2, "unprocessed": 0.3,
    "conflicts": {"hold_ms": 15}}"#;

/// Statuses seen, per (method, route).
type Seen = Arc<Mutex<BTreeMap<(String, u16, String), usize>>>;

/// Records an answer after checking the rule every answer obeys under faults: a 5xx is only
/// `500 db_error` or `502 launch_failed` (the envelope and the documented status are checked
/// on every answer by the harness).
fn record(seen: &Seen, what: &str, r: &Response) {
    let code = r.code().to_owned();
    if r.status.is_server_error() {
        assert!(
            matches!(
                (r.status.as_u16(), code.as_str()),
                (500, "db_error") | (502, "launch_failed")
            ),
            "{what}: {} {}",
            r.status,
            r.body
        );
    }
    *seen
        .lock()
        .unwrap()
        .entry((what.to_owned(), r.status.as_u16(), code))
        .or_default() += 1;
}

/// Sends a LiveKit event until LiveKit would stop resending it (a 2xx).
async fn deliver_until_accepted(api: &TestApp, seen: &Seen, event: &Value) {
    api.post_livekit_until_accepted(event, |r| record(seen, "POST /livekit/webhook", r))
        .await;
}

struct Brand {
    test_key: String,
    live_key: String,
    receiver: Receiver,
    starts: usize,
    /// Streams whose start answered 201 or 502.
    started: BTreeSet<String>,
}

/// A start with an `Idempotency-Key`, sent again with the same key while the answer is a
/// `500` or a `409`, as a client retrying safely would.
async fn start_with_key(
    api: &TestApp,
    seen: &Seen,
    key: &str,
    idempotency_key: &str,
    body: &Value,
) -> Response {
    let mut last = None;
    for _ in 0..10 {
        let request = axum::http::Request::builder()
            .method("POST")
            .uri("/api/v1/streams")
            .header("authorization", format!("Bearer {key}"))
            .header("idempotency-key", idempotency_key)
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        let r = api.send(request).await;
        record(seen, "POST /streams", &r);
        if !matches!(r.status.as_u16(), 500 | 409) {
            return r;
        }
        last = Some(r);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    last.expect("at least one answer")
}

/// One brand's share of the workload: starts of both kinds (with idempotency keys, retried
/// through failures), the agent joining live ones, reads, lists and ends, concurrently with
/// the other brands'.
async fn workload(
    api: Arc<TestApp>,
    seen: Seen,
    test_key: String,
    live_key: String,
    rounds: usize,
) -> (usize, BTreeSet<String>) {
    let mut started = BTreeSet::new();
    let mut test_streams = BTreeSet::new();
    let mut starts = 0;
    for round in 0..rounds {
        for key in [&test_key, &live_key] {
            starts += 1;
            let body = json!({"creator_id": CREATOR_AVA, "product_name": format!("round {round}"),
                              "platform": "tiktok", "duration_minutes": 30});
            let r = start_with_key(&api, &seen, key, &format!("{key}-{round}"), &body).await;
            if matches!(r.status.as_u16(), 201 | 502)
                && let Some(id) = r.body["stream_id"].as_str()
            {
                started.insert(id.to_owned());
                if key == &test_key {
                    test_streams.insert(id.to_owned());
                }
                if let Some(room) = r.body["room_name"]
                    .as_str()
                    .filter(|_| r.status == 201 && key == &live_key)
                {
                    let event_id = format!("EV_join_{id}");
                    deliver_until_accepted(&api, &seen, &agent_joined(room, &event_id)).await;
                }
            }
        }
        let r = api.get("/streams?limit=5", &test_key).await;
        record(&seen, "GET /streams", &r);
        let live: Vec<String> = r.body["streams"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["status"] == "live")
            .filter_map(|s| s["id"].as_str().map(str::to_owned))
            .collect();
        if let Some(id) = live.first() {
            let r = api.get(&format!("/streams/{id}"), &test_key).await;
            record(&seen, "GET /streams/{id}", &r);
        }
        // A live key's stream is ended by `DELETE`; a test stream by a test helper (a live
        // key's stream is not found to them). Which is which is known from the starts, so each
        // round drives one of each whatever the list's order.
        if let Some(id) = live.iter().find(|id| !test_streams.contains(*id)) {
            let r = api.delete(&format!("/streams/{id}"), &live_key).await;
            record(&seen, "DELETE /streams/{id}", &r);
        }
        if let Some(id) = live.iter().find(|id| test_streams.contains(*id)) {
            let helper = if round % 2 == 0 { "finish" } else { "fail" };
            for (path, body) in [("viewers", json!({"count": round})), (helper, json!({}))] {
                // Sent again after a `500`, as a client would; a `404` after a lost answer
                // means the first one ended it.
                for _ in 0..5 {
                    let r = api
                        .post(
                            &format!("/test_helpers/streams/{id}/{path}"),
                            &test_key,
                            body.clone(),
                        )
                        .await;
                    record(
                        &seen,
                        &format!("POST /test_helpers/streams/{{id}}/{path}"),
                        &r,
                    );
                    if r.status != 500 {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        let r = api.get("/webhooks", &test_key).await;
        record(&seen, "GET /webhooks", &r);
    }
    (starts, started)
}

async fn listed(api: &TestApp, key: &str) -> Vec<Value> {
    for _ in 0..20 {
        let r = api.get("/streams?limit=100", key).await;
        if r.status == 200 {
            return r.body["streams"].as_array().unwrap().clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the list never answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs DynamoDB and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_under_aws_faults_answers_are_documented_and_nothing_is_lost_or_doubled() {
    let livekit = FakeLiveKit::start().await;
    let api = Arc::new(
        TestApp::builder()
            .with_livekit(&livekit)
            .with_delivery()
            .with_private_webhook_urls()
            .with_webhook_retry_delays_secs(&[0.2; 5])
            .with_outbox_retry_delays_secs(&[0.1, 0.2, 0.4, 0.8, 1.6, 3.2])
            .await,
    );
    let table = api.table().expect("DynamoDB").to_owned();

    let mut brands = Vec::new();
    for (test_key, live_key) in [
        (Keys::test_a(), Keys::live_a()),
        (Keys::test_b(), Keys::live_b()),
    ] {
        let receiver = Receiver::start(Behaviour::Ok).await;
        let r = api
            .post(
                "/webhooks",
                &test_key,
                json!({"url": receiver.url(), "events": ["stream.started", "stream.ended", "stream.error"]}),
            )
            .await;
        r.assert_status(201);
        brands.push(Brand {
            test_key,
            live_key,
            receiver,
            starts: 0,
            started: BTreeSet::new(),
        });
    }

    faults::set(&table, serde_json::from_str(FAULTS).unwrap()).await;
    let seen: Seen = Arc::default();
    let tasks: Vec<_> = brands
        .iter()
        .map(|b| {
            tokio::spawn(workload(
                api.clone(),
                seen.clone(),
                b.test_key.clone(),
                b.live_key.clone(),
                6,
            ))
        })
        .collect();
    for (brand, task) in brands.iter_mut().zip(tasks) {
        (brand.starts, brand.started) = task.await.unwrap();
    }
    let stats = faults::stats(&table).await;
    faults::clear(&table).await;
    println!("faults: {stats}");
    println!("answers: {:?}", seen.lock().unwrap());
    let injected = crate::common::faults::injected(&stats);
    assert!(injected >= 10, "faults were injected: {stats}");
    // Settle: every stream still preparing gets its agent, every live one is ended.
    for brand in &brands {
        for stream in listed(&api, &brand.test_key).await {
            let id = stream["id"].as_str().unwrap();
            if stream["status"] == "preparing" {
                let room = stream["room_name"].as_str().unwrap();
                deliver_until_accepted(
                    &api,
                    &seen,
                    &agent_joined(room, &format!("EV_settle_{id}")),
                )
                .await;
            }
            if matches!(stream["status"].as_str(), Some("preparing" | "live")) {
                api.delete(&format!("/streams/{id}"), &brand.test_key)
                    .await
                    .assert_status(200);
            }
        }
    }

    let all_events = api.emitted_events().await;
    let mut ended_by_helper = BTreeSet::new();
    for brand in &brands {
        let streams = listed(&api, &brand.test_key).await;
        let ids: BTreeSet<String> = streams
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            brand.started.is_subset(&ids),
            "every started stream is listed"
        );
        assert!(
            ids.len() <= brand.starts,
            "{} streams from {} starts",
            ids.len(),
            brand.starts
        );

        // Each stream's transitions: exactly one event each, in the outbox and at the receiver,
        // and the reason of its end recorded with it.
        let mut expected: BTreeMap<(String, String), ()> = BTreeMap::new();
        for stream in &streams {
            let id = stream["id"].as_str().unwrap().to_owned();
            let reason = stream["end_reason"].as_str().unwrap_or("none");
            if matches!(reason, "host_left" | "provider_error") {
                ended_by_helper.insert(reason.to_owned());
            }
            let types: &[&str] = match (stream["status"].as_str().unwrap(), reason) {
                ("ended", "requested" | "host_left") => &["stream.started", "stream.ended"],
                ("error", "provider_error") => &["stream.started", "stream.error"],
                ("error", "launch_failed") => &["stream.error"],
                (other, reason) => panic!("{id} still {other} ({reason})"),
            };
            let written: Vec<&str> = all_events
                .iter()
                .filter(|e| e.stream_id.map(|id| id.to_string()).unwrap_or_default() == id)
                .map(|e| e.event_type.as_str())
                .collect();
            assert_eq!(written, types, "{id}: one event per transition");
            for t in types {
                expected.insert((id.clone(), t.to_string()), ());
            }
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let received = loop {
            let mut received: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
            for hit in brand.receiver.hits() {
                let body: Value = serde_json::from_str(&hit.body).unwrap();
                let key = (
                    body["data"]["stream"]["stream_id"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    body["type"].as_str().unwrap().to_owned(),
                );
                received
                    .entry(key)
                    .or_default()
                    .insert(hit.header("x-service-event-id").to_owned());
            }
            if expected.keys().all(|k| received.contains_key(k)) || Instant::now() > deadline {
                break received;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        for key in expected.keys() {
            let ids = received
                .get(key)
                .unwrap_or_else(|| panic!("{key:?} was never delivered"));
            assert_eq!(ids.len(), 1, "{key:?} under one event id: {ids:?}");
        }
        assert!(
            received.keys().all(|k| expected.contains_key(k)),
            "nothing but the transitions"
        );
    }
    // Under faults, the helpers still ended streams both ways (each answer is checked above;
    // an answer lost after the write is seen here as the stream's reason).
    assert_eq!(
        ended_by_helper,
        BTreeSet::from(["host_left".to_owned(), "provider_error".to_owned()]),
        "the test helpers ended streams under faults: {:?}",
        seen.lock().unwrap()
    );
}
