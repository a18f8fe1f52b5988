//! `POST /shows`' checks: the stream's fields answer exactly as `POST /streams` answers them,
//! then `starts_at` and `remind_minutes_before` with their bounds, in the documented order;
//! a refused request stores nothing; `Idempotency-Key` replays.

use super::*;

/// The error of an answer: status, code, message.
fn error_of(r: &Response) -> (u16, String, String) {
    (
        r.status.as_u16(),
        r.code().to_owned(),
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[tokio::test]
async fn the_stream_fields_are_refused_exactly_as_post_streams_refuses_them() {
    let api = TestApp::new().await;
    let destination = |key: &str| {
        json!({"platform": "youtube", "ingest_url": "rtmp://a.rtmp.youtube.com/live2",
               "stream_key": key})
    };
    let cases: Vec<(String, Value)> = vec![
        (Keys::test_a(), json!({"creator_id": "é".repeat(65)})),
        (Keys::test_a(), json!({"creator_id": 12})),
        (Keys::test_a(), json!({"creator_id": "avt_nobody"})),
        (Keys::test_a(), json!({"product_name": "ü".repeat(201)})),
        (Keys::test_a(), json!({"product_name": "  \t "})),
        (Keys::test_a(), json!({"platform": "TikTok"})),
        (Keys::test_a(), json!({"platform": ["tiktok"]})),
        (Keys::test_a(), json!({"duration_minutes": 0})),
        (Keys::test_a(), json!({"duration_minutes": 481})),
        (Keys::test_a(), json!({"duration_minutes": 10.5})),
        (Keys::test_a(), json!({"script": "ß".repeat(50_001)})),
        (Keys::test_a(), json!({"vertical": "gaming"})),
        (
            Keys::test_a(),
            json!({"vertical": "gaming", "duration_minutes": 0}),
        ),
        (Keys::test_gaming(), json!({})),
        (Keys::test_a(), json!({"record": "yes"})),
        (Keys::test_a(), json!({"destinations": "youtube"})),
        (Keys::test_a(), json!({"destinations": [destination("")]})),
        (
            Keys::test_a(),
            json!({"destinations": [{"platform": "myspace", "ingest_url": "rtmp://x.example/app", "stream_key": "k"}]}),
        ),
        (
            Keys::test_a(),
            json!({"destinations": [destination("k1"), destination("k2")], "record": "yes"}),
        ),
        (Keys::test_a(), json!({"product_name": null})),
        (Keys::live_a(), json!({"duration_minutes": null})),
        (Keys::live_free(), json!({})),
    ];
    for (key, overrides) in cases {
        let mut stream_body = show_body(&api, overrides.clone());
        stream_body.as_object_mut().unwrap().remove("starts_at");
        let expected = api.post("/streams", &key, stream_body).await;
        assert!(expected.status.is_client_error(), "{overrides}");
        let got = schedule(&api, &key, overrides.clone()).await;
        let shown = overrides.to_string().chars().take(80).collect::<String>();
        assert_eq!(error_of(&got), error_of(&expected), "{shown}");
    }
    // Nothing was scheduled by a refused request.
    for key in [Keys::test_a(), Keys::live_a()] {
        assert_eq!(api.get("/shows", &key).await.body["total"], 0);
    }
}

#[tokio::test]
async fn starts_at_and_the_reminder_are_checked_with_their_bounds() {
    let api = TestApp::new().await;
    let now = api.now();
    let refused: Vec<Value> = vec![
        json!({"starts_at": 1_800_000_000}),
        json!({"starts_at": "tomorrow"}),
        json!({"starts_at": "2026-03-02"}),
        json!({"starts_at": now.to_rfc3339()}),
        json!({"starts_at": (now + TimeDelta::seconds(59)).to_rfc3339()}),
        json!({"starts_at": (now - TimeDelta::hours(1)).to_rfc3339()}),
        json!({"starts_at": (now + TimeDelta::days(30) + TimeDelta::seconds(1)).to_rfc3339()}),
        json!({"remind_minutes_before": 0}),
        json!({"remind_minutes_before": 1441}),
        json!({"remind_minutes_before": 1.5}),
        json!({"remind_minutes_before": "10"}),
        json!({"remind_minutes_before": true}),
    ];
    for overrides in refused {
        let r = schedule(&api, &Keys::test_a(), overrides.clone()).await;
        r.assert_error(400, "invalid_fields");
        let field = overrides
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&field),
            "{overrides}: {}",
            r.body
        );
    }
    assert_eq!(api.get("/shows", &Keys::test_a()).await.body["total"], 0);
    let accepted: Vec<Value> = vec![
        json!({"starts_at": (now + TimeDelta::seconds(60)).to_rfc3339()}),
        json!({"starts_at": (now + TimeDelta::days(30)).to_rfc3339()}),
        json!({"starts_at": (now + TimeDelta::hours(2)).with_timezone(
            &chrono::FixedOffset::east_opt(2 * 3600).unwrap()).to_rfc3339()}),
        json!({"remind_minutes_before": 1}),
        json!({"remind_minutes_before": 1440}),
        json!({"remind_minutes_before": null}),
    ];
    for overrides in accepted {
        let r = schedule(&api, &Keys::test_a(), overrides.clone()).await;
        r.assert_status(201);
        assert_eq!(r.body["status"], "scheduled", "{overrides}");
        assert_eq!(r.body["stream_id"], Value::Null);
        assert_eq!(r.body["error"], Value::Null);
        assert_eq!(r.body["test"], true);
    }
    let r = schedule(&api, &Keys::test_a(), json!({"remind_minutes_before": 15})).await;
    assert_eq!(r.body["remind_minutes_before"], 15);
    let r = schedule(&api, &Keys::test_a(), json!({})).await;
    assert_eq!(r.body["remind_minutes_before"], Value::Null);
}

