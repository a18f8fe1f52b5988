//! Egresses that end while the show is live, as LiveKit ends them, and the two egresses of a
//! recorded show (docs/destinations.md, "Limits", "Egress events", "One show, two egresses"):
//! the time limit that ends an egress without failing it, late reports of an egress the stream
//! no longer uses, one egress for the destinations and one for the file so neither cuts the
//! other, and a stream only recorded that gains a destination.

use super::*;
use crate::common::fake_livekit::{START_EGRESS, UPDATE_STREAM, egress_event};

/// LiveKit's `egress_ended` of `egress_id` at its time limit, with `results`, and the file it
/// finished (of `size` bytes, 3 hours long) when given.
async fn limit_reached(
    api: &TestApp,
    room: &str,
    egress_id: &str,
    results: &[(&str, &str, &str)],
    size: Option<u64>,
    event_id: &str,
) {
    let mut body = egress_event(
        "egress_ended",
        room,
        egress_id,
        "EGRESS_LIMIT_REACHED",
        results,
        event_id,
    );
    body["egressInfo"]["error"] = json!("max duration reached");
    if let Some(size) = size {
        body["egressInfo"]["fileResults"] = json!([{
            "filename": format!("{event_id}.mp4"), "duration": "10800000000000",
            "size": size.to_string()}]);
    }
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
}

/// The running egresses of `fake`: (the one pushing to destinations, the one writing a file).
fn running(fake: &FakeLiveKit) -> (Option<String>, Option<String>) {
    let mut pushing = None;
    let mut writing = None;
    for (id, egress) in fake.egresses() {
        match (egress.running, egress.streaming) {
            (true, true) => pushing = Some(id),
            (true, false) => writing = Some(id),
            _ => {}
        }
    }
    (pushing, writing)
}

/// A live-key stream recorded and pushed to two destinations, live, both egresses started and
/// the destinations reported active; its id, room and (pushing, writing) egress ids.
async fn recorded_and_airing(
    api: &TestApp,
    fake: &FakeLiveKit,
) -> (String, String, String, String) {
    let (id, room) = live_with(
        api,
        json!({"destinations": two_destinations(), "record": true}),
    )
    .await;
    // Two egresses, each with one kind of output.
    let made = starts(fake);
    assert_eq!(made.len(), 2);
    assert_eq!(made[0].0.stream_outputs[0].urls, [yt(), tt()]);
    assert!(made[0].0.file_outputs.is_empty());
    assert!(made[1].0.stream_outputs.is_empty());
    assert!(
        made[1].0.file_outputs[0]
            .filepath
            .ends_with(&format!("{id}.mp4"))
    );
    let (Some(pushing), Some(writing)) = running(fake) else {
        panic!("two egresses running: {:?}", fake.egresses());
    };
    egress_says(
        api,
        "egress_updated",
        &room,
        &pushing,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", ""), (&tt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    (id, room, pushing, writing)
}

#[tokio::test]
async fn four_file_limits_in_a_row_keep_every_part_ready_and_never_touch_the_destinations() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, pushing, mut writing) = recorded_and_airing(&api, &fake).await;
    for n in 1..=4 {
        fake.end_egress(&writing);
        limit_reached(
            &api,
            &room,
            &writing,
            &[],
            Some(1_000 * n),
            &format!("EV_limit{n}"),
        )
        .await;
        // The file's egress alone is started again at once, to a new file.
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.count(START_EGRESS), 2 + n as usize, "after limit {n}");
        let (request, _) = starts(&fake).pop().unwrap();
        assert!(request.stream_outputs.is_empty());
        assert!(
            request.file_outputs[0]
                .filepath
                .ends_with(&format!("-{}.mp4", n + 1))
        );
        let (still_pushing, now_writing) = running(&fake);
        assert_eq!(
            still_pushing.as_deref(),
            Some(pushing.as_str()),
            "never cut"
        );
        writing = now_writing.unwrap();
        assert_eq!(statuses(&api, &id).await, ["active", "active"]);
    }
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["status"], "live");
    let parts = detail["recording"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 5);
    for (n, part) in parts.iter().take(4).enumerate() {
        assert_eq!(part["status"], "ready", "{part}");
        assert_eq!(part["duration_seconds"], 10_800);
        assert_eq!(part["size_bytes"], 1_000 * (n + 1));
    }
    assert_eq!(parts[4]["status"], "recording");
    // No destination event beyond going active, no failure, and the first part's ready once.
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_active",
            "stream.destination_active",
            "stream.recording_ready",
            "stream.started"
        ]
    );
    // The limits counted toward no restart: three real ends are still started again.
    for n in 1..=3 {
        fake.end_egress(&writing);
        egress_says(
            &api,
            "egress_ended",
            &room,
            &writing,
            "EGRESS_ABORTED",
            &[],
            &format!("EV_abort{n}"),
        )
        .await;
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.count(START_EGRESS), 6 + n);
        writing = running(&fake).1.unwrap();
    }
    assert_eq!(statuses(&api, &id).await, ["active", "active"]);
}

