//! Destinations while the stream is preparing or live: adding and removing one, every check in
//! its order, and the running egress kept to exactly the destinations it should push to, also
//! when they change while its start is in flight.

use super::*;
use crate::common::fake_livekit::{Call, START_EGRESS, UPDATE_STREAM};

fn add_path(id: &str) -> String {
    format!("/streams/{id}/destinations")
}

#[tokio::test]
async fn adding_checks_the_body_then_the_stream_then_the_count() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    // The body first: whatever the stream, a bad body answers its code.
    for (path, key) in [
        (add_path(&id), Keys::test_a()),
        (add_path(ABSENT_ID), Keys::test_a()),
        (add_path("not-a-uuid"), Keys::test_a()),
        (add_path(&id), Keys::test_b()),
    ] {
        api.post(&path, &key, json!({"platform": "tiktok"}))
            .await
            .assert_error(400, "missing_fields");
        api.post(
            &path,
            &key,
            json!({"platform": "tiktok", "ingest_url": "rtmp://127.1/x", "stream_key": "k"}),
        )
        .await
        .assert_error(400, "invalid_fields");
    }
    let r = api
        .post(
            &add_path(&id),
            &Keys::test_a(),
            json!({"platform": "tiktok", "ingest_url": TIKTOK_INGEST}),
        )
        .await;
    r.assert_error(400, "missing_fields");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stream_key")
    );
    // A body that is not an object.
    api.post(&add_path(&id), &Keys::test_a(), json!([1]))
        .await
        .assert_error(400, "missing_fields");
    // A brand whose vertical permits no platform.
    api.post(
        &add_path(&id),
        &Keys::test_gaming(),
        destination("tiktok", TIKTOK_INGEST, "k"),
    )
    .await
    .assert_error(403, "vertical_mismatch");
    // Then the stream.
    let good = destination("tiktok", TIKTOK_INGEST, "key-added-1");
    for (path, key) in [
        (add_path(ABSENT_ID), Keys::test_a()),
        (add_path("not-a-uuid"), Keys::test_a()),
        (add_path(&id), Keys::test_b()),
    ] {
        api.post(&path, &key, good.clone())
            .await
            .assert_error(404, "not_found");
    }
    // Then the count and repeats: five, a repeat of one, a sixth.
    for n in 0..5 {
        let r = api
            .post(
                &add_path(&id),
                &Keys::test_a(),
                destination("tiktok", TIKTOK_INGEST, &format!("key-added-{n}")),
            )
            .await;
        r.assert_status(201);
        assert_eq!(r.body["status"], "active");
    }
    let sixth = destination("youtube", YOUTUBE_INGEST, "key-sixth");
    api.post(&add_path(&id), &Keys::test_a(), sixth.clone())
        .await
        .assert_error(400, "invalid_fields");
    // A removed destination no longer counts, and no longer repeats.
    let first = destinations_of(&api, &id).await[0]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let removed = api
        .delete(
            &format!("/streams/{id}/destinations/{first}"),
            &Keys::test_a(),
        )
        .await;
    removed.assert_status(200);
    assert_eq!(removed.body["status"], "removed");
    api.post(
        &add_path(&id),
        &Keys::test_a(),
        destination("tiktok", TIKTOK_INGEST, "key-added-1"),
    )
    .await
    .assert_error(400, "invalid_fields");
    api.post(
        &add_path(&id),
        &Keys::test_a(),
        destination("tiktok", TIKTOK_INGEST, "key-added-0"),
    )
    .await
    .assert_status(201);
    // A finished stream takes none.
    api.post(
        &format!("/test_helpers/streams/{id}/finish"),
        &Keys::test_a(),
        json!({}),
    )
    .await
    .assert_status(200);
    api.post(&add_path(&id), &Keys::test_a(), sixth)
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn removing_an_unknown_or_final_destination_is_not_found() {
    let api = TestApp::new().await;
    let r = api
        .start(&Keys::test_a(), json!({"destinations": two_destinations()}))
        .await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    let first = r.body["destinations"][0]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path =
        |stream: &str, destination: &str| format!("/streams/{stream}/destinations/{destination}");
    for (stream, destination, key) in [
        (
            id.as_str(),
            "dst_00000000000000000000000000000000",
            Keys::test_a(),
        ),
        (id.as_str(), "nonsense", Keys::test_a()),
        (ABSENT_ID, first.as_str(), Keys::test_a()),
        ("not-a-uuid", first.as_str(), Keys::test_a()),
        (id.as_str(), first.as_str(), Keys::test_b()),
    ] {
        api.delete(&path(stream, destination), &key)
            .await
            .assert_error(404, "not_found");
    }
    api.delete(&path(&id, &first), &Keys::test_a())
        .await
        .assert_status(200);
    api.delete(&path(&id, &first), &Keys::test_a())
        .await
        .assert_error(404, "not_found");
    assert_eq!(statuses(&api, &id).await, ["removed", "active"]);
}

