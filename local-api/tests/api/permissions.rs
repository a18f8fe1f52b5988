//! Least privilege, checked against the calls the code makes (docs/aws.md,
//! "Permissions"): every endpoint, LiveKit's webhook, the timers' sweep, the relay's sweep and
//! a delivery batch run on DynamoDB with each request recorded, and every IAM action a request needs must be
//! allowed by `template.yaml` to the function that serves it. API Gateway's `$default` route
//! serves any endpoint as a fallback (a trailing slash: `POST .../redeliver/`), so its
//! function must allow every endpoint's actions too.

use std::collections::BTreeSet;
use std::time::Duration;

use hosting_http::endpoints::{ENDPOINTS, Endpoint};
use serde_json::{Value, json};

use crate::common::fake_livekit::{
    API_SECRET, FakeLiveKit, participant_event, signed_webhook_with,
};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::store_log::Call;
use crate::common::*;
use hosting_app::delivery::Deliverer;
use hosting_runtime::LocalQueue;

mod parking;
mod template_policies;

pub(super) use template_policies::{allowed_actions, discovery_leading_keys, missing, template};

const GATEWAY_DEFAULT: &str = "GatewayDefaultFunction";

/// Forgets the requests made so far, and the data keys cached: what follows is recorded as a
/// cold instance would make it.
pub(super) fn forget_requests(api: &TestApp) {
    api.store_requests();
    api.key_requests();
    api.runtime.app.secrets().forget_cached_keys();
}

/// The requests made since the last look: DynamoDB's and KMS's. The data keys cached are
/// dropped too: the next look is another function's, another instance.
fn calls_since(api: &TestApp) -> Vec<Call> {
    let calls = api
        .store_requests()
        .calls
        .into_iter()
        .chain(api.key_requests())
        .collect();
    api.runtime.app.secrets().forget_cached_keys();
    calls
}

/// The IAM actions of the requests made since the last look ([`calls_since`]).
pub(super) fn actions_since(api: &TestApp) -> BTreeSet<String> {
    calls_since(api)
        .into_iter()
        .flat_map(|call| call.iam_actions)
        .collect()
}

/// What a request was given to act on, ended after it so the brand's limits hold.
#[derive(Default)]
struct Made {
    streams: Vec<String>,
    webhooks: Vec<String>,
}

impl Made {
    async fn clean_up(self, api: &TestApp) {
        for id in self.streams {
            api.delete(&format!("/streams/{id}"), &Keys::test_a()).await;
        }
        for id in self.webhooks {
            api.delete(&format!("/webhooks?id={id}"), &Keys::test_a())
                .await;
        }
    }
}

/// A show an hour ahead.
fn show_body(api: &TestApp) -> Value {
    json!({"creator_id": CREATOR_AVA, "product_name": "Glow Serum", "platform": "tiktok",
           "duration_minutes": 30, "destinations": [{"platform": "tiktok",
           "ingest_url": "rtmps://push.example-live.com/live", "stream_key": "perm-key-0003"}],
           "starts_at": (api.now() + chrono::Duration::hours(1)).to_rfc3339()})
}

