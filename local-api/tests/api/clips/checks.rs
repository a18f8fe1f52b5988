//! `POST /streams/{id}/clips`'s checks in their order: the body, the stream, the recording's
//! state, the range against the recording, the count; and its Idempotency-Key.

use super::*;

#[tokio::test]
async fn the_body_comes_first_then_the_stream_then_the_recording_then_the_range() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let unknown = uuid::Uuid::new_v4().to_string();
    // Not an object, or a time absent or null: `missing_fields`, before the stream is looked up.
    for (path_id, raw) in [
        (unknown.as_str(), "[1, 2]"),
        (unknown.as_str(), "not json"),
        ("not-a-uuid", "\"a string\""),
    ] {
        let r = api
            .call_raw(
                "POST",
                &format!("/streams/{path_id}/clips"),
                Some(&Keys::test_a()),
                Some(raw),
            )
            .await;
        r.assert_error(400, "missing_fields");
    }
    for body in [
        json!({}),
        json!({"start_seconds": 1}),
        json!({"end_seconds": 5}),
        json!({"start_seconds": null, "end_seconds": 5}),
    ] {
        ask(&api, &unknown, body)
            .await
            .assert_error(400, "missing_fields");
    }
    // Each constraint: `invalid_fields`, still before the stream.
    for body in [
        json!({"start_seconds": "1", "end_seconds": 5}),
        json!({"start_seconds": 1, "end_seconds": true}),
        json!({"start_seconds": -0.5, "end_seconds": 5}),
        json!({"start_seconds": 5, "end_seconds": 5}),
        json!({"start_seconds": 6, "end_seconds": 5}),
        json!({"start_seconds": 0, "end_seconds": 0.999}),
        json!({"start_seconds": 0, "end_seconds": 180.001}),
        json!({"start_seconds": 0, "end_seconds": 5, "title": ""}),
        json!({"start_seconds": 0, "end_seconds": 5, "title": 7}),
        json!({"start_seconds": 0, "end_seconds": 5, "title": "x".repeat(201)}),
    ] {
        ask(&api, &unknown, body.clone())
            .await
            .assert_error(400, "invalid_fields");
    }
    // A valid body: the stream decides.
    let valid = json!({"start_seconds": 0, "end_seconds": 5});
    ask(&api, &unknown, valid.clone())
        .await
        .assert_error(404, "not_found");
    ask(&api, "not-a-uuid", valid.clone())
        .await
        .assert_error(404, "not_found");
    api.post(
        &format!("/streams/{id}/clips"),
        &Keys::test_b(),
        valid.clone(),
    )
    .await
    .assert_error(404, "not_found");
    // A stream without a recording is not found; one whose recording is not ready is refused.
    let unrecorded = api.start_test_stream(&Keys::test_a()).await;
    ask(&api, &unrecorded, valid.clone())
        .await
        .assert_error(404, "not_found");
    let r = api.start(&Keys::test_a(), json!({"record": true})).await;
    let recording = r.body["stream_id"].as_str().unwrap().to_owned();
    ask(&api, &recording, valid.clone())
        .await
        .assert_error(409, "recording_not_ready");
    // Past the recording's 62 s: `invalid_fields`; up to its end, a clip.
    ask(&api, &id, json!({"start_seconds": 50, "end_seconds": 62.5}))
        .await
        .assert_error(400, "invalid_fields");
    let r = ask(
        &api,
        &id,
        json!({"start_seconds": 2.5, "end_seconds": 62, "title": "é".repeat(200)}),
    )
    .await;
    r.assert_status(202);
    assert_eq!(r.body["start_seconds"], 2.5);
    assert_eq!(
        r.body["end_seconds"], 62,
        "as asked: a whole number stays one"
    );
    assert_eq!(r.body["title"], "é".repeat(200));
}