#[tokio::test]
async fn the_destinations_egress_at_its_limit_starts_again_and_the_recording_goes_on() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, pushing, writing) = recorded_and_airing(&api, &fake).await;
    fake.end_egress(&pushing);
    limit_reached(
        &api,
        &room,
        &pushing,
        &[(&yt(), "FINISHED", ""), (&tt(), "FINISHED", "")],
        None,
        "EV_limit",
    )
    .await;
    api.runtime.fire_due_timers().await;
    let (request, _) = starts(&fake).pop().unwrap();
    assert_eq!(request.stream_outputs[0].urls, [yt(), tt()]);
    assert!(request.file_outputs.is_empty());
    let (now_pushing, still_writing) = running(&fake);
    assert_ne!(now_pushing.as_deref(), Some(pushing.as_str()));
    assert_eq!(
        still_writing.as_deref(),
        Some(writing.as_str()),
        "never cut"
    );
    // Still on the air, no event, one file.
    assert_eq!(statuses(&api, &id).await, ["active", "active"]);
    let detail = live_detail(&api, &id).await;
    assert!(detail["recording"]["parts"].is_null());
    assert_eq!(detail["recording"]["status"], "recording");
    // A destination LiveKit refuses fails alone: the recording records on.
    let now_pushing = now_pushing.unwrap();
    egress_says(
        &api,
        "egress_updated",
        &room,
        &now_pushing,
        "EGRESS_ACTIVE",
        &[(&tt(), "FAILED", "stream key rejected")],
        "EV_refused",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["active", "failed"]);
    assert_eq!(
        live_detail(&api, &id).await["recording"]["status"],
        "recording"
    );
}

#[tokio::test]
async fn late_reports_of_an_egress_the_stream_no_longer_uses_change_nothing() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, first) = airing(&api, &fake).await;
    egress_says(
        &api,
        "egress_updated",
        &room,
        &first,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", ""), (&tt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    fake.end_egress(&first);
    egress_says(
        &api,
        "egress_ended",
        &room,
        &first,
        "EGRESS_ABORTED",
        &[],
        "EV_end",
    )
    .await;
    // Reports of the replaced egress, before and after its successor starts: its outputs
    // failing or finishing move no destination.
    for (n, fire) in [(1, false), (2, true)] {
        if fire {
            api.runtime.fire_due_timers().await;
            assert_eq!(fake.count(START_EGRESS), 2);
        }
        egress_says(
            &api,
            "egress_updated",
            &room,
            &first,
            "EGRESS_ENDING",
            &[
                (&yt(), "FAILED", "connection reset"),
                (&tt(), "FINISHED", ""),
            ],
            &format!("EV_late{n}"),
        )
        .await;
        assert_eq!(statuses(&api, &id).await, ["active", "active"]);
    }
    // The current egress's own report still counts.
    let second = running(&fake).0.unwrap();
    egress_says(
        &api,
        "egress_updated",
        &room,
        &second,
        "EGRESS_ACTIVE",
        &[(&yt(), "FAILED", "connection reset")],
        "EV_now",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["failed", "active"]);
}

#[tokio::test]
async fn a_destination_added_to_a_stream_only_recorded_goes_on_the_air_in_an_egress_of_its_own() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = live_with(&api, json!({"record": true})).await;
    let writing = only_egress(&fake);
    assert!(!fake.egresses()[&writing].streaming);
    // LiveKit would refuse to add an output to it: the destination gets an egress of its own.
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination("youtube", YOUTUBE_INGEST, YT_KEY),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["status"], "starting");
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(UPDATE_STREAM), 0);
    let (request, _) = starts(&fake).pop().unwrap();
    assert_eq!(request.stream_outputs[0].urls, [yt()]);
    assert!(request.file_outputs.is_empty());
    let (Some(pushing), Some(still_writing)) = running(&fake) else {
        panic!("two egresses running: {:?}", fake.egresses());
    };
    assert_eq!(still_writing, writing, "the recording is not cut");
    egress_says(
        &api,
        "egress_updated",
        &room,
        &pushing,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["active"]);
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["recording"]["status"], "recording");
    assert!(detail["recording"]["parts"].is_null());
    // A second destination joins the egress that pushes.
    api.post(
        &format!("/streams/{id}/destinations"),
        &Keys::live_a(),
        destination("tiktok", TIKTOK_INGEST, TT_KEY),
    )
    .await
    .assert_status(201);
    assert_eq!(fake.count(UPDATE_STREAM), 1);
    assert_eq!(fake.egresses()[&pushing].urls, [yt(), tt()]);
    // The end stops both, before the room goes.
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    let egresses = fake.egresses();
    assert!(egresses.values().all(|e| !e.running), "{egresses:?}");
    let stops = fake.count(crate::common::fake_livekit::STOP_EGRESS);
    assert_eq!(stops, 2);
}
