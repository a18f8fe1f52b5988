//! The rate limit: exactly 100 requests per brand per calendar minute, under concurrency too, refused requests counting.

use chrono::Duration;

use crate::common::*;

#[tokio::test]
async fn exactly_100_requests_per_brand_per_minute() {
    let api = TestApp::new().await;
    for i in 0..100 {
        let key = if i % 2 == 0 {
            Keys::test_a()
        } else {
            Keys::test_a2()
        };
        api.get("/streams", &key).await.assert_status(200);
    }
    // The 101st, on any key of the brand and any endpoint, is refused without Retry-After.
    for key in [
        Keys::test_a(),
        Keys::test_a2(),
        Keys::live_a(),
        Keys::only("analytics:read"),
    ] {
        let r = api.get("/analytics", &key).await;
        r.assert_error(429, "rate_limited");
        assert!(r.header("retry-after").is_none());
    }
    // A read is counted while it runs; over the budget its own answer (a 400 or a 404 here)
    // gives way to the 429, which still carries the request id.
    for path in [
        "/analytics?period=bogus".to_owned(),
        format!("/streams/{}", uuid::Uuid::new_v4()),
    ] {
        let r = api.get(&path, &Keys::test_a()).await;
        r.assert_error(429, "rate_limited");
        assert!(r.header("x-request-id").is_some(), "{path}");
    }
    // Other brands are unaffected; public endpoints are never limited.
    api.get("/streams", &Keys::test_b())
        .await
        .assert_status(200);
    for _ in 0..20 {
        api.call("GET", "/creators", Some(&Keys::test_a()), None)
            .await
            .assert_status(200);
        api.call("GET", "/", Some(&Keys::test_a()), None)
            .await
            .assert_status(200);
    }
    // The next calendar minute starts a new budget.
    api.advance(Duration::seconds(30));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_window_is_the_calendar_minute_not_a_sliding_one() {
    let api = TestApp::new().await;
    // start_time() is 30 s into a minute: 100 now, then 29 s later still the same window.
    for _ in 0..100 {
        api.get("/streams", &Keys::test_a())
            .await
            .assert_status(200);
    }
    api.advance(Duration::seconds(29));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(429, "rate_limited");
    api.advance(Duration::seconds(1));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limit_is_exact_under_concurrency() {
    let api = std::sync::Arc::new(TestApp::new().await);
    let statuses = concurrently(150, |i| {
        let api = api.clone();
        async move {
            let key = if i % 2 == 0 {
                Keys::test_a()
            } else {
                Keys::test_a2()
            };
            api.get("/streams", &key).await.status.as_u16()
        }
    })
    .await;
    assert_eq!(statuses.get(&200), Some(&100));
    assert_eq!(statuses.get(&429), Some(&50));
}

#[tokio::test]
async fn requests_refused_by_scope_or_plan_still_count() {
    // The rate limit comes before the scope check and the plan gate (docs/request-pipeline.md, "The order of checks").
    let api = TestApp::new().await;
    for _ in 0..50 {
        api.get("/streams", &Keys::only("analytics:read"))
            .await
            .assert_error(403, "insufficient_scope");
    }
    let free = TestApp::new().await;
    for _ in 0..100 {
        free.get("/streams", &Keys::live_free())
            .await
            .assert_error(402, "plan_required");
    }
    // The free brand's budget is spent by its 402s, even for its exempt test key.
    free.get("/streams", &Keys::test_free())
        .await
        .assert_error(429, "rate_limited");
    for _ in 0..50 {
        api.get("/streams", &Keys::test_a())
            .await
            .assert_status(200);
    }
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(429, "rate_limited");
    // Over the budget, rate_limited answers before the scope is looked at.
    api.get("/streams", &Keys::only("analytics:read"))
        .await
        .assert_error(429, "rate_limited");
}
