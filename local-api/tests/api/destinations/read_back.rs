//! Egresses read back from LiveKit (docs/destinations.md, "Lost, late and early reports"):
//! LiveKit's webhooks lost, and what they would have said applied from `ListEgress` once, with
//! the same events, once; an egress LiveKit forgot; and an end that overtook its start's answer.
//! One read of LiveKit's active egresses per sweep, whatever the number of streams: budgets.rs.

use chrono::Duration;

use super::*;
use crate::common::fake_livekit::{EgressEnd, LIST_EGRESS, START_EGRESS};

/// The read-back period (`EGRESS_RECONCILE_SECS`, default 60), and a sweep past it.
async fn after_the_reconcile_period(api: &TestApp) {
    api.advance(Duration::seconds(61));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
}

/// The `ListEgress` requests made so far: (egress id asked for, active only).
fn list_calls(fake: &FakeLiveKit) -> Vec<(String, bool)> {
    fake.calls()
        .into_iter()
        .filter_map(|call| match call.call {
            Call::ListEgress(req) => Some((req.egress_id, req.active)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_lost_egress_updated_is_read_back_with_its_event_once() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, egress) = airing(&api, &fake).await;
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&yt(), "ACTIVE", "")],
        "EV_active",
    )
    .await;
    // TikTok's output goes active, then fails; neither webhook arrives.
    fake.fail_output(&egress, &tt(), "stream key rejected");
    assert_eq!(statuses(&api, &id).await, ["active", "starting"]);
    after_the_reconcile_period(&api).await;
    assert_eq!(statuses(&api, &id).await, ["active", "failed"]);
    let shown = destinations_of(&api, &id).await;
    assert_eq!(shown[1]["error"], "stream key rejected");
    // Read once, in bulk.
    assert_eq!(list_calls(&fake), [(String::new(), true)]);
    // Read again later: nothing new, and the late webhook changes nothing either.
    after_the_reconcile_period(&api).await;
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&tt(), "FAILED", "stream key rejected")],
        "EV_late",
    )
    .await;
    assert_eq!(
        event_types(&api, &id).await,
        [
            "stream.destination_active",
            "stream.destination_failed",
            "stream.started"
        ]
    );
    assert_eq!(list_calls(&fake).len(), 2);
}

/// A live-key stream recorded, live, then ended (its egress stopped with its room): its id and
/// its recording's egress.
async fn ended_while_recording(api: &TestApp, fake: &FakeLiveKit) -> (String, String) {
    let (id, _) = live_with(api, json!({"record": true})).await;
    let egress = only_egress(fake);
    api.delete(&format!("/streams/{id}"), &Keys::live_a())
        .await
        .assert_status(200);
    (id, egress)
}

#[tokio::test]
async fn a_lost_egress_ended_of_a_processing_recording_is_read_back_once() {
    let (api, fake) = app_with_livekit().await;
    let (id, egress) = ended_while_recording(&api, &fake).await;
    // Stopped with the room; LiveKit's `egress_ended` never arrives.
    assert!(!fake.egresses()[&egress].running);
    assert_eq!(
        live_detail(&api, &id).await["recording"]["status"],
        "processing"
    );
    after_the_reconcile_period(&api).await;
    let recording = live_detail(&api, &id).await["recording"].clone();
    assert_eq!(recording["status"], "ready", "{recording}");
    assert_eq!(recording["size_bytes"], 1_000);
    assert_eq!(recording["duration_seconds"], 1);
    // Nothing left to read back: no further call, and the event once.
    let calls = list_calls(&fake).len();
    after_the_reconcile_period(&api).await;
    after_the_reconcile_period(&api).await;
    assert_eq!(list_calls(&fake).len(), calls);
    assert_eq!(
        event_types(&api, &id).await,
        ["stream.ended", "stream.recording_ready", "stream.started"]
    );
}

#[tokio::test]
async fn a_recording_whose_egress_livekit_forgot_fails_after_three_reads() {
    let (api, fake) = app_with_livekit().await;
    let (id, egress) = ended_while_recording(&api, &fake).await;
    fake.forget_egress(&egress);
    for read in 1..=2 {
        after_the_reconcile_period(&api).await;
        assert_eq!(
            live_detail(&api, &id).await["recording"]["status"],
            "processing",
            "after read {read}"
        );
    }
    after_the_reconcile_period(&api).await;
    let recording = live_detail(&api, &id).await["recording"].clone();
    assert_eq!(
        (recording["status"].as_str(), recording["error"].as_str()),
        (Some("failed"), Some("egress_lost"))
    );
    // Each read asked for the egress by its id once it was not among the active ones.
    let by_id = list_calls(&fake)
        .into_iter()
        .filter(|(asked, _)| *asked == egress)
        .count();
    assert_eq!(by_id, 3);
    assert_eq!(
        event_types(&api, &id).await,
        ["stream.ended", "stream.recording_failed", "stream.started"]
    );
}

#[tokio::test]
async fn livekit_unreachable_counts_no_read_against_an_egress() {
    let (api, fake) = app_with_livekit().await;
    let (id, _, egress) = airing(&api, &fake).await;
    fake.forget_egress(&egress);
    fake.fail(LIST_EGRESS);
    for _ in 0..4 {
        after_the_reconcile_period(&api).await;
    }
    // Four failed reads: the egress still counts as running.
    assert_eq!(fake.count(START_EGRESS), 1);
    fake.heal(LIST_EGRESS);
    for _ in 0..3 {
        after_the_reconcile_period(&api).await;
    }
    // Three reads that did not find it: lost, and started again.
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 2);
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
}

#[tokio::test]
async fn an_end_that_overtook_its_starts_answer_is_applied_by_the_read_back() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    for restart in 1..=4 {
        // LiveKit answers the start slowly (2 s, ample for one webhook however busy the
        // store); the egress ends, and says so, once LiveKit has the call and before the
        // answer is recorded.
        fake.delay(START_EGRESS, std::time::Duration::from_secs(2));
        let egress = format!("EG_{restart}");
        let fire = api.runtime.fire_due_timers();
        let early = async {
            let called = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while fake.count(START_EGRESS) < restart && std::time::Instant::now() < called {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            egress_says(
                &api,
                "egress_ended",
                &room,
                &egress,
                "EGRESS_FAILED",
                &[],
                &format!("EV_early{restart}"),
            )
            .await;
        };
        tokio::join!(fire, early);
        fake.heal(START_EGRESS);
        assert_eq!(fake.count(START_EGRESS), restart, "start {restart}");
        fake.end_egress_as(
            &egress,
            EgressEnd {
                status: livekit_protocol::EgressStatus::EgressFailed,
                error: "encoder died".into(),
                file: None,
            },
        );
        // The read-back applies the end: started again (by the next round's timer), three
        // times at most.
        after_the_reconcile_period(&api).await;
        let stored = api
            .runtime
            .app
            .streams()
            .get_stream(uuid::Uuid::parse_str(&id).unwrap())
            .await
            .unwrap()
            .unwrap();
        eprintln!(
            "DEBUG {restart}: {:?} {:?}",
            stored.egress,
            fake.calls()
                .iter()
                .map(|c| c.method.clone())
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(fake.count(START_EGRESS), 4);
    assert_eq!(statuses(&api, &id).await, ["failed", "failed"]);
    assert_eq!(destinations_of(&api, &id).await[0]["error"], "encoder died");
}
