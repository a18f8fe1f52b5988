//! The egress as LiveKit runs it (docs/destinations.md, "What LiveKit reports", "What LiveKit
//! accepts"): results reported with their keys redacted and Twitch under another host, ingest
//! URLs LiveKit could not split, and destinations LiveKit would report alike.

use super::*;
use crate::common::fake_livekit::{NEAREST_TWITCH_INGEST, START_EGRESS, egress_reported_url};

const FACEBOOK_INGEST: &str = "rtmps://live-api-s.facebook.com:443/rtmp";
const TWITCH_INGEST: &str = "rtmps://jfk.contribute.live-video.net/app";
const FB_KEY: &str = "FB-1234567890-abcdef";
const TWITCH_KEY: &str = "live_0123456789_secret";
/// Short keys are redacted with fewer characters kept (`{a...e}`).
const SHORT_KEY: &str = "k1x2e";

#[tokio::test]
async fn results_redacted_as_livekit_reports_them_move_each_platforms_destination() {
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(
        &api,
        json!([
            destination("youtube", YOUTUBE_INGEST, YT_KEY),
            destination("tiktok", TIKTOK_INGEST, SHORT_KEY),
            destination("facebook", FACEBOOK_INGEST, FB_KEY),
            destination("twitch", TWITCH_INGEST, TWITCH_KEY),
        ]),
    )
    .await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    let egress = only_egress(&fake);
    // LiveKit pushes Twitch to the ingest nearest to it, not the one given.
    let twitch_output = output(TWITCH_INGEST, TWITCH_KEY);
    let pushed = &fake.egresses()[&egress].urls;
    assert!(
        pushed.contains(&format!("{NEAREST_TWITCH_INGEST}/{TWITCH_KEY}")),
        "{pushed:?}"
    );
    // What LiveKit reports names no key and, for Twitch, another host.
    let reported = egress_reported_url(&twitch_output);
    assert_eq!(
        reported,
        "rtmps://sfo.contribute.live-video.net/app/{liv...ret}"
    );
    assert_eq!(
        egress_reported_url(&output(TIKTOK_INGEST, SHORT_KEY)),
        "rtmps://push-rtmp.tiktokcdn.com/live/{k...e}"
    );
    let outputs = [
        yt(),
        output(TIKTOK_INGEST, SHORT_KEY),
        output(FACEBOOK_INGEST, FB_KEY),
        twitch_output.clone(),
    ];
    let results: Vec<(&str, &str, &str)> = outputs
        .iter()
        .map(|url| (url.as_str(), "ACTIVE", ""))
        .collect();
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &results,
        "EV_active",
    )
    .await;
    assert_eq!(
        statuses(&api, &id).await,
        ["active", "active", "active", "active"]
    );
    // A failure in LiveKit's words, naming the output as LiveKit names it: the destination
    // fails, and its error shows no part of the key.
    let error = format!("rtmp connection to {reported} closed: stream key rejected");
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&twitch_output, "FAILED", &error)],
        "EV_fail",
    )
    .await;
    let shown = destinations_of(&api, &id).await;
    assert_eq!(
        statuses(&api, &id).await,
        ["active", "active", "active", "failed"]
    );
    let shown_error = shown[3]["error"].as_str().unwrap();
    assert!(shown_error.contains("stream key rejected"), "{shown_error}");
    for part in ["liv...ret", TWITCH_KEY] {
        assert!(!shown_error.contains(part), "{shown_error}");
    }
    let mut events = event_types(&api, &id).await;
    events.dedup();
    assert_eq!(
        events,
        [
            "stream.destination_active",
            "stream.destination_failed",
            "stream.started"
        ]
    );
    assert_eq!(
        api.events_of(&id)
            .await
            .iter()
            .filter(|e| *e == "stream.destination_active")
            .count(),
        4
    );
}

#[tokio::test]
async fn kick_and_instagram_results_redacted_as_livekit_reports_them_move_theirs() {
    const KICK_INGEST: &str = "rtmps://fa723fc1b171.global-contribute.live-video.net/app/";
    const KICK_KEY: &str = "sk_us-west-2_AbCdEf0123";
    const INSTAGRAM_INGEST: &str = "rtmps://edgetee-upload-mxp1-1.xx.fbcdn.net:443/rtmp";
    const INSTAGRAM_KEY: &str = "1789042?s_bl=1&s_sw=0&a=Abz9";
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(
        &api,
        json!([
            destination("kick", KICK_INGEST, KICK_KEY),
            destination("instagram", INSTAGRAM_INGEST, INSTAGRAM_KEY),
        ]),
    )
    .await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    let egress = only_egress(&fake);
    let kick = output(KICK_INGEST.trim_end_matches('/'), KICK_KEY);
    let instagram = output(INSTAGRAM_INGEST, INSTAGRAM_KEY);
    assert_eq!(
        egress_reported_url(&instagram),
        "rtmps://edgetee-upload-mxp1-1.xx.fbcdn.net:443/rtmp/{178...bz9}"
    );
    egress_says(
        &api,
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&kick, "ACTIVE", ""), (&instagram, "FAILED", "broken pipe")],
        "EV_both",
    )
    .await;
    assert_eq!(statuses(&api, &id).await, ["active", "failed"]);
}

