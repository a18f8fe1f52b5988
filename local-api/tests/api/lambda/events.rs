//! Every sample event in `events/` through its function's Lambda handler, as `sam local
//! invoke` would send it: API Gateway HTTP API v2 requests through `lambda_http`, an SQS
//! batch, a Scheduler payload and a DynamoDB stream record.

use std::sync::Arc;

use axum::Router;
use hosting_app::App;
use hosting_app::seed::Seed;
use hosting_domain::clock::SystemClock;
use hosting_runtime::{LocalQueue, Runtime};
use hosting_support::config::{Config, StoreKind};
use serde_json::{Value, json};
use tower::ServiceExt;

const LIVE_ID: &str = "5a1e0000-0000-4000-8000-000000000001";

const PREPARING_ID: &str = "5a1e0000-0000-4000-8000-000000000002";

fn event(name: &str) -> String {
    let path = format!("{}/../events/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn runtime(vars: &[(&str, &str)]) -> Runtime {
    let config = Config::from_lookup(StoreKind::Embedded, |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    })
    .unwrap();
    let rooms = hosting_livekit::rooms_from_config(&config);
    let (parts, _) = crate::common::backend::parts().await;
    let runtime = Runtime::assemble(config, Arc::new(SystemClock), rooms, parts);
    Seed::from_json(&event("seed"))
        .unwrap()
        .load(&*runtime.app.store)
        .await
        .unwrap();
    runtime
}

struct Answer {
    status: u16,
    body: Value,
    headers: axum::http::HeaderMap,
}

async fn invoke(routes: fn(App) -> Router, app: &App, name: &str) -> Answer {
    let request = lambda_http::request::from_str(&event(name)).expect("an API Gateway v2 event");
    let response = hosting_runtime::lambda::http_service(routes, app.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        headers,
    }
}

#[tokio::test]
async fn api_events_through_their_functions() {
    let runtime = runtime(&[]).await;
    let app = &runtime.app;

    let r = invoke(discovery_api::router, app, "discovery-root").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["version"], "v1");
    assert_eq!(
        r.headers["x-request-id"], "sample-discovery-root",
        "the gateway's request id"
    );
    assert_eq!(
        r.body["openapi"],
        "https://abc123.execute-api.us-east-1.amazonaws.com/api/v1/openapi.json"
    );

    let r = invoke(discovery_api::router, app, "discovery-creators").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["cache-control"], "public, max-age=60");
    assert_eq!(r.body["creators"][0]["id"], "avt_ava000000001");

    let r = invoke(streams_api::router, app, "streams-list").await;
    assert_eq!((r.status, r.body["total"].clone()), (200, json!(1)));
    let r = invoke(streams_api::router, app, "streams-get").await;
    assert_eq!(
        (r.status, r.body["stream_id"].clone()),
        (200, json!(LIVE_ID))
    );
    assert_eq!(r.body["viewer_count"], 42);
    let r = invoke(streams_api::router, app, "streams-start").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["status"], "live");
    assert!(
        r.headers["location"]
            .to_str()
            .unwrap()
            .starts_with("/api/v1/streams/")
    );
    let r = invoke(streams_api::router, app, "streams-test-helper-viewers").await;
    assert_eq!(
        (r.status, r.body["viewer_count"].clone()),
        (200, json!(120))
    );
    let r = invoke(streams_api::router, app, "streams-end").await;
    assert_eq!((r.status, r.body["status"].clone()), (200, json!("ended")));

    let r = invoke(analytics_api::router, app, "analytics").await;
    assert_eq!((r.status, r.body["period"].clone()), (200, json!("24h")));
    assert_eq!(r.body["brand_id"], "brand_sample");

    let r = invoke(webhooks_api::router, app, "webhooks-register").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body["secret"].as_str().unwrap().starts_with("whsec_"));
    let r = invoke(webhooks_api::router, app, "webhooks-list").await;
    assert_eq!(r.body["webhooks"].as_array().unwrap().len(), 1);
    let r = invoke(webhooks_api::router, app, "webhooks-delete").await;
    assert_eq!(
        r.body,
        json!({"webhook_id": "7f1c0000-0000-4000-8000-000000000001", "deleted": true})
    );

    let r = invoke(
        gateway_default::router,
        app,
        "gateway-default-trailing-slash",
    )
    .await;
    assert_eq!(r.status, 200);
    assert!(r.body["streams"].is_array());
    let r = invoke(gateway_default::router, app, "gateway-default-not-found").await;
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (404, json!("not_found"))
    );
    // A group's own function answers paths it does not serve with the same envelope.
    let r = invoke(streams_api::router, app, "analytics").await;
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (404, json!("not_found"))
    );
}

