//! A stream key never travels (docs/destinations.md, "Stream keys"): against the binary with JSON
//! debug logs and the fake LiveKit, a show with destinations goes live, its egress starts,
//! LiveKit reports an output failing with an error that names its URL, a destination is added and
//! removed, the stream ends and every event is delivered. Then every line the server logged, every
//! answer, every delivered body, the delivery log and every LiveKit request but the egress's own
//! are read, and no key (nor an output URL) is in any of them.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::fake_livekit::{
    API_KEY, API_SECRET, Call, FakeLiveKit, START_EGRESS, STOP_EGRESS, agent_joined, egress_event,
    signed_webhook,
};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

const KEYS: [&str; 3] = [
    "sk-live-YOUTUBE-7c1f2e9a",
    "sk-live-TIKTOK-55b0d3e1",
    "sk-live-TWITCH-a9e4c072",
];
const INGESTS: [&str; 3] = [
    "rtmp://a.rtmp.youtube.com/live2",
    "rtmps://push-rtmp.tiktokcdn.com/live",
    "rtmp://live.twitch.tv/app",
];

/// Polls `check` every 50 ms for up to 10 s.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn no_stream_key_is_in_any_log_line_answer_event_delivery_or_other_livekit_call() {
    let fake = FakeLiveKit::start().await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let (mut child, _, base, reader) = spawn_local_api(
        &["--fixed-demo-keys"],
        &[
            ("STORE", "embedded"),
            ("LOG_FORMAT", "json"),
            ("LOG_LEVEL", "debug"),
            ("WEBHOOK_ALLOW_PRIVATE_URLS", "true"),
            ("LIVEKIT_URL", &fake.url),
            ("LIVEKIT_API_KEY", API_KEY),
            ("LIVEKIT_API_SECRET", API_SECRET),
        ],
    );
    let lines = collect_lines(reader);
    let http = reqwest::Client::new();
    let key = hosting_app::seed::FIXED_DEMO_LIVE_KEY;
    let answers = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let call = |method: reqwest::Method, path: String, body: Option<Value>| {
        let (http, answers, base) = (http.clone(), answers.clone(), base.clone());
        async move {
            let mut request = http
                .request(method, format!("{base}{path}"))
                .bearer_auth(key);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let text = request.send().await.unwrap().text().await.unwrap();
            answers.lock().unwrap().push(text.clone());
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)
        }
    };
    let livekit_url = format!("{}/livekit/webhook", base.trim_end_matches("/api/v1"));
    let livekit = |event: Value| {
        let (http, url) = (http.clone(), livekit_url.clone());
        async move {
            let (body, authorization) = signed_webhook(&event);
            let status = http
                .post(url)
                .header("authorization", authorization)
                .body(body)
                .send()
                .await
                .unwrap()
                .status();
            assert_eq!(status, 200);
        }
    };

    let webhook = call(
        reqwest::Method::POST,
        "/webhooks".into(),
        Some(json!({"url": receiver.url(), "events": ["stream.started", "stream.ended", "stream.error",
            "stream.destination_active", "stream.destination_failed"]})),
    )
    .await;
    let webhook_id = webhook["webhook_id"].as_str().unwrap().to_owned();
    let creators: Value = http
        .get(format!("{base}/creators"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let destinations: Vec<Value> = (0..2)
        .map(|i| json!({"platform": "youtube", "ingest_url": INGESTS[i], "stream_key": KEYS[i]}))
        .collect();
    let started = call(
        reqwest::Method::POST,
        "/streams".into(),
        Some(
            json!({"creator_id": creators["creators"][0]["id"], "product_name": "Glow Serum",
            "platform": "tiktok", "duration_minutes": 30, "destinations": destinations}),
        ),
    )
    .await;
    let id = started["stream_id"].as_str().expect("started").to_owned();
    let room = started["room_name"].as_str().unwrap().to_owned();
    livekit(agent_joined(&room, "EV_join")).await;
    eventually("the egress start", || {
        fake.count(START_EGRESS) == 1 && fake.egresses().len() == 1
    })
    .await;
    let egress = fake.egresses().into_keys().next().unwrap();
    let urls: Vec<String> = (0..3)
        .map(|i| format!("{}/{}", INGESTS[i], KEYS[i]))
        .collect();
    let failure = format!("failed to connect to {}: key {} rejected", urls[1], KEYS[1]);
    livekit(egress_event(
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(&urls[0], "ACTIVE", ""), (&urls[1], "FAILED", &failure)],
        "EV_e1",
    ))
    .await;
    let added = call(
        reqwest::Method::POST,
        format!("/streams/{id}/destinations"),
        Some(json!({"platform": "twitch", "ingest_url": INGESTS[2], "stream_key": KEYS[2]})),
    )
    .await;
    assert_eq!(added["status"], "starting", "{added}");
    let added_id = added["destination_id"].as_str().unwrap();
    call(
        reqwest::Method::DELETE,
        format!("/streams/{id}/destinations/{added_id}"),
        None,
    )
    .await;
    call(reqwest::Method::GET, format!("/streams/{id}"), None).await;
    call(reqwest::Method::DELETE, format!("/streams/{id}"), None).await;
    eventually("the egress stop", || fake.count(STOP_EGRESS) >= 1).await;
    // stream.started, stream.destination_active, stream.destination_failed, stream.ended.
    let hits = receiver.wait_for(4, Duration::from_secs(10)).await;
    call(
        reqwest::Method::GET,
        format!("/webhooks/{webhook_id}/deliveries"),
        None,
    )
    .await;
    call(reqwest::Method::GET, "/streams".into(), None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().unwrap();
    child.wait().unwrap();

    let mut everything: Vec<(String, String)> = Vec::new();
    everything.extend(
        lines
            .lock()
            .unwrap()
            .iter()
            .map(|l| ("log line".to_owned(), l.clone())),
    );
    everything.extend(
        answers
            .lock()
            .unwrap()
            .iter()
            .map(|a| ("answer".to_owned(), a.clone())),
    );
    everything.extend(
        hits.iter()
            .map(|h| ("delivered body".to_owned(), h.body.clone())),
    );
    for recorded in fake.calls() {
        if !matches!(recorded.call, Call::StartEgress(_) | Call::UpdateStream(_)) {
            everything.push((recorded.method.clone(), format!("{:?}", recorded.call)));
        }
    }
    assert!(lines.lock().unwrap().len() > 10, "the server logged");
    let types: Vec<Value> = hits
        .iter()
        .map(|h| serde_json::from_str::<Value>(&h.body).unwrap()["type"].clone())
        .collect();
    assert!(
        types.contains(&json!("stream.destination_failed")),
        "{types:?}"
    );
    for (what, text) in &everything {
        for secret in KEYS
            .iter()
            .map(|k| k.to_string())
            .chain(urls.iter().cloned())
        {
            assert!(!text.contains(&secret), "{secret} in a {what}: {text}");
        }
    }
}