#[tokio::test]
async fn an_ingest_without_an_application_path_is_refused_and_one_trailing_slash_is_dropped() {
    let (api, fake) = app_with_livekit().await;
    for ingest in [
        "rtmps://live.example.com",
        "rtmps://live.example.com/",
        "rtmps://live.example.com//",
    ] {
        let r = api
            .start(
                &Keys::live_a(),
                json!({"destinations": [destination("youtube", ingest, YT_KEY)]}),
            )
            .await;
        r.assert_error(400, "invalid_fields");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("destinations[0].ingest_url"),
            "{ingest}: {}",
            r.body
        );
    }
    // The same ingest with one trailing `/` pushes to the same URL, without `//`.
    let (id, room) = start_with(
        &api,
        json!([destination(
            "youtube",
            "rtmp://a.rtmp.youtube.com/live2/",
            YT_KEY
        )]),
    )
    .await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    assert_eq!(starts(&fake)[0].0.stream_outputs[0].urls, [yt()]);
    // Shown as given.
    assert_eq!(
        destinations_of(&api, &id).await[0]["ingest_url"],
        "rtmp://a.rtmp.youtube.com/live2/"
    );
    // Added while live: the same rule.
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination(
                "kick",
                "rtmps://fa723fc1b171.global-contribute.live-video.net",
                "sk_1abc",
            ),
        )
        .await;
    r.assert_error(400, "invalid_fields");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("ingest_url"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn destinations_livekit_would_report_alike_are_refused_at_start_and_when_added() {
    let (api, _fake) = app_with_livekit().await;
    // Same host and path, keys redacted alike: LiveKit's reports could not tell them apart.
    let alike = json!([
        destination("youtube", YOUTUBE_INGEST, "yt-key-SECRET-0001-abcd"),
        destination(
            "youtube",
            "rtmps://a.rtmp.youtube.com/live2/",
            "yt-other-key-zzz-bcd"
        ),
    ]);
    let r = api
        .start(&Keys::live_a(), json!({"destinations": alike}))
        .await;
    r.assert_error(400, "invalid_fields");
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("destinations[1].ingest_url"),
        "{message}"
    );
    assert!(
        !message.contains("yt-") && !message.contains("bcd"),
        "{message}"
    );
    // Another host, or another path, is told apart.
    let (id, _) = start_with(
        &api,
        json!([
            destination("youtube", YOUTUBE_INGEST, "yt-key-SECRET-0001-abcd"),
            destination(
                "youtube",
                "rtmp://b.rtmp.youtube.com/live2",
                "yt-other-key-zzz-bcd"
            ),
            destination(
                "youtube",
                "rtmp://a.rtmp.youtube.com/live3",
                "yt-other-key-zzz-bcd"
            ),
        ]),
    )
    .await;
    // Added: refused after the stream's checks, like a sixth destination.
    let r = api
        .post(
            &format!("/streams/{id}/destinations"),
            &Keys::live_a(),
            destination("youtube", YOUTUBE_INGEST, "yt-a-third-key-xyz-bcd"),
        )
        .await;
    r.assert_error(400, "invalid_fields");
    let r = api
        .post(
            "/streams/00000000-0000-4000-8000-000000000000/destinations",
            &Keys::live_a(),
            destination("youtube", YOUTUBE_INGEST, "yt-a-third-key-xyz-bcd"),
        )
        .await;
    r.assert_error(404, "not_found");
    // Once the first is removed, its like may be added.
    let first = destinations_of(&api, &id).await[0]["destination_id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.delete(
        &format!("/streams/{id}/destinations/{first}"),
        &Keys::live_a(),
    )
    .await
    .assert_status(200);
    api.post(
        &format!("/streams/{id}/destinations"),
        &Keys::live_a(),
        destination("youtube", YOUTUBE_INGEST, "yt-a-third-key-xyz-bcd"),
    )
    .await
    .assert_status(201);
}

#[tokio::test]
async fn an_egress_livekit_refuses_for_a_bad_url_is_never_asked_for() {
    // The fake refuses what LiveKit refuses: proven directly, since the checks keep every such
    // URL from reaching it.
    assert!(
        crate::common::fake_livekit::egress_parsed_url("rtmps://live.example.com/KEY")
            .unwrap_err()
            .starts_with("invalid url")
    );
    let (api, fake) = app_with_livekit().await;
    let (id, room) = start_with(&api, two_destinations()).await;
    agent_joins(&api, &room, "EV_join").await;
    api.runtime.fire_due_timers().await;
    assert_eq!(fake.count(START_EGRESS), 1);
    assert_eq!(statuses(&api, &id).await, ["starting", "starting"]);
}