/// A request to `endpoint` that succeeds, with what it needs made first (and what it made).
async fn call(api: &TestApp, endpoint: &Endpoint) -> (Response, Made) {
    let key = Keys::test_a();
    let mut made = Made::default();
    let path = endpoint.path;
    let mut stream = async || {
        let id = api.start_test_stream(&key).await;
        made.streams.push(id.clone());
        id
    };
    let (path, body): (String, Option<Value>) = match (endpoint.method.as_str(), path) {
        ("POST", "/streams") => (
            path.into(),
            Some(
                json!({"creator_id": CREATOR_AVA, "product_name": "Glow Serum",
                "platform": "tiktok", "duration_minutes": 30}),
            ),
        ),
        (_, "/streams/{id}") => (format!("/streams/{}", stream().await), None),
        // Beside a destination it has: the repeat check opens the stored keys.
        ("POST", "/streams/{id}/destinations") => {
            let r = api
                .start(
                    &key,
                    json!({"destinations": [{"platform": "tiktok",
                        "ingest_url": "rtmps://push.example-live.com/live", "stream_key": "perm-key-0004"}]}),
                )
                .await;
            r.assert_status(201);
            let id = r.body["stream_id"].as_str().unwrap().to_owned();
            made.streams.push(id.clone());
            (
                format!("/streams/{id}/destinations"),
                Some(
                    json!({"platform": "youtube", "ingest_url": "rtmps://push.example-live.com/live",
                    "stream_key": "perm-key-0001"}),
                ),
            )
        }
        (_, p) if p.contains("{destination_id}") => {
            // A test stream with one destination, made through the API.
            let r = api
                .start(
                    &key,
                    json!({"destinations": [{"platform": "tiktok",
                        "ingest_url": "rtmps://push.example-live.com/live", "stream_key": "perm-key-0002"}]}),
                )
                .await;
            r.assert_status(201);
            let id = r.body["stream_id"].as_str().unwrap().to_owned();
            let destination = r.body["destinations"][0]["destination_id"]
                .as_str()
                .unwrap()
                .to_owned();
            made.streams.push(id.clone());
            (
                p.replace("{id}", &id)
                    .replace("{destination_id}", &destination),
                (endpoint.method == "POST").then(|| json!({})),
            )
        }
        // A recorded test stream, ended, its recording written by the relay; and a clip of
        // it for the clip's own path.
        (method, p) if p.starts_with("/streams/{id}/clips") => {
            let id = crate::clips::ready_recording(api).await;
            let clip = json!({"start_seconds": 1, "end_seconds": 3});
            let path = if p.contains("{clip_id}") {
                let r = api
                    .post(&format!("/streams/{id}/clips"), &key, clip.clone())
                    .await;
                r.assert_status(202);
                p.replace("{id}", &id)
                    .replace("{clip_id}", r.body["clip_id"].as_str().unwrap())
            } else {
                p.replace("{id}", &id)
            };
            (path, (method == "POST").then_some(clip))
        }
        ("POST", "/test_helpers/streams/{id}/viewers") => (
            format!("/test_helpers/streams/{}/viewers", stream().await),
            Some(json!({"count": 3})),
        ),
        ("POST", p) if p.starts_with("/test_helpers/streams/{id}/") => {
            (p.replace("{id}", &stream().await), Some(json!({})))
        }
        ("POST", "/shows") => (path.into(), Some(show_body(api))),
        (method, p) if p.contains("/shows/{id}") => {
            let r = api.post("/shows", &key, show_body(api)).await;
            r.assert_status(201);
            let id = r.body["show_id"].as_str().unwrap();
            let body = match method {
                "PATCH" => Some(json!({"product_name": "Night Cream"})),
                "POST" => Some(json!({})),
                _ => None,
            };
            (p.replace("{id}", id), body)
        }
        ("POST", "/webhooks") => (
            path.into(),
            Some(json!({"url": "https://hooks.example.com/q", "events": ["stream.ended"]})),
        ),
        (method, p) if p.contains("{id}") || (method, p) == ("DELETE", "/webhooks") => {
            let (id, _) = register_webhook(
                api,
                &key,
                "https://hooks.example.com/p",
                json!(["stream.started", "stream.ended", "stream.error"]),
            )
            .await;
            made.webhooks.push(id.clone());
            let path = match (method, p) {
                ("DELETE", "/webhooks") => format!("/webhooks?id={id}"),
                _ => p.replace("{id}", &id),
            };
            let body = match (method, p) {
                ("PATCH", _) => Some(json!({"active": false})),
                ("POST", "/webhooks/{id}/redeliver") => Some(json!({
                    "since": (api.now() - chrono::Duration::hours(1)).to_rfc3339()
                })),
                ("POST", _) => Some(json!({})),
                _ => None,
            };
            (path, body)
        }
        (_, p) => (p.into(), None),
    };
    // What was made for it is not its own.
    forget_requests(api);
    let key = match endpoint.access {
        hosting_http::endpoints::Access::Public => None,
        hosting_http::endpoints::Access::Keyed(_) => Some(key.as_str()),
    };
    let r = api.call(endpoint.method.as_str(), &path, key, body).await;
    for (field, list) in [
        ("stream_id", &mut made.streams),
        ("webhook_id", &mut made.webhooks),
    ] {
        if endpoint.method == "POST"
            && let Some(id) = r.body[field].as_str()
        {
            list.push(id.to_owned());
        }
    }
    (r, made)
}

