//! A live key's recording: the egress's file output (alone, or with destinations in the one
//! egress), each state from `pending` to `ready` or `failed` with its event once, a new file for
//! each egress started again, and a start given up.

use chrono::Duration;

use super::*;
use crate::common::fake_livekit::{START_EGRESS, STOP_EGRESS};

/// The sorted types of the stream's events.
async fn event_types(api: &TestApp, id: &str) -> Vec<String> {
    let mut events = api.events_of(id).await;
    events.sort();
    events
}

#[tokio::test]
async fn a_recorded_show_goes_from_pending_to_ready_with_one_event_and_a_fresh_url_per_read() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_recorded(&api, &Keys::live_a(), json!({})).await;
    let nulls = json!({"status": "pending", "duration_seconds": null, "size_bytes": null,
        "url": null, "url_expires_at": null, "error": null});
    assert_eq!(detail(&api, &Keys::live_a(), &id).await["recording"], nulls);
    agent_joins(&api, &room).await;
    assert_eq!(
        detail(&api, &Keys::live_a(), &id).await["recording"]["status"],
        "recording"
    );
    assert_eq!(
        fake.count(START_EGRESS),
        0,
        "the join itself calls no egress"
    );
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    assert_eq!(made.len(), 1);
    let request = &made[0];
    assert_eq!(request.room_name, room);
    assert!(
        request.stream_outputs.is_empty(),
        "no destinations, no stream output"
    );
    assert_eq!(request.file_outputs.len(), 1);
    let file = &request.file_outputs[0];
    assert_eq!(file.filepath, key_of(&id, 1));
    assert_eq!(
        file.file_type,
        livekit_protocol::EncodedFileType::Mp4 as i32
    );
    match (&file.output, backend::is_dynamodb()) {
        (Some(livekit_protocol::encoded_file_output::Output::S3(upload)), true) => {
            assert_eq!(upload.bucket, backend::TEST_RECORDINGS_BUCKET);
            // No key pair configured: the egress uploads with its own role.
            assert!(upload.access_key.is_empty() && upload.secret.is_empty());
        }
        (None, false) => {}
        (other, dynamodb) => panic!("file output {other:?} on dynamodb={dynamodb}"),
    }
    // Ended: the egress is stopped and the file not confirmed yet.
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    assert_eq!(fake.count(STOP_EGRESS), 1);
    assert_eq!(
        detail(&api, &Keys::live_a(), &id).await["recording"]["status"],
        "processing"
    );
    // 30 min and half a second, in nanoseconds: whole seconds shown.
    let file = Some((48_213_004, 1_800_500_000_000));
    egress_ended(&api, &room, "EG_1", "EGRESS_COMPLETE", "", file, "EV_end").await;
    let shown = detail(&api, &Keys::live_a(), &id).await["recording"].clone();
    assert_eq!(shown["status"], "ready");
    assert_eq!(shown["duration_seconds"], 1800);
    assert_eq!(shown["size_bytes"], 48_213_004);
    assert!(shown["error"].is_null() && shown.get("parts").is_none());
    let url = shown["url"].as_str().unwrap();
    let expires = api.now() + Duration::seconds(3600);
    assert_eq!(
        shown["url_expires_at"],
        hosting_domain::clock::format_timestamp(expires)
    );
    if backend::is_dynamodb() {
        // A SigV4 presigned GET of the object, valid the configured lifetime.
        assert!(
            url.contains(&format!(
                "/{}/{}",
                backend::TEST_RECORDINGS_BUCKET,
                key_of(&id, 1)
            )),
            "{url}"
        );
        for part in [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "X-Amz-Expires=3600",
            "X-Amz-Signature=",
            "X-Amz-Credential=",
        ] {
            assert!(url.contains(part), "{part} in {url}");
        }
    } else {
        assert!(
            url.contains(&format!(
                "/{}?expires={}&signature=",
                key_of(&id, 1),
                expires.timestamp()
            )),
            "{url}"
        );
    }
    // Every read makes its own URL, valid from the read.
    api.advance(Duration::seconds(7));
    let later = detail(&api, &Keys::live_a(), &id).await["recording"].clone();
    assert_ne!(later["url"], shown["url"]);
    assert_eq!(
        later["url_expires_at"],
        hosting_domain::clock::format_timestamp(api.now() + Duration::seconds(3600))
    );
    // LiveKit sends its webhook again: still one event, and the event carries no URL.
    egress_ended(
        &api,
        &room,
        "EG_1",
        "EGRESS_COMPLETE",
        "",
        file,
        "EV_end_again",
    )
    .await;
    assert_eq!(
        event_types(&api, &id).await,
        ["stream.ended", "stream.recording_ready", "stream.started"]
    );
    let event = api
        .emitted_events()
        .await
        .into_iter()
        .find(|e| e.event_type == hosting_domain::EventType::RecordingReady)
        .unwrap();
    let body: Value = serde_json::from_str(&event.body).unwrap();
    let recording = &body["data"]["stream"]["recording"];
    assert_eq!(recording["status"], "ready");
    assert!(recording["url"].is_null() && recording["url_expires_at"].is_null());
}

