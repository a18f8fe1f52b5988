//! Egresses that end or are replaced while the show is live, as LiveKit ends them
//! (docs/destinations.md, "Limits", "Egress events", "Add a destination"): the time limit that
//! ends an egress without failing it, late reports of an egress the stream no longer uses, and
//! a stream only recorded that gains a destination.

use super::*;
use crate::common::fake_livekit::{START_EGRESS, UPDATE_STREAM, egress_event};

/// LiveKit's `egress_ended` at its time limit: the file finished and written, each output
/// `FINISHED`.
async fn limit_reached(api: &TestApp, room: &str, egress_id: &str, n: usize) {
    let mut body = egress_event(
        "egress_ended",
        room,
        egress_id,
        "EGRESS_LIMIT_REACHED",
        &[(&yt(), "FINISHED", ""), (&tt(), "FINISHED", "")],
        &format!("EV_limit{n}"),
    );
    body["egressInfo"]["error"] = json!("max duration reached");
    body["egressInfo"]["fileResults"] = json!([{
        "filename": format!("part-{n}.mp4"), "duration": "10800000000000",
        "size": (1_000 * n).to_string()}]);
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
}

/// The id of the egress of `fake` still running.
fn running_egress(fake: &FakeLiveKit) -> String {
    fake.egresses()
        .into_iter()
        .find(|(_, e)| e.running)
        .map(|(id, _)| id)
        .expect("a running egress")
}

#[tokio::test]
async fn four_time_limits_in_a_row_keep_every_part_ready_and_the_destinations_on_the_air() {
    let (api, fake) = app_with_livekit().await;
    let r = api
        .start(
            &Keys::live_a(),
            json!({"destinations": two_destinations(), "record": true}),
        )
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    let mut current = only_egress(&fake);
    egress_says(
        &api,
        "egress_updated",
        &room,
        &current,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", ""), (&tt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    for n in 1..=4 {
        fake.end_egress(&current);
        limit_reached(&api, &room, &current, n).await;
        // Started again at once, for both destinations and a new file.
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.count(START_EGRESS), 1 + n, "after limit {n}");
        let (request, _) = starts(&fake).pop().unwrap();
        assert_eq!(request.stream_outputs[0].urls, [yt(), tt()]);
        assert!(
            request.file_outputs[0]
                .filepath
                .ends_with(&format!("-{}.mp4", n + 1))
        );
        current = running_egress(&fake);
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
    let events = event_types(&api, &id).await;
    assert_eq!(
        events,
        [
            "stream.destination_active",
            "stream.destination_active",
            "stream.recording_ready",
            "stream.started"
        ]
    );
    // The limits counted toward no restart: three real ends are still started again.
    for n in 1..=3 {
        fake.end_egress(&current);
        egress_says(
            &api,
            "egress_ended",
            &room,
            &current,
            "EGRESS_ABORTED",
            &[],
            &format!("EV_abort{n}"),
        )
        .await;
        api.runtime.fire_due_timers().await;
        assert_eq!(fake.count(START_EGRESS), 5 + n);
        current = running_egress(&fake);
    }
    assert_eq!(statuses(&api, &id).await, ["active", "active"]);
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
    let second = running_egress(&fake);
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
async fn a_destination_added_to_a_stream_only_recorded_goes_on_the_air() {
    let (api, fake) = app_with_livekit().await;
    let r = api.start(&Keys::live_a(), json!({"record": true})).await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let room = r.body["room_name"].as_str().unwrap().to_owned();
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    let file_only = only_egress(&fake);
    assert!(!fake.egresses()[&file_only].streaming);
    // LiveKit would refuse to add an output to it: it is replaced by one carrying both.
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination("youtube", YOUTUBE_INGEST, YT_KEY),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["status"], "starting");
    assert_eq!(fake.count(UPDATE_STREAM), 0);
    assert!(
        !fake.egresses()[&file_only].running,
        "the file-only egress is stopped"
    );
    api.runtime.fire_due_timers().await;
    let (request, _) = starts(&fake).pop().unwrap();
    assert_eq!(request.stream_outputs[0].urls, [yt()]);
    assert!(request.file_outputs[0].filepath.ends_with("-2.mp4"));
    let both = running_egress(&fake);
    assert!(fake.egresses()[&both].streaming);
    egress_says(
        &api,
        "egress_updated",
        &room,
        &both,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["active"]);
    // The stopped egress's file is the recording's first part.
    let mut body = egress_event(
        "egress_ended",
        &room,
        &file_only,
        "EGRESS_COMPLETE",
        &[],
        "EV_file",
    );
    body["egressInfo"]["fileResults"] =
        json!([{"filename": "part-1.mp4", "duration": "60000000000", "size": "1000"}]);
    api.post_livekit(&signed_webhook(&body))
        .await
        .assert_status(200);
    let detail = live_detail(&api, &id).await;
    assert_eq!(detail["recording"]["status"], "ready");
    assert_eq!(detail["recording"]["parts"][1]["status"], "recording");
    // A second destination joins the egress that now streams.
    api.post(
        &format!("/streams/{id}/destinations"),
        &Keys::live_a(),
        destination("tiktok", TIKTOK_INGEST, TT_KEY),
    )
    .await
    .assert_status(201);
    assert_eq!(fake.count(UPDATE_STREAM), 1);
    assert_eq!(fake.egresses()[&both].urls, [yt(), tt()]);
}