#[tokio::test]
async fn livekit_event_through_its_function() {
    let fake = crate::common::fake_livekit::FakeLiveKit::start().await;
    let runtime = runtime(&[
        ("LIVEKIT_URL", &fake.url),
        ("LIVEKIT_API_KEY", "APIsample"),
        (
            "LIVEKIT_API_SECRET",
            "sample-livekit-secret-for-local-events-only",
        ),
    ])
    .await;
    let r = invoke(livekit_webhook::router, &runtime.app, "livekit-webhook").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let stream = runtime
        .app
        .store
        .get_stream(PREPARING_ID.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stream.status, hosting_domain::StreamStatus::Live);
}

#[tokio::test]
async fn timer_event_through_its_function() {
    let runtime = runtime(&[]).await;
    let timer = serde_json::from_str(&event("timers-preparing-timeout")).unwrap();
    let fired = timers::handle(&runtime.app, timer).await.unwrap();
    assert_eq!(fired, timers::Fired { changed: 1 });
    let stream = runtime
        .app
        .store
        .get_stream(PREPARING_ID.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stream.status, hosting_domain::StreamStatus::Error);
    // Delivered twice (Scheduler retries), it changes nothing more.
    let timer = serde_json::from_str(&event("timers-preparing-timeout")).unwrap();
    assert_eq!(
        timers::handle(&runtime.app, timer).await.unwrap(),
        timers::Fired { changed: 0 }
    );
    // The sweep's schedule sends anything else. The sample's live stream started long before
    // its 480 minutes ran out, and no timer was ever armed for it: the sweep ends it, once.
    let sweep = || serde_json::from_value(json!({"sweep": "deadlines"})).unwrap();
    assert!(matches!(sweep(), timers::Invocation::Sweep(_)));
    assert_eq!(
        timers::handle(&runtime.app, sweep()).await.unwrap(),
        timers::Fired { changed: 1 }
    );
    let live = runtime
        .app
        .store
        .get_stream(LIVE_ID.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.status, hosting_domain::StreamStatus::Ended);
    assert_eq!(
        timers::handle(&runtime.app, sweep()).await.unwrap(),
        timers::Fired { changed: 0 }
    );
}

#[tokio::test]
async fn egress_owed_stream_record_through_the_timers_function() {
    let runtime = runtime(&[]).await;
    let owed = serde_json::from_str(&event("timers-egress-owed")).unwrap();
    assert!(matches!(owed, timers::Invocation::EgressOwed(_)));
    // Whatever the stream has due acts, as for a timer: the sample's live stream is past its
    // deadline.
    assert_eq!(
        timers::handle(&runtime.app, owed).await.unwrap(),
        timers::Fired { changed: 1 }
    );
}

