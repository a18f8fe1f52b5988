//! Every check of a destination with its code and in its order, at start and on
//! `POST /streams/{id}/destinations`; what a destination shows; and the idempotency fingerprint.

use super::*;

#[tokio::test]
async fn absent_null_and_empty_are_no_destinations() {
    let api = TestApp::new().await;
    for destinations in [Value::Null, json!([])] {
        let r = api
            .start(&Keys::test_a(), json!({"destinations": destinations}))
            .await;
        r.assert_status(201);
        assert_eq!(r.body["destinations"], json!([]));
        let id = r.body["stream_id"].as_str().unwrap();
        let detail = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
        assert_eq!(detail.body["destinations"], json!([]));
        api.post(
            &format!("/test_helpers/streams/{id}/finish"),
            &Keys::test_a(),
            json!({}),
        )
        .await
        .assert_status(200);
    }
    let id = api.start_test_stream(&Keys::test_a()).await;
    let list = api.get("/streams", &Keys::test_a()).await;
    assert!(list.body["streams"][0].get("destinations").is_none());
    let analytics = api
        .get(&format!("/analytics?stream_id={id}"), &Keys::test_a())
        .await;
    assert!(analytics.body["streams"][0].get("destinations").is_none());
}

/// (destinations, status, code, a part of the message).
fn refused() -> Vec<(Value, u16, &'static str, &'static str)> {
    let ok = destination("youtube", YOUTUBE_INGEST, "key-1");
    let with = |field: &str, value: Value| {
        let mut item = ok.clone();
        item[field] = value;
        json!([item])
    };
    let six: Vec<Value> = (0..6)
        .map(|i| destination("tiktok", TIKTOK_INGEST, &format!("key-{i}")))
        .collect();
    vec![
        // 1. The array and its items.
        (
            json!({"platform": "tiktok"}),
            400,
            "invalid_fields",
            "destinations",
        ),
        (json!("rtmp://x"), 400, "invalid_fields", "destinations"),
        (Value::Array(six), 400, "invalid_fields", "at most 5"),
        (
            json!([ok.clone(), 7]),
            400,
            "invalid_fields",
            "destinations[1]",
        ),
        // 2. Missing fields, over every item before any later check.
        (
            json!([{"platform": "tiktok", "ingest_url": "ftp://x"}, {"stream_key": "k"}]),
            400,
            "missing_fields",
            "destinations[0].stream_key",
        ),
        (
            json!([ok.clone(), {"platform": "tiktok", "ingest_url": null, "stream_key": "k"}]),
            400,
            "missing_fields",
            "destinations[1].ingest_url",
        ),
        // 3. Platforms.
        (
            with("platform", json!("TikTok")),
            400,
            "invalid_fields",
            "destinations[0].platform",
        ),
        (
            with("platform", json!("myspace")),
            400,
            "invalid_fields",
            "destinations[0].platform",
        ),
        (
            with("platform", json!(3)),
            400,
            "invalid_fields",
            "destinations[0].platform",
        ),
        // 4. Ingest URLs, keys and repeats.
        (
            with("ingest_url", json!("https://a.rtmp.youtube.com/live2")),
            400,
            "invalid_fields",
            "destinations[0].ingest_url",
        ),
        (
            with(
                "ingest_url",
                json!("rtmp://user:pw@a.rtmp.youtube.com/live2"),
            ),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://a.rtmp.youtube.com/live2#x")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://127.0.0.1/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://0x7f.1/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://169.254.169.254/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://[::1]/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://localhost/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("rtmp://ingest.internal/live")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!("a.rtmp.youtube.com/live2")),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with(
                "ingest_url",
                json!(format!("rtmp://a.example.com/{}", "x".repeat(500))),
            ),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("ingest_url", json!(42)),
            400,
            "invalid_fields",
            "ingest_url",
        ),
        (
            with("stream_key", json!("")),
            400,
            "invalid_fields",
            "destinations[0].stream_key",
        ),
        (
            with("stream_key", json!("has space")),
            400,
            "invalid_fields",
            "stream_key",
        ),
        (
            with("stream_key", json!("clé")),
            400,
            "invalid_fields",
            "stream_key",
        ),
        (
            with("stream_key", json!("k".repeat(257))),
            400,
            "invalid_fields",
            "stream_key",
        ),
        (
            with("stream_key", json!(1234)),
            400,
            "invalid_fields",
            "stream_key",
        ),
        (
            json!([ok.clone(), destination("tiktok", YOUTUBE_INGEST, "key-1")]),
            400,
            "invalid_fields",
            "destinations[1]",
        ),
    ]
}

