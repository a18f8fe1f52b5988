//! DynamoDB round trips per endpoint on a warm instance (`TEST_BACKEND=dynamodb`, as
//! scripts/test.sh runs it), counted by an SDK interceptor: the total requests and the
//! sequential ones (the longest chain of requests each starting after the previous ended).
//! Budgets: at most 2 sequential for every read endpoint and for starting a stream (the
//! brand's counters are read alongside the count, then the transaction), a recorded start
//! and the read of a `ready` recording included (its URL presigned with no request). With
//! `ROUND_TRIPS_REPORT=1` it prints the table published in BENCHMARKS.md.

use std::sync::Arc;

use hosting_app::seed::Seed;
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::clock::ManualClock;
use hosting_embedded::EmbeddedQueue;
use hosting_runtime::{LocalQueue, Parts, Runtime};
use hosting_support::config::{Config, StoreKind};
use serde_json::json;
use tower::ServiceExt;

use crate::common::store_log::{Recorder, sequential};
use crate::common::*;

/// (method, path, body, budget of sequential round trips (`None`: not budgeted), status)
type Case = (
    &'static str,
    String,
    Option<serde_json::Value>,
    Option<usize>,
    u16,
);

#[tokio::test]
#[ignore = "needs DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_round_trips_per_endpoint_stay_within_budget() {
    let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
    let recorder = Recorder::default();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .interceptor(recorder.clone())
            .build(),
    );
    let store = DynamoStore::new(client, format!("rt-{}", uuid::Uuid::new_v4().simple()));
    store.create_table().await.unwrap();
    // Recordings in an S3 that nothing listens for (port 9, discard): presigning a download
    // must need no request, or the read would show no URL.
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .endpoint_url("http://127.0.0.1:9")
            .force_path_style(true)
            .build(),
    );
    let recordings = hosting_aws::s3::S3Recordings::new(s3, "round-trips".to_owned());
    let config = Config::from_lookup(StoreKind::Embedded, |name| {
        (name == "RECORDINGS_BUCKET").then(|| "round-trips".to_owned())
    })
    .unwrap();
    // The app's clock moves only as the cases do: on a machine slow enough for the cases to
    // outlast the key cache (5 s), a real clock would add a key read to whichever case came
    // after, which is the cache's cost, not the endpoint's.
    let clock = ManualClock::new(chrono::Utc::now());
    let runtime = Runtime::assemble(
        config,
        Arc::new(clock.clone()),
        None,
        Parts {
            store: Arc::new(store),
            embedded: None,
            queue: LocalQueue::Embedded(EmbeddedQueue::new()),
            clip_queue: None,
            scheduler: None,
            recordings: Some(Arc::new(recordings)),
            vault: None,
        },
    );
    // The base fixtures, and history with a stream in each final status.
    let mut seed = base_seed(chrono::Utc::now());
    let past = (chrono::Utc::now() - chrono::Duration::days(3)).to_rfc3339();
    seed["streams"] = json!(["ended", "error"].map(|status| json!({
        "id": uuid::Uuid::new_v4(), "brand_id": "brand_a", "status": status,
        "platform": "kick", "vertical": "live-commerce", "creator_id": CREATOR_AVA,
        "product_name": "P", "source": "dashboard", "room_name": null, "viewer_count": 0,
        "test": false, "created_at": past, "started_at": past, "ended_at": past})));
    Seed::from_json(&seed.to_string())
        .unwrap()
        .load(&*runtime.app.store)
        .await
        .unwrap();
    let service = local_api::service(runtime.app.clone());
    let call = |method: &'static str, path: String, body: Option<serde_json::Value>| {
        let service = service.clone();
        async move {
            let request = axum::http::Request::builder()
                .method(method)
                .uri(format!("/api/v1{path}"))
                .header("authorization", format!("Bearer {}", Keys::test_a()))
                .body(axum::body::Body::from(
                    body.map(|b| b.to_string()).unwrap_or_default(),
                ))
                .unwrap();
            let response = service.oneshot(request).await.unwrap();
            let status = response.status().as_u16();
            let bytes = http_body_util::BodyExt::collect(response.into_body())
                .await
                .unwrap()
                .to_bytes();
            (
                status,
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_default(),
            )
        }
    };
    let start_body = json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 5});

    // A cold instance: the first request reads the key, then its brand while counting the
    // request, then the page as a warm instance does (the brand's counters, alongside the
    // creators catalog, then the positions): 4 in a row.
    recorder.take();
    let (status, _) = call("GET", "/streams".into(), None).await;
    assert_eq!(status, 200);
    let cold = recorder.take();
    let cold_sequential = sequential(&cold);
    let cold_operations: Vec<&str> = cold.iter().map(|c| c.operation.as_str()).collect();
    assert!(
        cold_sequential <= 4,
        "cold GET /streams: {cold_sequential} sequential round trips ({cold_operations:?})"
    );

    // Warm the instance: key cache, creators catalog, and the error set of the block that
    // `status=error` pages read (an error is final, so the set is cached while its count
    // matches; the first read of a block is one more round trip).
    call("GET", "/creators".into(), None).await;
    call("GET", "/streams?status=error".into(), None).await;
    let (_, created) = call("POST", "/streams".into(), Some(start_body.clone())).await;
    let id = created["stream_id"].as_str().unwrap().to_owned();
    let (_, hook) = call(
        "POST",
        "/webhooks".into(),
        Some(json!({"url": "https://hooks.example.com/x", "events": ["stream.ended"]})),
    )
    .await;
    let hook_id = hook["webhook_id"].as_str().unwrap().to_owned();
    // A recorded test stream, ended, its recording `ready`: a read presigns its URL.
    let mut recorded_body = start_body.clone();
    recorded_body["record"] = json!(true);
    let (_, recorded) = call("POST", "/streams".into(), Some(recorded_body.clone())).await;
    let recorded = recorded["stream_id"].as_str().unwrap().to_owned();
    call("DELETE", format!("/streams/{recorded}"), None).await;
    // Its file written and the recording `ready`, as the relay of its end does (that write is
    // the relay's, not measured here, and this S3 has nothing listening).
    let ended = runtime
        .app
        .streams()
        .get_stream(recorded.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let written = ended
        .with_test_recording_written(chrono::Utc::now())
        .expect("a test recording waiting for its file");
    runtime
        .app
        .streams()
        .update_stream_destinations(&ended, &written, chrono::Utc::now(), None, &[], None)
        .await
        .unwrap();
    let mut show_body = start_body.clone();
    show_body["starts_at"] = json!((chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339());
    let (_, show) = call("POST", "/shows".into(), Some(show_body.clone())).await;
    let show = show["show_id"].as_str().unwrap().to_owned();
    call("POST", "/shows".into(), Some(show_body.clone())).await;
    recorder.take();

    let cases: Vec<Case> = vec![
        ("GET", "/".into(), None, Some(2), 200),
        ("GET", "/creators".into(), None, Some(2), 200),
        ("GET", format!("/streams/{id}"), None, Some(2), 200),
        ("GET", format!("/streams/{recorded}"), None, Some(2), 200),
        ("GET", "/streams".into(), None, Some(2), 200),
        (
            "GET",
            "/streams?status=live&offset=1".into(),
            None,
            Some(2),
            200,
        ),
        ("GET", "/streams?status=ended".into(), None, Some(2), 200),
        (
            "GET",
            "/streams?status=error&offset=0".into(),
            None,
            Some(2),
            200,
        ),
        ("GET", "/analytics?period=30d".into(), None, Some(2), 200),
        (
            "GET",
            format!("/analytics?stream_id={id}"),
            None,
            Some(2),
            200,
        ),
        ("GET", "/webhooks".into(), None, Some(2), 200),
        ("GET", format!("/shows/{show}"), None, Some(2), 200),
        // The list's counts, its month's counts, the page.
        ("GET", "/shows".into(), None, Some(3), 200),
        (
            "GET",
            "/shows?status=scheduled&offset=1".into(),
            None,
            Some(3),
            200,
        ),
        ("POST", "/shows".into(), Some(show_body), None, 201),
        ("POST", "/streams".into(), Some(start_body), Some(2), 201),
        ("POST", "/streams".into(), Some(recorded_body), Some(2), 201),
        ("DELETE", format!("/streams/{id}"), None, None, 200),
        // Five destinations: their keys are one more item of the same transaction.
        (
            "POST",
            "/streams".into(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick",
                "duration_minutes": 5, "destinations": (0..5).map(|i| json!({"platform": "kick",
                "ingest_url": "rtmps://ingest.kick.example.com/app", "stream_key": format!("key-{i}")}))
                .collect::<Vec<_>>()}),
            ),
            Some(2),
            201,
        ),
        (
            "POST",
            "/webhooks".into(),
            Some(json!({"url": "https://hooks.example.com/y", "events": ["stream.ended"]})),
            None,
            201,
        ),
        ("DELETE", format!("/webhooks?id={hook_id}"), None, None, 200),
    ];
    let mut report =
        String::from("| endpoint | DynamoDB requests | sequential | budget |\n|---|---|---|---|\n");
    for (method, path, body, budget, expected) in cases {
        clock.advance(chrono::Duration::milliseconds(10));
        let (status, body) = call(method, path.clone(), body).await;
        assert_eq!(status, expected, "{method} {path}: {body}");
        if path.ends_with(&recorded) {
            assert!(body["recording"]["url"].is_string(), "{body}");
        }
        let calls = recorder.take();
        let sequential = sequential(&calls);
        let operations: Vec<&str> = calls.iter().map(|c| c.operation.as_str()).collect();
        let shown = path
            .replace(&id, "{id}")
            .replace(&recorded, "{id of a ready recording}")
            .replace(&hook_id, "{webhook_id}");
        report.push_str(&format!(
            "| `{method} {shown}` | {} ({}) | {sequential} | {} |\n",
            calls.len(),
            operations.join(", "),
            budget.map_or("-".to_owned(), |b| format!("<= {b}"))
        ));
        if let Some(budget) = budget {
            assert!(
                sequential <= budget,
                "{method} {path}: {sequential} sequential round trips ({operations:?})"
            );
        }
    }
    report.push_str(&format!(
        "| `GET /streams`, first request of a cold instance | {} ({}) | {cold_sequential} | <= 4 |\n",
        cold.len(),
        cold_operations.join(", ")
    ));
    if std::env::var("ROUND_TRIPS_REPORT").is_ok() {
        println!("{report}");
    }
}