#[tokio::test]
async fn outbox_relay_event_through_its_function() {
    let (parts, dynamo) = crate::common::backend::parts().await;
    let config = Config::from_lookup(StoreKind::Embedded, |_| None).unwrap();
    let runtime = Runtime::assemble(config, Arc::new(SystemClock), None, parts);
    Seed::from_json(&event("seed"))
        .unwrap()
        .load(&*runtime.app.store)
        .await
        .unwrap();
    invoke(streams_api::router, &runtime.app, "streams-end").await;
    let written = crate::common::backend::emitted_events(&runtime, dynamo.as_ref()).await;
    let written = written.last().expect("the end's event");

    // The trigger's payload is a DynamoDB stream batch: the new image of each event item, as
    // the sample shows; here the image of the event just written.
    let mut batch: Value = serde_json::from_str(&event("outbox-relay-dynamodb-stream")).unwrap();
    let sample = &batch["Records"][0]["dynamodb"]["NewImage"];
    assert!(hosting_aws::dynamodb::event_from_stream_image(sample).is_ok());
    batch["Records"][0]["dynamodb"]["NewImage"] = json!({
        "id": {"S": written.id}, "type": {"S": written.event_type.as_str()},
        "brand_id": {"S": written.brand_id}, "stream_id": {"S": written.stream_id.map(|id| id.to_string()).unwrap_or_default()},
        "created_at": {"S": written.created_at.to_rfc3339()}, "body": {"S": written.body},
    });
    assert_eq!(
        outbox_relay::handle(&runtime.app, batch.clone())
            .await
            .unwrap(),
        outbox_relay::Relayed { relayed: 1 }
    );
    // Delivered again by the stream (Lambda retries a batch), it is not relayed twice.
    assert_eq!(
        outbox_relay::handle(&runtime.app, batch).await.unwrap(),
        outbox_relay::Relayed { relayed: 0 }
    );
    // The schedule's sweep finds nothing left.
    assert_eq!(
        outbox_relay::handle(&runtime.app, json!({"source": "aws.events"}))
            .await
            .unwrap(),
        outbox_relay::Relayed { relayed: 0 }
    );
}

async fn sqs_queue(runtime: &Runtime) -> hosting_aws::sqs::SqsQueue {
    match &runtime.queue {
        LocalQueue::Sqs(queue) => queue.clone(),
        // Nothing is sent for a message that is already due.
        LocalQueue::Embedded(_) => hosting_aws::sqs::SqsQueue::new(
            aws_sdk_sqs::Client::new(&hosting_aws::sdk_config().await.expect("SDK configuration")),
            "http://127.0.0.1:9/unused",
            "http://127.0.0.1:9/unused-dlq",
        ),
    }
}

/// The sample batch as it is: its webhook does not exist, so the delivery function looks it up,
/// sends nothing and settles the message. (A handler that did nothing would settle it too, so
/// the lookup is what this checks; the next test delivers.)
#[tokio::test]
async fn sqs_batch_through_the_delivery_function() {
    let api = crate::common::TestApp::new().await;
    let queue = sqs_queue(&api.runtime).await;
    let deliverer =
        hosting_app::delivery::Deliverer::new(std::time::Duration::from_secs(1), false).unwrap();
    let batch = serde_json::from_str(&event("delivery-sqs-batch")).unwrap();
    api.store_requests();
    let response = delivery::handle(&api.runtime.app, &queue, &deliverer, batch).await;
    assert!(
        response.batch_item_failures.is_empty(),
        "a delivery to a deleted webhook is done"
    );
    let requests = api.store_requests();
    assert!(requests.total > 0, "the webhook was looked up");
    if api.dynamo().is_some() {
        assert_eq!(
            requests.naming("GetItem", "WEBHOOK#7f1c0000-0000-4000-8000-000000000009"),
            1,
            "{:?}",
            requests.operations()
        );
    }
}

/// The sample batch, addressed to a live webhook: the delivery function posts its body, signed,
/// to the receiver, and logs the attempt.
#[tokio::test]
async fn an_sqs_batch_is_delivered_signed_to_its_webhook() {
    use crate::common::receiver::{Behaviour, Receiver};
    use crate::common::{Keys, TestApp};
    let api = TestApp::builder().with_private_webhook_urls().await;
    let receiver = Receiver::start(Behaviour::Ok).await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": receiver.url(), "events": ["stream.ended"]}),
        )
        .await;
    r.assert_status(201);
    let webhook_id = r.body["webhook_id"].as_str().unwrap().to_owned();
    let mut batch: Value = serde_json::from_str(&event("delivery-sqs-batch")).unwrap();
    let mut message: Value =
        serde_json::from_str(batch["Records"][0]["body"].as_str().unwrap()).unwrap();
    message["delivery"]["webhook_id"] = json!(webhook_id);
    message["delivery"]["brand_id"] = json!("brand_a");
    let body = message["delivery"]["body"].as_str().unwrap().to_owned();
    batch["Records"][0]["body"] = json!(message.to_string());

    let queue = sqs_queue(&api.runtime).await;
    let deliverer =
        hosting_app::delivery::Deliverer::new(std::time::Duration::from_secs(5), true).unwrap();
    let batch = serde_json::from_value(batch).unwrap();
    let response = delivery::handle(&api.runtime.app, &queue, &deliverer, batch).await;
    assert!(response.batch_item_failures.is_empty());

    let hits = receiver.hits();
    assert_eq!(hits.len(), 1, "delivered once");
    assert_eq!(hits[0].body, body, "the message's body, byte for byte");
    assert_eq!(
        hits[0].header("x-service-event-id"),
        "evt_0123456789abcdef0123456789abcdef"
    );
    assert!(hits[0].header("webhook-signature").starts_with("v1,"));
    assert!(hits[0].header("x-service-signature").contains("v1="));
    let log = api
        .get(
            &format!("/webhooks/{webhook_id}/deliveries"),
            &Keys::test_a(),
        )
        .await;
    assert_eq!(log.body["deliveries"][0]["status"], "succeeded");
    assert_eq!(log.body["deliveries"][0]["response_status"], 200);
}