#[tokio::test]
async fn checks_come_in_order_missing_then_fields_then_time_then_vertical_and_creator() {
    let api = TestApp::new().await;
    // Every missing field at once, starts_at among them.
    let r = api
        .post("/shows", &Keys::test_a(), json!({"platform": "tiktok"}))
        .await;
    r.assert_error(400, "missing_fields");
    assert_eq!(
        r.body["error"]["message"],
        "Missing required fields: creator_id, product_name, starts_at."
    );
    // A missing field before an invalid one.
    schedule(
        &api,
        &Keys::test_a(),
        json!({"starts_at": null, "duration_minutes": 0}),
    )
    .await
    .assert_error(400, "missing_fields");
    // The stream's fields before starts_at, starts_at before the reminder.
    let r = schedule(
        &api,
        &Keys::test_a(),
        json!({"duration_minutes": 0, "starts_at": "soon", "remind_minutes_before": 0}),
    )
    .await;
    r.assert_error(400, "invalid_fields");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duration_minutes")
    );
    let r = schedule(
        &api,
        &Keys::test_a(),
        json!({"starts_at": "soon", "remind_minutes_before": 0}),
    )
    .await;
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("starts_at")
    );
    // starts_at before the vertical, the vertical before the creator.
    schedule(
        &api,
        &Keys::test_a(),
        json!({"starts_at": "soon", "vertical": "gaming"}),
    )
    .await
    .assert_error(400, "invalid_fields");
    schedule(
        &api,
        &Keys::test_a(),
        json!({"vertical": "gaming", "creator_id": "avt_nobody"}),
    )
    .await
    .assert_error(403, "vertical_mismatch");
    // The concurrency limit is the start's: three live test streams do not refuse a show.
    for _ in 0..3 {
        api.start_test_stream(&Keys::test_a()).await;
    }
    api.start(&Keys::test_a(), json!({}))
        .await
        .assert_error(429, "concurrency_limit");
    schedule(&api, &Keys::test_a(), json!({}))
        .await
        .assert_status(201);
}

#[tokio::test]
async fn an_idempotency_key_replays_the_show_and_refuses_another_body() {
    let api = TestApp::new().await;
    let body = show_body(&api, json!({}));
    let send = |body: Value| {
        let api = &api;
        async move {
            let request = axum::http::Request::builder()
                .method("POST")
                .uri("/api/v1/shows")
                .header("authorization", format!("Bearer {}", Keys::test_a()))
                .header("content-type", "application/json")
                .header("idempotency-key", "show-1")
                .body(axum::body::Body::from(body.to_string()))
                .unwrap();
            api.send(request).await
        }
    };
    let first = send(body.clone()).await;
    first.assert_status(201);
    let again = send(body.clone()).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.body["show_id"], first.body["show_id"]);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    let mut other = body;
    other["product_name"] = json!("Night Cream");
    send(other)
        .await
        .assert_error(422, "idempotency_key_mismatch");
    assert_eq!(again.bytes, first.bytes);
    assert_eq!(api.get("/shows", &Keys::test_a()).await.body["total"], 1);
}
