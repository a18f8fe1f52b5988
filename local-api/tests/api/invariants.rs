//! The check every `TestApp` makes when dropped (`common/invariants.rs`) is not vacuous: a
//! slot count or an event list that breaks an invariant fails it, and so do an outbox event
//! that cannot be relayed and a finished stream's room that exists again, on either backend;
//! and dropping an app whose store breaks one fails the test that dropped it; a show left
//! `starting` is reported.

use std::panic::{AssertUnwindSafe, catch_unwind};

use chrono::TimeDelta;
use hosting_domain::EventType;
use serde_json::json;

use crate::common::fake_livekit::FakeLiveKit;
use crate::common::invariants::{
    app_at, brands, check_store, doubled_hosts, drain, drain_time, undeleted_rooms, undrained,
    unstopped_egresses,
};
use crate::common::{Keys, TestApp, register_webhook, start_live};

#[tokio::test]
async fn a_broken_invariant_fails_the_drop_check() {
    let api = TestApp::new().await;
    // A webhook that wants the start, so that relaying it queues a delivery.
    register_webhook(
        &api,
        &Keys::test_a(),
        "https://hooks.example.com/hook",
        json!(["stream.started"]),
    )
    .await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let finished = api.start_test_stream(&Keys::test_a()).await;
    api.call(
        "POST",
        &format!("/test_helpers/streams/{finished}/finish"),
        Some(&Keys::test_a()),
        None,
    )
    .await
    .assert_status(200);
    let events = api.emitted_events().await;
    let store = &*api.runtime.app.store;
    let seeded = api.seeded_streams();
    assert_eq!(
        check_store(
            store,
            &events,
            |brand| u32::from(brand == "brand_a"),
            &seeded
        )
        .await,
        Vec::<String>::new(),
        "the store as the test left it"
    );

    // A finished stream whose final event is missing.
    let without_final: Vec<_> = events
        .iter()
        .filter(|event| {
            !(event.stream_id.map(|id| id.to_string()).unwrap_or_default() == finished
                && event.event_type == EventType::StreamEnded)
        })
        .cloned()
        .collect();
    let violations = check_store(
        store,
        &without_final,
        |brand| u32::from(brand == "brand_a"),
        &seeded,
    )
    .await;
    assert_eq!(
        violations,
        vec![format!("stream {finished}: ended with no final event")]
    );

    // A slot count that disagrees with the live stream, and its start emitted twice.
    let doubled = [events.clone(), events].concat();
    let violations = check_store(store, &doubled, |_| 0, &seeded).await;
    assert!(
        violations.contains(&"brand_a: 0 active slots for 1 preparing or live streams".to_owned()),
        "{violations:?}"
    );
    assert!(
        violations.contains(&format!("stream {id}: 2 stream.started events")),
        "{violations:?}"
    );

    // An event the delivery queue refuses: the drain leaves it waiting for its retry.
    let app = &api.runtime.app;
    let draining_at = |at| {
        app_at(
            app.config.clone(),
            app.store.clone(),
            app.queue.clone(),
            app.vault.clone(),
            at,
        )
    };
    api.refuse_queue_bodies_containing(Some(&id)).await;
    let at = drain_time(api.now());
    assert_eq!(drain(&draining_at(at)).await, Vec::<String>::new());
    let left = undrained(store, at).await;
    assert!(
        left.iter()
            .any(|record| record.ends_with(&format!("of stream {id}: not relayed"))),
        "{left:?}"
    );
    // Once the queue takes it, its retry relays it.
    api.refuse_queue_bodies_containing(None).await;
    let later = at + TimeDelta::days(1);
    drain(&draining_at(later)).await;
    assert_eq!(undrained(store, later).await, Vec::<String>::new());

    // A finished stream's room that exists again, on an app with a (fake) LiveKit.
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    // Its host never joins: the preparing timeout ends it in `error`.
    assert_eq!(api.advance_and_fire(TimeDelta::minutes(5)).await, 1);
    let app = &api.runtime.app;
    let at = drain_time(api.now());
    drain(&app_at(
        app.config.clone(),
        app.store.clone(),
        app.queue.clone(),
        app.vault.clone(),
        at,
    ))
    .await;
    let store = &*app.store;
    let brands = brands(&api.emitted_events().await);
    assert_eq!(
        undeleted_rooms(store, &brands, &fake).await,
        Vec::<String>::new(),
        "the failed stream's room is deleted"
    );
    assert_eq!(undrained(store, at).await, Vec::<String>::new());

    // Someone joins the room again after its cleanup was done.
    fake.join(&room);
    assert_eq!(
        undeleted_rooms(store, &brands, &fake).await,
        [format!(
            "stream {id} is error, but its room {room} still exists"
        )]
    );
    api.skip_rooms_check("the test re-created a failed stream's room on purpose");
}