#[tokio::test]
async fn an_egress_ending_otherwise_or_without_a_file_fails_the_recording_once() {
    let (api, fake) = app_with_livekit().await;
    let mut rooms = Vec::new();
    for _ in 0..2 {
        let (id, room) = start_recorded(&api, &Keys::live_a(), json!({})).await;
        agent_joins(&api, &room).await;
        api.runtime.fire_due_timers().await;
        api.delete(&format!("/streams/{id}"), &Keys::live_a())
            .await
            .assert_status(200);
        rooms.push((id, room));
    }
    let egresses: Vec<String> = {
        let mut ids: Vec<String> = fake.egresses().into_keys().collect();
        ids.sort();
        ids
    };
    egress_ended(
        &api,
        &rooms[0].1,
        &egresses[0],
        "EGRESS_FAILED",
        "encoder died",
        None,
        "EV_f",
    )
    .await;
    egress_ended(
        &api,
        &rooms[1].1,
        &egresses[1],
        "EGRESS_COMPLETE",
        "",
        None,
        "EV_n",
    )
    .await;
    for ((id, _), error) in rooms
        .iter()
        .zip(["encoder died", "the egress ended without a file"])
    {
        let shown = detail(&api, &Keys::live_a(), id).await["recording"].clone();
        assert_eq!(shown["status"], "failed");
        assert_eq!(shown["error"], error);
        assert!(shown["url"].is_null() && shown["duration_seconds"].is_null());
        assert_eq!(
            event_types(&api, id).await,
            ["stream.ended", "stream.recording_failed", "stream.started"]
        );
    }
    // A late report of a file never moves a final recording.
    egress_ended(
        &api,
        &rooms[0].1,
        &egresses[0],
        "EGRESS_COMPLETE",
        "",
        Some((10, 10)),
        "EV_late",
    )
    .await;
    assert_eq!(
        detail(&api, &Keys::live_a(), &rooms[0].0).await["recording"]["status"],
        "failed"
    );
}

#[tokio::test]
async fn a_stream_that_never_went_live_or_whose_egress_never_started_records_nothing() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_var("EGRESS_START_RETRY_SECS", "5")
        .await;
    let (never, _) = start_recorded(&api, &Keys::live_a(), json!({})).await;
    api.advance_and_fire(Duration::minutes(5)).await;
    let shown = detail(&api, &Keys::live_a(), &never).await["recording"].clone();
    assert_eq!(shown["status"], "failed");
    assert_eq!(shown["error"], "the stream never went live");
    assert_eq!(
        event_types(&api, &never).await,
        ["stream.error", "stream.recording_failed"]
    );
    // LiveKit refuses every start: given up after the retry time, the show goes on.
    fake.fail(START_EGRESS);
    let (id, room) = start_recorded(&api, &Keys::live_a(), json!({})).await;
    agent_joins(&api, &room).await;
    api.runtime.fire_due_timers().await;
    for wait in [1, 2, 2] {
        api.advance_and_fire(Duration::seconds(wait)).await;
    }
    let shown = detail(&api, &Keys::live_a(), &id).await;
    assert_eq!(shown["status"], "live");
    assert_eq!(shown["recording"]["status"], "failed");
    assert_eq!(shown["recording"]["error"], "egress_unavailable");
    assert_eq!(
        event_types(&api, &id).await,
        ["stream.recording_failed", "stream.started"]
    );
}