#[tokio::test]
#[ignore = "needs DynamoDB (moto) to record the requests: scripts/test.sh runs it"]
async fn dynamodb_only_every_function_is_allowed_every_call_its_code_makes() {
    let allowed = allowed_actions(&template());
    let discovery_keys = discovery_leading_keys(&template());
    let fake = FakeLiveKit::start().await;
    let api = TestApp::builder()
        .with_private_webhook_urls()
        .with_livekit(&fake)
        .await;
    let mut problems = Vec::new();

    for endpoint in ENDPOINTS.iter().copied() {
        let (r, made) = call(&api, endpoint).await;
        let what = format!("{} {}", endpoint.method, endpoint.path);
        // A call that failed would not show what its success needs.
        assert!(r.status.is_success(), "{what}: {} {}", r.status, r.body);
        let calls = calls_since(&api);
        let called: BTreeSet<String> = calls.iter().flat_map(|c| c.iam_actions.clone()).collect();
        made.clean_up(&api).await;
        let function = endpoint.function.template_resource();
        if endpoint.function == hosting_http::endpoints::Function::Discovery {
            for pk in calls.iter().flat_map(|c| &c.partition_keys) {
                if !discovery_keys.contains(pk) {
                    problems.push(format!(
                        "{what}: DiscoveryFunction may not read partition {pk}"
                    ));
                }
            }
        }
        problems.extend(missing(&allowed, function, &called, &what));
        problems.extend(missing(
            &allowed,
            GATEWAY_DEFAULT,
            &called,
            &format!("{what}/"),
        ));
    }

    // A clip's cut, made by the clips function from its job.
    let id = crate::clips::ready_recording(&api).await;
    let r = api
        .post(
            &format!("/streams/{id}/clips"),
            &Keys::test_a(),
            json!({"start_seconds": 4, "end_seconds": 8}),
        )
        .await;
    let job = hosting_domain::ports::ClipJob {
        stream_id: uuid::Uuid::parse_str(&id).unwrap(),
        clip_id: r.body["clip_id"].as_str().unwrap().to_owned(),
    };
    forget_requests(&api);
    assert_eq!(
        hosting_app::service::clips::cut(&api.runtime.app, &job)
            .await
            .unwrap(),
        hosting_app::service::clips::CutOutcome::Ready
    );
    let called = actions_since(&api);
    problems.extend(missing(&allowed, "ClipsFunction", &called, "a cut"));

    // LiveKit's events: a stream going live, a viewer joining and leaving, the room finishing.
    let (id, room, _) = start_live(&api, 30).await;
    forget_requests(&api);
    for (event, kind, event_id) in [
        ("participant_joined", Some("AGENT"), "EV_perm_agent"),
        ("participant_joined", None, "EV_perm_join"),
        ("participant_left", None, "EV_perm_leave"),
    ] {
        let signed = signed_webhook_with(
            &participant_event(event, &room, kind, event_id),
            API_SECRET,
            600,
        );
        api.post_livekit(&signed).await.assert_status(200);
    }
    let signed = signed_webhook_with(
        &json!({"event": "room_finished", "room": {"sid": "RM_fake", "name": room},
            "id": "EV_perm_finished", "createdAt": chrono::Utc::now().timestamp().to_string()}),
        API_SECRET,
        600,
    );
    api.post_livekit(&signed).await.assert_status(200);
    assert_eq!(live_detail(&api, &id).await["status"], "ended");
    let called = actions_since(&api);
    problems.extend(missing(
        &allowed,
        "LiveKitWebhookFunction",
        &called,
        "LiveKit events",
    ));

    // Destinations: the egress start owed by a join, made by the timers function; LiveKit's
    // report on it, applied by the LiveKit webhook function; the stream's end, with its egress
    // stopped and its keys erased by the cleanup.
    let r = api
        .start(
            &Keys::live_a(),
            json!({"destinations": [{"platform": "tiktok",
                "ingest_url": "rtmps://push.example-live.com/live", "stream_key": "perm-key-0003"}]}),
        )
        .await;
    r.assert_status(201);
    let (id, room) = (
        r.body["stream_id"].as_str().unwrap().to_owned(),
        r.body["room_name"].as_str().unwrap().to_owned(),
    );
    let joined = participant_event("participant_joined", &room, Some("AGENT"), "EV_perm_egress");
    api.post_livekit(&signed_webhook_with(&joined, API_SECRET, 600))
        .await
        .assert_status(200);
    forget_requests(&api);
    api.advance(chrono::Duration::seconds(1));
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    let called = actions_since(&api);
    problems.extend(missing(&allowed, "TimersFunction", &called, "egress start"));
    let egress = fake
        .egresses()
        .into_keys()
        .next()
        .expect("an egress started");
    let report = crate::common::fake_livekit::egress_event(
        "egress_updated",
        &room,
        &egress,
        "EGRESS_ACTIVE",
        &[(
            "rtmps://push.example-live.com/live/perm-key-0003",
            "FAILED",
            "refused",
        )],
        "EV_perm_report",
    );
    api.post_livekit(&signed_webhook_with(&report, API_SECRET, 600))
        .await
        .assert_status(200);
    // The host ends the show on purpose (docs/livekit.md, "The agent contract").
    let left = crate::common::fake_livekit::finished(crate::common::fake_livekit::agent_event(
        "participant_left",
        &room,
        "PA_agent",
        Some("CLIENT_INITIATED"),
        "EV_perm_left",
        api.now(),
    ));
    api.post_livekit(&signed_webhook_with(&left, API_SECRET, 600))
        .await
        .assert_status(200);
    assert_eq!(live_detail(&api, &id).await["status"], "ended");
    let called = actions_since(&api);
    problems.extend(missing(
        &allowed,
        "LiveKitWebhookFunction",
        &called,
        "egress report and end",
    ));

    // The timers' sweep, with a stream past its deadline and a room left to delete.
    let (_, _, _) = start_live(&api, 30).await;
    api.advance(chrono::Duration::minutes(40));
    forget_requests(&api);
    hosting_app::service::timers::sweep(&api.runtime.app)
        .await
        .unwrap();
    let called = actions_since(&api);
    assert!(called.contains("dynamodb:Query@index/due"), "{called:?}");
    problems.extend(missing(&allowed, "TimersFunction", &called, "timers sweep"));

    // The relay's sweep, with the events all this wrote.
    forget_requests(&api);
    hosting_app::delivery::relay::sweep(&api.runtime.app, Duration::ZERO)
        .await
        .unwrap();
    let called = actions_since(&api);
    problems.extend(missing(
        &allowed,
        "OutboxRelayFunction",
        &called,
        "relay sweep",
    ));

    // The delivery function, with a batch of one delivery to a receiver that fails it (so the
    // attempt is logged failed and the retry queued).
    let receiver = Receiver::start(Behaviour::Always(500)).await;
    let (webhook_id, _) = register_webhook(
        &api,
        &Keys::test_a(),
        &receiver.url(),
        json!(["stream.ended"]),
    )
    .await;
    let mut batch: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../events/delivery-sqs-batch.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut message: Value =
        serde_json::from_str(batch["Records"][0]["body"].as_str().unwrap()).unwrap();
    message["delivery"]["webhook_id"] = json!(webhook_id);
    message["delivery"]["brand_id"] = json!("brand_a");
    batch["Records"][0]["body"] = json!(message.to_string());
    let LocalQueue::Sqs(queue) = &api.runtime.queue else {
        panic!("the DynamoDB stage delivers through SQS");
    };
    let deliverer = Deliverer::new(Duration::from_secs(5), true).unwrap();
    forget_requests(&api);
    delivery::handle(
        &api.runtime.app,
        queue,
        &deliverer,
        serde_json::from_value(batch).unwrap(),
    )
    .await;
    assert_eq!(receiver.hits().len(), 1);
    let called = actions_since(&api);
    assert!(called.contains("dynamodb:BatchWriteItem"), "{called:?}");
    problems.extend(missing(&allowed, "DeliveryFunction", &called, "delivery"));

    assert_eq!(problems, Vec::<String>::new());
}