/// A live stream with a second host in its room is reported: the service removes one as soon
/// as it learns of it (docs/livekit.md, "One host"), so one left means it never did.
#[tokio::test]
async fn a_live_stream_with_two_hosts_is_reported() {
    let fake = FakeLiveKit::start().await;
    fake.agents(crate::common::fake_livekit::Agents::JoinAtOnce);
    let api = TestApp::builder().with_livekit(&fake).await;
    let (id, room, _) = start_live(&api, 30).await;
    api.livekit_sends().await;
    let store = &*api.runtime.app.store;
    let brands = brands(&api.emitted_events().await);
    assert_eq!(
        doubled_hosts(store, &brands, &fake).await,
        Vec::<String>::new()
    );
    // A second host whose join LiveKit never reported.
    let second = fake.agent_joins_with(&room, &[("lk.agent_name", "stream-host")]);
    let _ = fake.take_webhooks();
    let found = doubled_hosts(store, &brands, &fake).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!("stream {id} is live with 2 hosts"))
            && found[0].contains(&second.identity),
        "{found:?}"
    );
    api.skip_rooms_check("the test left a second host in the room on purpose");
}

/// A finished stream whose destination was left `active` (its end never reached it) is
/// reported, as the end leaves every destination final.
#[tokio::test]
async fn a_finished_stream_with_a_destination_still_on_the_air_is_reported() {
    let api = TestApp::new().await;
    let r = api
        .start(
            &Keys::test_a(),
            json!({"destinations": [{"platform": "youtube",
                "ingest_url": "rtmp://a.rtmp.youtube.com/live2", "stream_key": "yt-key-0001-abcd"}]}),
        )
        .await;
    r.assert_status(201);
    let id: uuid::Uuid = r.body["stream_id"].as_str().unwrap().parse().unwrap();
    let store = &api.runtime.app.store;
    let stream = store.get_stream(id).await.unwrap().expect("the stream");
    let destination = stream.destinations[0].clone();
    assert!(!destination.status.is_final(), "{destination:?}");
    let copy = hosting_domain::Stream {
        id: uuid::Uuid::new_v4(),
        status: hosting_domain::StreamStatus::Ended,
        ended_at: Some(api.now()),
        end_reason: Some(hosting_domain::EndReason::Requested),
        ..stream
    };
    store.put_stream(&copy).await.unwrap();
    let brands = ["brand_a".to_owned()].into();
    assert_eq!(
        unstopped_egresses(&**store, &brands, &Default::default()).await,
        [format!(
            "stream {} is finished, but its destination {} is {}",
            copy.id,
            destination.destination_id,
            destination.status.as_str()
        )]
    );
    // The copy broke the store on purpose.
    api.skip_invariants();
}

/// An ended stream written behind the API's back: no event ended it.
async fn break_an_invariant(api: &TestApp) -> uuid::Uuid {
    let id: uuid::Uuid = api
        .start_test_stream(&Keys::test_a())
        .await
        .parse()
        .unwrap();
    let store = &api.runtime.app.store;
    let stream = store.get_stream(id).await.unwrap().expect("the stream");
    let copy = hosting_domain::Stream {
        id: uuid::Uuid::new_v4(),
        status: hosting_domain::StreamStatus::Ended,
        ended_at: Some(api.now()),
        end_reason: Some(hosting_domain::EndReason::Requested),
        room_name: None,
        ..stream
    };
    store.put_stream(&copy).await.unwrap();
    copy.id
}

/// The drop itself fails the test that broke an invariant, on either backend; and an app whose
/// store outage has ended is checked again.
#[tokio::test]
async fn dropping_an_app_that_broke_an_invariant_panics() {
    let api = TestApp::new().await;
    let copy = break_an_invariant(&api).await;
    let dropped = catch_unwind(AssertUnwindSafe(move || drop(api)));
    let panic = dropped.expect_err("the drop check failed the test");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("the test left the store inconsistent")
            && message.contains(&format!("stream {copy}: ended with no final event")),
        "{message}"
    );

    // During an outage the store cannot be checked; after it, it is again.
    let api = TestApp::new().await;
    api.store_outage(true).await;
    api.store_outage(false).await;
    break_an_invariant(&api).await;
    assert!(catch_unwind(AssertUnwindSafe(move || drop(api))).is_err());
}

/// The shows' part of the check: a show left `starting` (a starter that died and was never
/// taken over) is reported; once the sweep has taken it over, nothing is.
#[tokio::test]
async fn a_show_left_starting_is_reported_until_the_sweep_takes_it_over() {
    use crate::common::show_invariants::check_shows;
    let api = TestApp::new().await;
    let starts_at = (api.now() + TimeDelta::minutes(5)).to_rfc3339();
    let r = api
        .post(
            "/shows",
            &Keys::test_a(),
            json!({"creator_id": crate::common::CREATOR_AVA, "product_name": "P",
                   "platform": "kick", "starts_at": starts_at}),
        )
        .await;
    r.assert_status(201);
    let id = r.body["show_id"].as_str().unwrap();
    let show_id = uuid::Uuid::parse_str(id.strip_prefix("shw_").unwrap()).unwrap();
    api.advance(TimeDelta::minutes(5));
    let store = &api.runtime.app.store;
    let brands = ["brand_a".to_owned()].into();
    store
        .claim_show(
            "brand_a",
            show_id,
            api.now(),
            api.now() + TimeDelta::minutes(1),
        )
        .await
        .unwrap()
        .expect("claimed");
    assert_eq!(
        check_shows(&**store, &brands).await,
        [format!("show {id}: left starting")]
    );
    api.advance(TimeDelta::minutes(1));
    hosting_app::service::shows::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(check_shows(&**store, &brands).await, Vec::<String>::new());
}
