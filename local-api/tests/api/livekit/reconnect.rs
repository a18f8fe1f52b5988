//! The show goes on (docs/lifecycle.md, "The show goes on"): a preparing stream whose dispatch was
//! lost is dispatched again, and a live stream whose AI host dropped waits a reconnect window for
//! it, against the fake LiveKit driven as LiveKit runs: its agents join by themselves after a
//! dispatch, and its rooms send their own webhooks. On both backends.

use chrono::Duration;
use serde_json::{Value, json};

use crate::common::fake_livekit::{CREATE_DISPATCH, DELETE_ROOM};
use crate::common::*;

/// Every reason that opens a reconnect window (and one LiveKit may add).
const DROPS: [&str; 8] = [
    "CONNECTION_TIMEOUT",
    "SIGNAL_CLOSE",
    "SERVER_SHUTDOWN",
    "MEDIA_FAILURE",
    "MIGRATION",
    "STATE_MISMATCH",
    "JOIN_FAILURE",
    "AGENT_ERROR",
];

use super::show::Show;

#[tokio::test]
async fn a_lost_first_dispatch_is_sent_again_after_the_retry_time_and_the_host_joins() {
    let show = Show::preparing(30).await;
    assert_eq!(show.dispatches(), 1, "the launch's");
    assert_eq!(show.api.advance_and_fire(Duration::seconds(59)).await, 0);
    assert_eq!(show.dispatches(), 1);
    assert_eq!(show.api.advance_and_fire(Duration::seconds(1)).await, 1);
    assert_eq!(show.dispatches(), 2, "again, into the same room");
    let calls = show.fake.calls();
    let rooms: Vec<String> = calls
        .iter()
        .filter_map(|c| match &c.call {
            crate::common::fake_livekit::Call::CreateDispatch(d) => Some(d.room.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rooms, std::slice::from_ref(&show.room));
    let dispatches = show.fake.dispatches(&show.room);
    assert_eq!(
        dispatches.len(),
        1,
        "the launch's dispatch deleted before the new one (docs/livekit.md, \"One host\")"
    );
    assert_eq!(
        dispatches[0].restart_policy,
        livekit_protocol::JobRestartPolicy::JrpNever as i32
    );
    // Nothing else changed.
    let detail = show.detail().await;
    assert_eq!(detail["status"], "preparing");
    assert!(show.events().await.is_empty());

    // The slow agents of both dispatches start: only the live dispatch's joins.
    show.host_joins().await;
    assert_eq!(show.fake.hosts(&show.room).len(), 1);
    assert_eq!(show.detail().await["status"], "live");
    assert_eq!(show.api.advance_and_fire(Duration::minutes(10)).await, 0);
    assert_eq!(show.dispatches(), 2, "no retry once live");
    assert_eq!(show.events().await, ["stream.started"]);
}

#[tokio::test]
async fn at_most_three_dispatches_and_a_failed_retry_is_tried_at_the_next_retry_time() {
    let show = Show::preparing(30).await;
    show.fake.fail_next(CREATE_DISPATCH, 1);
    assert_eq!(show.api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(show.dispatches(), 2, "tried, and refused");
    assert_eq!(show.api.advance_and_fire(Duration::seconds(60)).await, 1);
    assert_eq!(show.dispatches(), 3);
    // The cap: three in all, the failed one included.
    assert_eq!(show.api.advance_and_fire(Duration::seconds(170)).await, 0);
    assert_eq!(show.dispatches(), 3);
    assert_eq!(show.detail().await["status"], "preparing");
    assert_eq!(show.api.advance_and_fire(Duration::seconds(10)).await, 1);
    show.api
        .assert_end_reason(
            &Keys::live_a(),
            &show.id,
            "error",
            Some("preparing_timeout"),
        )
        .await;
}

#[tokio::test]
async fn the_sweep_dispatches_again_when_the_retry_timer_was_lost() {
    let show = Show::preparing(30).await;
    show.api
        .timers()
        .take_due(show.api.now() + Duration::days(1));
    show.api.advance(Duration::seconds(61));
    let app = &show.api.runtime.app;
    assert_eq!(hosting_app::service::timers::sweep(app).await.unwrap(), 1);
    assert_eq!(show.dispatches(), 2);
    assert_eq!(
        hosting_app::service::timers::sweep(app).await.unwrap(),
        0,
        "once"
    );
    assert_eq!(show.dispatches(), 2);
}

#[tokio::test]
async fn a_host_that_drops_and_rejoins_within_the_window_keeps_the_show_live() {
    for reason in DROPS {
        let show = Show::live(30).await;
        show.fake.viewer_joins(&show.room);
        show.api.livekit_sends().await;
        show.api.advance(Duration::minutes(5));
        let mut before = show.detail().await;
        show.host_leaves(reason, false).await;
        assert_eq!(show.detail().await["status"], "live", "{reason}");
        assert_eq!(show.dispatches(), 2, "{reason}: dispatched again at once");
        show.api.advance(Duration::seconds(30));
        show.host_joins().await;
        let mut after = show.detail().await;
        // Its live time runs on through the window, as the rest stays as it was.
        let live_ms =
            |d: &mut Value| d.as_object_mut().unwrap().remove("usage").unwrap()["live_ms"].clone();
        let (was, is) = (live_ms(&mut before), live_ms(&mut after));
        assert_eq!(
            is.as_i64().unwrap() - was.as_i64().unwrap(),
            30_000,
            "{reason}"
        );
        assert_eq!(after, before, "{reason}: the show goes on as it was");
        assert_eq!(show.api.advance_and_fire(Duration::minutes(2)).await, 0);
        assert_eq!(show.detail().await["status"], "live");
        assert_eq!(show.dispatches(), 2);
        assert_eq!(
            show.events().await,
            ["stream.started"],
            "{reason}: no event"
        );
        assert_eq!(show.fake.count(DELETE_ROOM), 0);
    }
}

#[tokio::test]
async fn a_host_that_does_not_come_back_ends_in_error_as_of_the_drop() {
    let show = Show::live_configured(|app| app.with_dispatch_retry_secs(20), 30).await;
    let started = at(&show.detail().await, "started_at");
    show.api.advance(Duration::minutes(12));
    let dropped = show.api.now();
    show.host_leaves("SERVER_SHUTDOWN", false).await;
    // Dispatched at once, then every 20 s until the window ends (outside the preparing cap).
    assert_eq!(show.dispatches(), 2);
    assert_eq!(show.api.advance_and_fire(Duration::seconds(20)).await, 1);
    assert_eq!(show.api.advance_and_fire(Duration::seconds(20)).await, 1);
    assert_eq!(show.dispatches(), 4);
    // During the window it holds its slot and its room.
    assert_eq!(show.api.active_streams("brand_a").await, 1);
    assert_eq!(show.fake.count(DELETE_ROOM), 0);
    assert_eq!(show.api.advance_and_fire(Duration::seconds(19)).await, 0);
    let during = show.detail().await;
    assert_eq!(during["status"], "live");
    // While the window is open the stream is live and its usage runs on.
    let so_far = (show.api.now() - started).num_milliseconds();
    assert_eq!(
        during["usage"],
        json!({"live_ms": so_far, "in_progress": true})
    );
    assert_eq!(show.api.advance_and_fire(Duration::seconds(1)).await, 1);
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "error", Some("host_lost"))
        .await;
    let detail = show.detail().await;
    assert_eq!(at(&detail, "ended_at"), dropped, "no minute of the window");
    // ...and the end takes the window back: usage stops at the drop (docs/usage.md).
    let billed = (dropped - started).num_milliseconds();
    assert_eq!(
        detail["usage"],
        json!({"live_ms": billed, "in_progress": false})
    );
    assert_eq!(show.dispatches(), 4);
    assert_eq!(show.events().await, ["stream.started", "stream.error"]);
    assert_eq!(show.api.active_streams("brand_a").await, 0);
    assert_eq!(show.fake.count(DELETE_ROOM), 1);
    let analytics = show.api.get("/analytics?period=24h", &Keys::live_a()).await;
    assert_eq!(
        analytics.body["total_minutes"],
        (dropped - started).num_minutes()
    );
    assert!(show.api.timers().pending().is_empty());
}

#[tokio::test]
async fn delete_room_finished_and_the_duration_end_during_a_window_end_as_of_the_drop() {
    // DELETE.
    let show = Show::live(30).await;
    show.api.advance(Duration::minutes(4));
    let dropped = show.api.now();
    show.host_leaves("SIGNAL_CLOSE", false).await;
    show.api.advance(Duration::seconds(40));
    let r = show
        .api
        .delete(&format!("/streams/{}", show.id), &Keys::live_a())
        .await;
    r.assert_status(200);
    assert_eq!(at(&r.body, "ended_at"), dropped);
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "ended", Some("requested"))
        .await;
    assert_eq!(show.fake.count(DELETE_ROOM), 1);

    // room_finished.
    let show = Show::live(30).await;
    show.api.advance(Duration::minutes(4));
    let dropped = show.api.now();
    show.host_leaves("MEDIA_FAILURE", false).await;
    show.api.advance(Duration::seconds(10));
    // LiveKit closes the room by itself.
    show.fake.close_room(&show.room);
    show.api.livekit_sends().await;
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "ended", Some("room_finished"))
        .await;
    assert_eq!(at(&show.detail().await, "ended_at"), dropped);

    // The duration end.
    let show = Show::live(10).await;
    show.api
        .advance(Duration::minutes(9) + Duration::seconds(30));
    let dropped = show.api.now();
    show.host_leaves("CONNECTION_TIMEOUT", false).await;
    assert_eq!(show.api.advance_and_fire(Duration::seconds(30)).await, 1);
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "ended", Some("duration_elapsed"))
        .await;
    assert_eq!(at(&show.detail().await, "ended_at"), dropped);
    assert_eq!(show.events().await, ["stream.started", "stream.ended"]);
    assert_eq!(show.api.active_streams("brand_a").await, 0);
}

