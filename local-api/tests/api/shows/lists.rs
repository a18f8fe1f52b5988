//! `GET /shows`: soonest `starts_at` first (then id), `limit`/`offset` and `status` as
//! `GET /streams` takes them, `total` of the filter, only the brand's own shows, and a page
//! that reads what it shows plus the shows it skips inside one hour, whatever the count.

use super::*;

fn ids(r: &Response) -> Vec<String> {
    r.body["shows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["show_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn shows_are_listed_soonest_first_paged_and_filtered_by_status() {
    let api = TestApp::new().await;
    // Scheduled out of order, some in the same hour, some days apart.
    let minutes = [300, 90, 2 * 24 * 60, 61, 75, 24 * 60, 62];
    let mut made: Vec<(i64, String)> = Vec::new();
    for m in minutes {
        made.push((
            m,
            scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, m)})).await,
        ));
    }
    // Two of the same moment: by id.
    let same = at(&api, 500);
    for _ in 0..2 {
        made.push((
            500,
            scheduled(&api, &Keys::test_a(), json!({"starts_at": same})).await,
        ));
    }
    // By time, then by id (32 lowercase hex digits sort as the UUIDs they are).
    made.sort();
    let soonest_first: Vec<String> = made.iter().map(|(_, id)| id.clone()).collect();
    // Another brand's show is never listed.
    scheduled(&api, &Keys::test_b(), json!({})).await;

    let all = api.get("/shows?limit=100", &Keys::test_a()).await;
    all.assert_status(200);
    assert_eq!(ids(&all), soonest_first);
    assert_eq!(all.body["total"], 9);
    assert_eq!(all.body["limit"], 100);
    assert_eq!(all.body["offset"], 0);
    for (limit, offset) in [(1, 0), (2, 1), (3, 3), (4, 7), (5, 8), (5, 9), (5, 20)] {
        let page = api
            .get(
                &format!("/shows?limit={limit}&offset={offset}"),
                &Keys::test_a(),
            )
            .await;
        page.assert_status(200);
        let expected: Vec<String> = soonest_first
            .iter()
            .skip(offset)
            .take(limit)
            .cloned()
            .collect();
        assert_eq!(ids(&page), expected, "limit {limit} offset {offset}");
        assert_eq!(page.body["total"], 9);
    }
    // The default page is GET /streams' default.
    let default = api.get("/shows", &Keys::test_a()).await;
    let streams_default = api.get("/streams", &Keys::test_a()).await;
    assert_eq!(default.body["limit"], streams_default.body["limit"]);

    // Cancel two, start one: each status lists its own, in the same order.
    for id in [&soonest_first[1], &soonest_first[4]] {
        api.delete(&format!("/shows/{id}"), &Keys::test_a())
            .await
            .assert_status(200);
    }
    api.call(
        "POST",
        &format!("/test_helpers/shows/{}/start", soonest_first[6]),
        Some(&Keys::test_a()),
        None,
    )
    .await
    .assert_status(200);
    let of = |status: &str| {
        let api = &api;
        let status = status.to_owned();
        async move {
            api.get(
                &format!("/shows?status={status}&limit=100"),
                &Keys::test_a(),
            )
            .await
        }
    };
    let cancelled = of("cancelled").await;
    assert_eq!(
        ids(&cancelled),
        [soonest_first[1].clone(), soonest_first[4].clone()]
    );
    assert_eq!(cancelled.body["total"], 2);
    let started = of("started").await;
    assert_eq!(ids(&started), [soonest_first[6].clone()]);
    let still: Vec<String> = soonest_first
        .iter()
        .enumerate()
        .filter(|(i, _)| ![1, 4, 6].contains(i))
        .map(|(_, id)| id.clone())
        .collect();
    let scheduled_page = of("scheduled").await;
    assert_eq!(ids(&scheduled_page), still);
    assert_eq!(scheduled_page.body["total"], 6);
    let paged = api
        .get("/shows?status=scheduled&limit=2&offset=3", &Keys::test_a())
        .await;
    assert_eq!(ids(&paged), still[3..5].to_vec());
    for status in ["starting", "failed"] {
        let empty = of(status).await;
        assert_eq!(empty.body["total"], 0);
        assert_eq!(ids(&empty), Vec::<String>::new());
    }
    // The list still holds all nine.
    assert_eq!(api.get("/shows", &Keys::test_a()).await.body["total"], 9);
}

#[tokio::test]
async fn paging_and_filters_are_read_as_get_streams_reads_them() {
    let api = TestApp::new().await;
    for query in [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=ten",
        "offset=-1",
        "offset=x",
        "limit=1.5",
    ] {
        let shows = api.get(&format!("/shows?{query}"), &Keys::test_a()).await;
        let streams = api.get(&format!("/streams?{query}"), &Keys::test_a()).await;
        assert_eq!(shows.status, streams.status, "{query}");
        assert_eq!(shows.code(), streams.code(), "{query}");
    }
    // A status no show has matches nothing, as GET /streams answers one no stream has.
    scheduled(&api, &Keys::test_a(), json!({})).await;
    for status in ["live", "SCHEDULED", "done", ""] {
        let shows = api
            .get(&format!("/shows?status={status}"), &Keys::test_a())
            .await;
        let streams = api
            .get(&format!("/streams?status={status}"), &Keys::test_a())
            .await;
        assert_eq!(shows.status, streams.status, "{status}");
        assert_eq!(shows.code(), streams.code(), "{status}");
        if status != "live" {
            assert_eq!(shows.body["total"], streams.body["total"], "{status}");
        }
    }
    api.get("/shows?limit=100", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test]
async fn a_page_reads_what_it_shows_plus_at_most_one_hours_skipped_shows() {
    let api = TestApp::new().await;
    // 60 shows, 3 an hour over 20 hours.
    for i in 0..60 {
        scheduled(
            &api,
            &Keys::test_a(),
            json!({"starts_at": at(&api, 60 + 20 * i)}),
        )
        .await;
    }
    let all = ids(&api.get("/shows?limit=100", &Keys::test_a()).await);
    assert_eq!(all.len(), 60);
    for (limit, offset) in [(5, 0), (5, 31), (10, 50), (1, 59)] {
        api.store_requests();
        let page = api
            .get(
                &format!("/shows?limit={limit}&offset={offset}"),
                &Keys::test_a(),
            )
            .await;
        assert_eq!(ids(&page), all[offset..(offset + limit).min(60)].to_vec());
        let requests = api.store_requests();
        if !backend::is_dynamodb() {
            continue;
        }
        // The counts item, then one query from the hour where the page begins: it may read
        // the page and the (at most two) shows before it in that hour.
        let queries: Vec<_> = requests
            .calls
            .iter()
            .filter(|c| c.operation == "Query")
            .collect();
        assert_eq!(queries.len(), 1, "{:?}", requests.operations());
        let read = queries[0].limit.unwrap();
        assert!(
            read <= (limit + 2) as u64,
            "limit {limit} offset {offset}: a query of {read}"
        );
        assert_eq!(
            requests.naming("GetItem", "SHOWCOUNTS"),
            1,
            "{:?}",
            requests.operations()
        );
    }
}