#[tokio::test]
async fn a_new_clip_is_pending_with_its_location() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let r = ask(&api, &id, json!({"start_seconds": 10, "end_seconds": 20})).await;
    r.assert_status(202);
    let clip_id = r.body["clip_id"].as_str().unwrap().to_owned();
    assert!(hosting_domain::clip::is_clip_id(&clip_id), "{clip_id}");
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/streams/{id}/clips/{clip_id}").as_str())
    );
    let expected = json!({
        "clip_id": clip_id, "stream_id": id, "title": null, "start_seconds": 10,
        "end_seconds": 20, "status": "pending", "duration_seconds": null, "size_bytes": null,
        "url": null, "url_expires_at": null, "error": null,
        "created_at": r.body["created_at"],
    });
    assert_eq!(r.body, expected);
    assert_eq!(clip(&api, &id, &clip_id).await, expected);
    // Another brand, or an id that is not a clip's: not found.
    for path in [
        format!("/streams/{id}/clips/clp_{}", "0".repeat(32)),
        format!("/streams/{id}/clips/{}", clip_id.to_uppercase()),
        format!("/streams/{}/clips/{clip_id}", uuid::Uuid::new_v4()),
    ] {
        api.get(&path, &Keys::test_a())
            .await
            .assert_error(404, "not_found");
        api.delete(&path, &Keys::test_a())
            .await
            .assert_error(404, "not_found");
    }
    api.get(&format!("/streams/{id}/clips/{clip_id}"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
    api.get(&format!("/streams/{id}/clips"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn the_fifty_first_clip_of_a_stream_is_refused_deleted_ones_counted() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let mut first = String::new();
    for n in 0..hosting_domain::clip::MAX_CLIPS_PER_STREAM {
        // Oldest first is by creation time.
        api.advance(Duration::milliseconds(1));
        let clip_id = ask_ok(&api, &id, f64::from(n), f64::from(n) + 2.0).await;
        if n == 0 {
            first = clip_id;
        }
    }
    api.delete(&format!("/streams/{id}/clips/{first}"), &Keys::test_a())
        .await
        .assert_status(200);
    let r = ask(&api, &id, json!({"start_seconds": 0, "end_seconds": 3})).await;
    r.assert_error(400, "invalid_fields");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("50"));
    let listed = api
        .get(&format!("/streams/{id}/clips"), &Keys::test_a())
        .await;
    let clips = listed.body["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 50);
    assert_eq!(clips[0]["clip_id"], first.as_str(), "oldest first");
    assert_eq!(clips[0]["status"], "deleted");
    // Another stream has its own 50.
    let other = ready_recording(&api).await;
    ask_ok(&api, &other, 0.0, 3.0).await;
}

#[tokio::test]
async fn an_idempotency_key_replays_the_first_answer_for_its_stream() {
    let api = TestApp::new().await;
    let id = ready_recording(&api).await;
    let send = |stream: String, body: Value, key: &'static str| {
        let api = &api;
        async move {
            let request = axum::http::Request::builder()
                .method("POST")
                .uri(format!("/api/v1/streams/{stream}/clips"))
                .header("authorization", format!("Bearer {}", Keys::test_a()))
                .header("idempotency-key", key)
                .body(axum::body::Body::from(body.to_string()))
                .unwrap();
            api.send(request).await
        }
    };
    let body = json!({"start_seconds": 1, "end_seconds": 9});
    let first = send(id.clone(), body.clone(), "clip-1").await;
    first.assert_status(202);
    let again = send(id.clone(), body.clone(), "clip-1").await;
    again.assert_status(202);
    assert_eq!(again.bytes, first.bytes, "the first answer, byte for byte");
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.header("location"), first.header("location"));
    send(
        id.clone(),
        json!({"start_seconds": 2, "end_seconds": 9}),
        "clip-1",
    )
    .await
    .assert_error(422, "idempotency_key_mismatch");
    // The stream in the path is part of the request: the same key and body for another
    // stream is another request under a used key.
    let other = ready_recording(&api).await;
    send(other.clone(), body.clone(), "clip-1")
        .await
        .assert_error(422, "idempotency_key_mismatch");
    send(other, body, "clip-2").await.assert_status(202);
    let listed = api
        .get(&format!("/streams/{id}/clips"), &Keys::test_a())
        .await;
    assert_eq!(
        listed.body["clips"].as_array().unwrap().len(),
        1,
        "one clip made"
    );
}