#[tokio::test]
async fn every_check_at_start_answers_its_code_and_creates_nothing() {
    let api = TestApp::new().await;
    for key in [Keys::test_a(), Keys::live_a()] {
        for (destinations, status, code, names) in refused() {
            let r = api
                .start(&key, json!({"destinations": destinations.clone()}))
                .await;
            r.assert_error(status, code);
            let message = r.body["error"]["message"].as_str().unwrap();
            assert!(message.contains(names), "{destinations}: {message}");
            assert!(!message.contains("key-1"), "a key in {message}");
        }
    }
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 0);
    assert_eq!(api.active_streams("brand_a").await, 0);
}

#[tokio::test]
async fn destinations_are_checked_after_the_creator_and_before_the_concurrency_limit() {
    let api = TestApp::new().await;
    let bad = json!([destination("tiktok", "rtmp://10.0.0.1/x", "k1")]);
    // An unknown creator answers before a bad destination.
    api.start(
        &Keys::test_a(),
        json!({"creator_id": "avt_nobody", "destinations": bad.clone()}),
    )
    .await
    .assert_error(400, "invalid_creator");
    // A bad field of the seed's answers before destinations are looked at.
    api.start(
        &Keys::test_a(),
        json!({"product_name": " ", "destinations": bad.clone()}),
    )
    .await
    .assert_error(400, "invalid_fields");
    // With every slot taken, a bad destination still answers 400.
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    api.start(&Keys::test_a(), json!({"destinations": bad}))
        .await
        .assert_error(400, "invalid_fields");
    api.start(&Keys::test_a(), json!({"destinations": two_destinations()}))
        .await
        .assert_error(429, "concurrency_limit");
}

#[tokio::test]
async fn a_destination_shows_its_last_four_characters_and_never_its_key() {
    let api = TestApp::new().await;
    let r = api
        .start(
            &Keys::live_a(),
            json!({"destinations": [
                destination("youtube", YOUTUBE_INGEST, "yt-key-SECRET-0001-abcd"),
                destination("kick", "rtmps://fa723fc1b171.global-contribute.live-video.net/app", "abc"),
            ]}),
        )
        .await;
    // No LiveKit: the launch fails, but the stream and its destinations exist.
    r.assert_error(502, "launch_failed");
    let id = api.get("/streams", &Keys::live_a()).await.body["streams"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let detail = live_detail(&api, &id).await;
    let shown = detail["destinations"].as_array().unwrap();
    assert_eq!(shown.len(), 2);
    assert_eq!(
        field_names(&shown[0]),
        [
            "destination_id",
            "ended_at",
            "error",
            "ingest_url",
            "platform",
            "started_at",
            "status",
            "stream_key_last4"
        ]
    );
    assert_eq!(shown[0]["stream_key_last4"], "abcd");
    assert_eq!(shown[1]["stream_key_last4"], "abc");
    assert_eq!(shown[0]["platform"], "youtube");
    assert_eq!(shown[0]["ingest_url"], YOUTUBE_INGEST);
    let id_pattern = |v: &Value| {
        let id = v["destination_id"].as_str().unwrap();
        id.len() == 36
            && id.starts_with("dst_")
            && id[4..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    };
    assert!(shown.iter().all(id_pattern), "{shown:?}");
    // It never went live: its destinations failed with it, with no error text.
    for d in shown {
        assert_eq!(d["status"], "failed");
        assert_eq!(d["error"], Value::Null);
        assert!(d["ended_at"].is_string());
    }
    assert!(!detail.to_string().contains("SECRET"));
}

#[tokio::test]
async fn the_idempotency_fingerprint_covers_destinations() {
    let api = TestApp::new().await;
    let body = |destinations: Value| {
        json!({"creator_id": CREATOR_AVA, "product_name": "Glow Serum", "platform": "tiktok",
            "destinations": destinations})
    };
    let send = |body: Value| {
        let request = axum::http::Request::builder()
            .method("POST")
            .uri("/api/v1/streams")
            .header("authorization", format!("Bearer {}", Keys::test_a()))
            .header("idempotency-key", "start-with-destinations")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        api.send(request)
    };
    let first = send(body(two_destinations())).await;
    first.assert_status(201);
    let again = send(body(two_destinations())).await;
    again.assert_status(201);
    assert_eq!(again.body, first.body);
    send(body(json!([destination(
        "tiktok",
        TIKTOK_INGEST,
        "other-key"
    )])))
    .await
    .assert_error(422, "idempotency_key_mismatch");
}