#[tokio::test]
async fn a_store_failure_is_reported_as_a_batch_item_failure() {
    let api = crate::common::TestApp::new().await;
    let queue = sqs_queue(&api.runtime).await;
    let deliverer =
        hosting_app::delivery::Deliverer::new(std::time::Duration::from_secs(1), false).unwrap();
    api.set_failing().await;
    let batch = serde_json::from_str(&event("delivery-sqs-batch")).unwrap();
    let response = delivery::handle(&api.runtime.app, &queue, &deliverer, batch).await;
    let failed: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(failed, ["9d1e0000-0000-4000-8000-000000000001"]);
}

/// The sample batch with a second message that cannot be read.
fn batch_with_an_unreadable_message(unreadable_body: &str) -> Value {
    let mut batch: Value = serde_json::from_str(&event("delivery-sqs-batch")).unwrap();
    let mut unreadable = batch["Records"][0].clone();
    unreadable["messageId"] = json!("9d1e0000-0000-4000-8000-000000000002");
    unreadable["body"] = json!(unreadable_body);
    batch["Records"].as_array_mut().unwrap().push(unreadable);
    batch
}

/// An unreadable message is never settled silently: it goes to the dead-letter queue as it
/// came, and the batch keeps nothing (the readable message, addressed to a deleted webhook, is
/// done).
#[tokio::test]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_an_unreadable_message_is_dead_lettered_as_it_came() {
    let api = crate::common::TestApp::new().await;
    let queue = sqs_queue(&api.runtime).await;
    let deliverer =
        hosting_app::delivery::Deliverer::new(std::time::Duration::from_secs(1), false).unwrap();
    let unreadable = r#"{"delivery": "not a delivery", "not_before": 3}"#;
    let batch = serde_json::from_value(batch_with_an_unreadable_message(unreadable)).unwrap();
    let response = delivery::handle(&api.runtime.app, &queue, &deliverer, batch).await;
    assert!(
        response.batch_item_failures.is_empty(),
        "both settled: {:?}",
        response.batch_item_failures
    );
    let out = queue
        .client()
        .receive_message()
        .queue_url(queue.dlq_url())
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    let bodies: Vec<&str> = out.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, [unreadable], "dead-lettered once, byte for byte");
}

/// When the dead-letter queue cannot take an unreadable message, the batch keeps it for SQS to
/// receive again (its redrive policy moves it there at last), rather than drop it.
#[tokio::test]
async fn an_unreadable_message_the_dead_letter_queue_refuses_is_kept() {
    use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
    let api = crate::common::TestApp::new().await;
    // An SQS that refuses every connection at once.
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
        .endpoint_url("http://127.0.0.1:9")
        .build();
    let queue = hosting_aws::sqs::SqsQueue::new(
        aws_sdk_sqs::Client::from_conf(config),
        "http://127.0.0.1:9/queue",
        "http://127.0.0.1:9/dlq",
    );
    let deliverer =
        hosting_app::delivery::Deliverer::new(std::time::Duration::from_secs(1), false).unwrap();
    let batch = serde_json::from_value(batch_with_an_unreadable_message("{")).unwrap();
    let response = delivery::handle(&api.runtime.app, &queue, &deliverer, batch).await;
    let kept: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    assert_eq!(kept, ["9d1e0000-0000-4000-8000-000000000002"]);
}
