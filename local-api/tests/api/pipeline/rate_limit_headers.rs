//! `RateLimit-Policy` and `RateLimit` (docs/rate-limits.md, "Headers"): on every answer to a keyed
//! request that passed authentication, from the same counter as the limit; never on `401` or the
//! public endpoints.

use chrono::Duration;
use serde_json::json;

use crate::common::*;

fn unlimited(r: &Response) {
    assert!(r.header("ratelimit").is_none() && r.header("ratelimit-policy").is_none());
}

#[tokio::test]
async fn counts_down_from_99_across_reads_and_writes() {
    let api = TestApp::new().await;
    // The suite's clock stands at 12:00:30: 30 seconds of the minute are left.
    let key = Keys::test_a();
    let r = api.get("/streams", &key).await;
    assert_eq!(standing(&r), (99, 30));
    let id = api.start_test_stream(&key).await; // 98
    let r = api.get(&format!("/streams/{id}"), &key).await;
    assert_eq!(standing(&r), (97, 30));
    // Another key of the brand draws on the same budget.
    let r = api.get("/analytics", &Keys::test_a2()).await;
    assert_eq!(standing(&r), (96, 30));
    let r = api.delete(&format!("/streams/{id}"), &key).await;
    assert_eq!(standing(&r), (95, 30));
    let r = api
        .post(
            "/webhooks",
            &key,
            json!({"url": "https://hooks.example.com/a", "events": ["stream.ended"]}),
        )
        .await;
    assert_eq!(standing(&r), (94, 30));
    // Another brand has its own.
    assert_eq!(
        standing(&api.get("/streams", &Keys::test_b()).await),
        (99, 30)
    );
}

#[tokio::test]
async fn t_counts_the_seconds_left_in_the_calendar_minute() {
    let api = TestApp::new().await;
    api.advance(Duration::milliseconds(29_500)); // 12:00:59.5
    assert_eq!(standing(&api.get("/streams", &Keys::test_a()).await).1, 1);
    api.advance(Duration::milliseconds(500)); // 12:01:00: a new minute, a new budget
    assert_eq!(
        standing(&api.get("/streams", &Keys::test_a()).await),
        (99, 60)
    );
}

#[tokio::test]
async fn on_refusals_too_and_zero_on_429() {
    let api = TestApp::new().await;
    let r = api
        .start(&Keys::test_a(), json!({"platform": "myspace"}))
        .await;
    r.assert_error(400, "invalid_fields");
    assert_eq!(standing(&r).0, 99);
    let r = api.get("/streams", &Keys::only("analytics:read")).await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(standing(&r).0, 98);
    let r = api
        .get(
            "/streams/00000000-0000-4000-8000-000000000000",
            &Keys::test_a(),
        )
        .await;
    r.assert_error(404, "not_found");
    assert_eq!(standing(&r).0, 97);
    let r = api.get("/streams", &Keys::live_free()).await;
    r.assert_error(402, "plan_required");
    assert_eq!(standing(&r).0, 99, "brand_free's own budget");
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    let r = api.start(&Keys::test_a(), json!({})).await;
    r.assert_error(429, "concurrency_limit");
    assert_eq!(standing(&r).0, 93);
    for _ in 0..93 {
        api.get("/webhooks", &Keys::test_a())
            .await
            .assert_status(200);
    }
    for request in 0..3 {
        let r = if request % 2 == 0 {
            api.get("/streams", &Keys::test_a()).await
        } else {
            api.start(&Keys::test_a(), json!({})).await
        };
        r.assert_error(429, "rate_limited");
        assert_eq!(standing(&r).0, 0);
        assert!(r.header("retry-after").is_none());
    }
}

#[tokio::test]
async fn never_on_401_or_public_endpoints() {
    let api = TestApp::new().await;
    let r = api.get("/streams", &Keys::revoked()).await;
    r.assert_error(401, "unauthorized");
    unlimited(&r);
    unlimited(&api.call("GET", "/streams", None, None).await);
    unlimited(&api.call("GET", "/", Some(&Keys::test_a()), None).await);
    unlimited(
        &api.call("GET", "/creators", Some(&Keys::test_a()), None)
            .await,
    );
    unlimited(&api.call("GET", "/openapi.json", None, None).await);
}

#[tokio::test]
async fn r_is_exact_across_instances() {
    let api = TestApp::new().await;
    let other = api.another_instance();
    let mut seen = Vec::new();
    for i in 0..6 {
        let r = if i % 2 == 0 {
            api.get("/streams", &Keys::test_a()).await
        } else {
            api.send_to(&other, "GET", "/streams", &Keys::test_a())
                .await
        };
        seen.push(standing(&r).0);
    }
    assert_eq!(seen, [99, 98, 97, 96, 95, 94]);
}
