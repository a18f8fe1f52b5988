//! The download path end to end with test keys: a test stream's recording is `processing` when
//! the stream ends and `ready` once its file (the MP4 the project ships) is written under the
//! stream's own key by the relay of its end, and its URL then downloads it; an expired or altered URL does not
//! (the local server's own signed URLs; moto's S3 checks no signature); `expired` past the
//! retention; and the file written under S3's faults.

use chrono::Duration;

use super::*;

/// A test stream recorded for `seconds`, then ended; its id.
async fn recorded_test_stream(api: &TestApp, seconds: i64) -> String {
    let (id, _) = start_recorded(api, &Keys::test_a(), json!({})).await;
    assert_eq!(
        detail(api, &Keys::test_a(), &id).await["recording"]["status"],
        "recording"
    );
    api.advance(Duration::seconds(seconds));
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    // `processing` until the relay of its end writes its file.
    relay(api).await;
    id
}

#[tokio::test]
async fn a_test_streams_recording_is_ready_only_once_its_file_downloads() {
    let api = TestApp::new().await;
    let (id, _) = start_recorded(&api, &Keys::test_a(), json!({})).await;
    api.advance(Duration::seconds(95));
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    // Ended, its file not written yet: `processing`, no URL, no event.
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "processing");
    assert!(shown["url"].is_null());
    assert!(
        !api.events_of(&id)
            .await
            .contains(&"stream.recording_ready".to_owned())
    );
    // The relay of its end writes the file, and only then is it `ready`: its URL downloads at
    // once.
    relay(&api).await;
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "ready");
    let (status, _) = download(&api, shown["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(
        shown["duration_seconds"],
        hosting_domain::recording::TEST_RECORDING_SECONDS,
        "the shipped file's length, not its live seconds"
    );
    assert_eq!(shown["size_bytes"], SHIPPED_MP4.len());
    let mut events = api.events_of(&id).await;
    events.sort();
    assert_eq!(
        events,
        ["stream.ended", "stream.recording_ready", "stream.started"]
    );
    // Written before the event is relayed.
    relay(&api).await;
    let url = shown["url"].as_str().unwrap().to_owned();
    let (status, bytes) = download(&api, &url).await;
    assert_eq!(status, 200);
    assert_eq!(bytes, SHIPPED_MP4);
    assert_eq!(&bytes[4..8], b"ftyp", "an MP4 file");
}

#[tokio::test]
async fn an_expired_or_altered_local_url_downloads_nothing() {
    if backend::is_dynamodb() {
        // S3 checks its own URLs; moto checks neither signature nor expiry. The presigned
        // URL's shape is checked in recordings::egress.
        return;
    }
    let api = TestApp::new().await;
    let id = recorded_test_stream(&api, 10).await;
    let other = recorded_test_stream(&api, 10).await;
    relay(&api).await;
    let url = detail(&api, &Keys::test_a(), &id).await["recording"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(download(&api, &url).await.0, 200);
    let altered = |from: &str, to: &str| url.replacen(from, to, 1);
    let signature = url.rsplit_once("signature=").unwrap().1;
    let flipped = format!(
        "{}{}",
        if signature.starts_with('0') { "1" } else { "0" },
        &signature[1..]
    );
    let expires = api.now() + Duration::seconds(3600);
    for tampered in [
        altered(signature, &flipped),
        altered(&id, &other),
        altered(
            &format!("expires={}", expires.timestamp()),
            &format!("expires={}", expires.timestamp() + 3600),
        ),
        altered("&signature=", "&sig="),
    ] {
        let (status, bytes) = download(&api, &tampered).await;
        assert_eq!(status, 404, "{tampered}");
        assert!(!bytes.starts_with(&SHIPPED_MP4[..8]));
    }
    // Past its lifetime the URL is dead; a new read hands out a live one.
    api.advance(Duration::seconds(3600));
    assert_eq!(download(&api, &url).await.0, 404);
    let fresh = detail(&api, &Keys::test_a(), &id).await["recording"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(download(&api, &fresh).await, (200, SHIPPED_MP4.to_vec()));
}

#[tokio::test]
async fn a_recording_past_the_retention_is_expired_without_a_url() {
    let api = TestApp::builder()
        .with_var("RECORDING_RETENTION_DAYS", "2")
        .with_var("RECORDING_URL_TTL_SECS", "600")
        .await;
    let id = recorded_test_stream(&api, 30).await;
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(
        shown["url_expires_at"],
        hosting_domain::clock::format_timestamp(api.now() + Duration::seconds(600))
    );
    api.advance(Duration::days(2) - Duration::seconds(1));
    assert_eq!(
        detail(&api, &Keys::test_a(), &id).await["recording"]["status"],
        "ready"
    );
    api.advance(Duration::seconds(1));
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "expired");
    assert!(shown["url"].is_null() && shown["url_expires_at"].is_null());
    assert_eq!(
        shown["duration_seconds"],
        hosting_domain::recording::TEST_RECORDING_SECONDS
    );
}

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_the_test_recording_is_written_through_s3_faults_before_it_is_ready() {
    let bucket = format!("rec-faults-{}", uuid::Uuid::new_v4().simple());
    let api = TestApp::builder()
        .with_var("RECORDINGS_BUCKET", bucket.clone())
        .with_outbox_retry_delays_secs(&[0.0; 10])
        .await;
    // Every write refused: the recording stays `processing`, without a URL, and its end's
    // event is not relayed but retried.
    faults::set(&bucket, json!({"fail_ops": ["PutObject"]})).await;
    let id = recorded_test_stream(&api, 20).await;
    relay(&api).await;
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "processing", "{shown}");
    assert!(shown["url"].is_null());
    let refused = faults::stats(&bucket).await;
    assert!(faults::injected(&refused) > 0, "{refused}");
    // S3 throttles, fails and loses answers of writes that were applied: written all the same,
    // and only then `ready`.
    faults::set(
        &bucket,
        json!({"s3_slow_down": 0.2, "s3_500": 0.2, "lost_response": 0.2}),
    )
    .await;
    for _ in 0..20 {
        relay(&api).await;
    }
    // The faults are the product's to survive, not the check's: its download goes unfaulted.
    faults::clear(&bucket).await;
    let shown = detail(&api, &Keys::test_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "ready", "{shown}");
    let url = shown["url"].as_str().unwrap().to_owned();
    assert!(url.contains(&bucket), "{url}");
    let (status, bytes) = download(&api, &url).await;
    assert_eq!(status, 200);
    assert_eq!(bytes, SHIPPED_MP4);
}