#[tokio::test]
async fn the_file_has_an_egress_of_its_own_and_a_restart_writes_a_new_file() {
    let (api, fake) = app_with_livekit().await;
    let destination = json!([{"platform": "youtube",
        "ingest_url": "rtmp://a.rtmp.youtube.com/live2", "stream_key": "yt-key-SECRET-0001-abcd"}]);
    let (id, room) =
        start_recorded(&api, &Keys::live_a(), json!({"destinations": destination})).await;
    agent_joins(&api, &room).await;
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    assert_eq!(
        made.len(),
        2,
        "one egress for the destinations, one for the file"
    );
    assert_eq!(
        made[0].stream_outputs[0].urls,
        ["rtmp://a.rtmp.youtube.com/live2/yt-key-SECRET-0001-abcd"]
    );
    assert!(made[0].file_outputs.is_empty());
    assert!(made[1].stream_outputs.is_empty());
    assert_eq!(made[1].file_outputs[0].filepath, key_of(&id, 1));
    // The file's egress ends mid-show with its file written: started again, to a file of its
    // own, and the destinations' egress runs on.
    fake.end_egress("EG_2");
    egress_ended(
        &api,
        &room,
        "EG_2",
        "EGRESS_COMPLETE",
        "",
        Some((1_000, 60_000_000_000)),
        "EV_1",
    )
    .await;
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    assert_eq!(made.len(), 3);
    assert_eq!(made[2].file_outputs[0].filepath, key_of(&id, 2));
    assert!(made[2].stream_outputs.is_empty());
    assert!(fake.egresses()["EG_1"].running);
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    egress_ended(
        &api,
        &room,
        "EG_3",
        "EGRESS_COMPLETE",
        "",
        Some((2_000, 120_000_000_000)),
        "EV_2",
    )
    .await;
    let shown = detail(&api, &Keys::live_a(), &id).await["recording"].clone();
    // The first file at the top, every file in `parts`.
    assert_eq!(shown["status"], "ready");
    assert_eq!(shown["duration_seconds"], 60);
    let parts = shown["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["url"], shown["url"]);
    assert_eq!(parts[1]["status"], "ready");
    assert_eq!(parts[1]["duration_seconds"], 120);
    assert_eq!(parts[1]["size_bytes"], 2_000);
    assert!(parts[1]["url"].as_str().unwrap().contains(&key_of(&id, 2)));
    // Once per stream: the first file's.
    let events = event_types(&api, &id).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("stream.recording"))
            .count(),
        1,
        "{events:?}"
    );
}

#[tokio::test]
async fn with_an_upload_role_the_egress_assumes_it_and_is_handed_no_key() {
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_livekit(&fake)
        .with_var("RECORDINGS_BUCKET", backend::TEST_RECORDINGS_BUCKET)
        .with_var(
            "RECORDING_UPLOAD_ROLE_ARN",
            "arn:aws:iam::123456789012:role/recording-upload",
        )
        .with_var("RECORDING_UPLOAD_EXTERNAL_ID", "deploy-7f3a-EXTERNAL")
        .await;
    let (_, room) = start_recorded(&api, &Keys::live_a(), json!({})).await;
    agent_joins(&api, &room).await;
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    let Some(livekit_protocol::encoded_file_output::Output::S3(upload)) =
        &made[0].file_outputs[0].output
    else {
        panic!("an S3 upload: {:?}", made[0].file_outputs);
    };
    assert_eq!(
        upload.assume_role_arn,
        "arn:aws:iam::123456789012:role/recording-upload"
    );
    assert_eq!(upload.assume_role_external_id, "deploy-7f3a-EXTERNAL");
    assert_eq!(upload.bucket, backend::TEST_RECORDINGS_BUCKET);
    assert!(upload.access_key.is_empty() && upload.secret.is_empty());
    assert!(upload.session_token.is_empty());
}