fn update_calls(fake: &FakeLiveKit) -> Vec<livekit_protocol::UpdateStreamRequest> {
    fake.calls()
        .into_iter()
        .filter_map(|call| match call.call {
            Call::UpdateStream(req) => Some(req),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn destinations_added_and_removed_while_live_update_the_running_egress() {
    let (api, fake) = app_with_livekit().await;
    let (id, room, egress) = airing(&api, &fake).await;
    let twitch = output("rtmp://live.twitch.tv/app", "tw-key-SECRET-0003");
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination("twitch", "rtmp://live.twitch.tv/app", "tw-key-SECRET-0003"),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["status"], "starting");
    assert_eq!(r.body["stream_key_last4"], "0003");
    assert!(!r.body.to_string().contains("SECRET"));
    let updates = update_calls(&fake);
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].egress_id, egress);
    assert_eq!(updates[0].add_output_urls, std::slice::from_ref(&twitch));
    assert!(fake.egresses()[&egress].urls.contains(&twitch));
    let update_claims = fake
        .calls()
        .into_iter()
        .find(|c| c.method == UPDATE_STREAM)
        .unwrap()
        .claims;
    assert_eq!(update_claims["video"]["roomRecord"], true);
    // Removing TikTok's takes its output out first.
    let tiktok = destinations_of(&api, &id).await[1]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = api
        .delete(
            &format!("/streams/{id}/destinations/{tiktok}"),
            &Keys::live_a(),
        )
        .await;
    r.assert_status(200);
    assert_eq!(r.body["status"], "removed");
    assert!(r.body["ended_at"].is_string());
    let updates = update_calls(&fake);
    assert_eq!(updates[1].remove_output_urls, [tt()]);
    assert!(updates[1].add_output_urls.is_empty());
    assert_eq!(
        statuses(&api, &id).await,
        ["starting", "removed", "starting"]
    );
    // A result for a removed destination moves nothing.
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&tt(), "ACTIVE", "")],
        "EV_r",
    )
    .await;
    assert_eq!(
        statuses(&api, &id).await,
        ["starting", "removed", "starting"]
    );
}

#[tokio::test]
async fn a_destination_added_before_going_live_or_with_no_egress_running_is_in_the_next_start() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, json!([])).await;
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination("youtube", YOUTUBE_INGEST, YT_KEY),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["status"], "pending");
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    assert_eq!(starts(&fake)[0].0.stream_outputs[0].urls, [yt()]);
    // A live stream whose egress is gone: a new one is started for the next destination.
    let (other, other_room) = {
        let (id, room) = start_with(&api, json!([])).await;
        agent_joins(&api, &room, "EV_join2").await;
        (id, room)
    };
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 1, "no destination, no egress");
    let r = api
        .post(
            &format!("/streams/{other}/destinations"),
            &Keys::live_a(),
            destination("tiktok", TIKTOK_INGEST, TT_KEY),
        )
        .await;
    r.assert_status(201);
    assert_eq!(r.body["status"], "starting");
    api.runtime.fire_due_timers().await;
    let made = starts(&fake);
    assert_eq!(made.len(), 2);
    assert_eq!(
        (
            made[1].0.room_name.as_str(),
            made[1].0.stream_outputs[0].urls.clone()
        ),
        (other_room.as_str(), vec![tt()])
    );
}

#[tokio::test]
async fn changes_made_while_the_start_is_in_flight_reach_the_egress_once_it_runs() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    // The start stays in flight for 3 s: the changes below, each a few store round trips,
    // are made once LiveKit has its call and well before it answers, however busy the store.
    fake.delay(START_EGRESS, std::time::Duration::from_secs(3));
    let twitch = output("rtmp://live.twitch.tv/app", "tw-key-SECRET-0003");
    let changes = async {
        let called = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while fake.count(START_EGRESS) == 0 && std::time::Instant::now() < called {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(fake.count(START_EGRESS), 1, "the start is in flight");
        let added = api
            .post(
                &format!("/streams/{id}/destinations"),
                &Keys::live_a(),
                destination("twitch", "rtmp://live.twitch.tv/app", "tw-key-SECRET-0003"),
            )
            .await;
        added.assert_status(201);
        assert_eq!(added.body["status"], "starting");
        let tiktok = destinations_of(&api, &id).await[1]["destination_id"]
            .as_str()
            .unwrap()
            .to_owned();
        api.delete(
            &format!("/streams/{id}/destinations/{tiktok}"),
            &Keys::live_a(),
        )
        .await
        .assert_status(200);
        // No egress yet: nothing to update.
        assert_eq!(fake.count(UPDATE_STREAM), 0);
    };
    tokio::join!(api.runtime.fire_due_timers(), changes);
    assert_eq!(fake.count(START_EGRESS), 1);
    let egress = only_egress(&fake);
    assert_eq!(fake.egresses()[&egress].urls, [yt(), twitch.clone()]);
    let updates = update_calls(&fake);
    assert_eq!(updates.len(), 1);
    assert_eq!(
        (
            updates[0].add_output_urls.clone(),
            updates[0].remove_output_urls.clone()
        ),
        (vec![twitch], vec![tt()])
    );
    assert_eq!(
        statuses(&api, &id).await,
        ["starting", "removed", "starting"]
    );
}