#[tokio::test]
async fn a_drop_after_a_rejoin_opens_a_new_window() {
    let show = Show::live(30).await;
    show.api.advance(Duration::minutes(2));
    show.host_leaves("SIGNAL_CLOSE", false).await;
    show.api.advance(Duration::seconds(20));
    show.host_joins().await;
    show.api.advance(Duration::minutes(3));
    let second_drop = show.api.now();
    show.host_leaves("SIGNAL_CLOSE", false).await;
    assert_eq!(show.dispatches(), 3, "the launch's and one per window");
    assert_eq!(show.api.advance_and_fire(Duration::seconds(60)).await, 1);
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "error", Some("host_lost"))
        .await;
    assert_eq!(at(&show.detail().await, "ended_at"), second_drop);
}

#[tokio::test]
async fn a_drop_reported_after_its_window_ended_ends_the_stream_at_once() {
    let show = Show::live(30).await;
    show.api.advance(Duration::minutes(5));
    let dropped = show.api.now();
    let host = show.host();
    show.fake
        .host_leaves(&show.room, &host.identity, "CONNECTION_TIMEOUT", false);
    // Delivered 90 s late (no timer or sweep ran meanwhile).
    let [event]: [Value; 1] = show.fake.take_webhooks().try_into().unwrap();
    show.api.advance(Duration::seconds(90));
    show.send(&event).await;
    show.api
        .assert_end_reason(&Keys::live_a(), &show.id, "error", Some("host_lost"))
        .await;
    assert_eq!(at(&show.detail().await, "ended_at"), dropped);
    // Resent by LiveKit: once.
    show.send(&event).await;
    assert_eq!(show.events().await, ["stream.started", "stream.error"]);
}

/// Sends each webhook the fake LiveKit has waiting until it is accepted: under the faults a
/// window's dispatch may be refused, so what an answer brings (its agent) is sent too.
async fn deliver_all_until_accepted(show: &Show) {
    for _ in 0..20 {
        let events = show.fake.take_webhooks();
        if events.is_empty() {
            return;
        }
        for event in events {
            show.api.post_livekit_until_accepted(&event, |_| {}).await;
        }
    }
}

/// The stream's detail once a read gets through.
async fn detail_through_faults(show: &Show) -> Value {
    for _ in 0..50 {
        let r = show
            .api
            .get(&format!("/streams/{}", show.id), &Keys::live_a())
            .await;
        if r.status == 200 {
            return r.body;
        }
    }
    panic!("the stream was never read");
}

#[tokio::test]
#[ignore = "needs DynamoDB (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_windows_under_aws_faults_end_once_or_go_on() {
    const FAULTS: &str = r#"{"throttling": 0.05, "internal_error": 0.05,
        "transaction_conflict": 0.1, "transaction_throttled": 0.05, "lost_response": 0.1,
        "stale_index": 0.3, "unprocessed": 0.3, "conflicts": {"hold_ms": 15}}"#;
    for rejoin in [false, true] {
        let show = Show::live(30).await;
        let table = show.api.table().expect("DynamoDB").to_owned();
        show.api.advance(Duration::minutes(6));
        let dropped = show.api.now();
        crate::common::faults::set(&table, serde_json::from_str(FAULTS).unwrap()).await;
        let host = show.host();
        show.fake
            .host_leaves(&show.room, &host.identity, "CONNECTION_TIMEOUT", false);
        deliver_all_until_accepted(&show).await;
        if rejoin {
            show.api.advance(Duration::seconds(30));
            show.fake.start_pending_agents();
            deliver_all_until_accepted(&show).await;
        }
        show.api.advance(Duration::seconds(61));
        // Timers and sweeps, failing or not, until nothing is due.
        let app = &show.api.runtime.app;
        for _ in 0..30 {
            show.api.advance_and_fire(Duration::zero()).await;
            if matches!(hosting_app::service::timers::sweep(app).await, Ok(0)) {
                break;
            }
        }
        let stats = crate::common::faults::stats(&table).await;
        crate::common::faults::clear(&table).await;
        // The run met the faults it is about, or it proves nothing.
        assert!(crate::common::faults::injected(&stats) > 0, "{stats}");
        // Without faults a sweep finds what is still due and does it, so the next finds
        // nothing: a bounded number of sweeps, or the window never settles.
        let settled = {
            let mut settled = false;
            for _ in 0..5 {
                if matches!(hosting_app::service::timers::sweep(app).await, Ok(0)) {
                    settled = true;
                    break;
                }
            }
            settled
        };
        assert!(settled, "sweeps still found work after the faults ended");
        println!("faults: {stats}");

        let detail = detail_through_faults(&show).await;
        if rejoin {
            assert_eq!(detail["status"], "live", "{detail}");
            assert_eq!(show.events().await, ["stream.started"]);
            assert_eq!(show.api.active_streams("brand_a").await, 1);
        } else {
            assert_eq!(
                (detail["status"].as_str(), detail["end_reason"].as_str()),
                (Some("error"), Some("host_lost")),
                "{detail}"
            );
            assert_eq!(at(&detail, "ended_at"), dropped);
            assert_eq!(show.events().await, ["stream.started", "stream.error"]);
            assert_eq!(show.api.active_streams("brand_a").await, 0);
            assert!(
                !show.fake.rooms().contains(&show.room),
                "the room is deleted"
            );
        }
    }
}
