//! The local server's router on the backend under test, and the requests the suite sends it.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request};
use chrono::{DateTime, Duration, Utc};
use hosting_app::delivery::Deliverer;
use hosting_app::seed::Seed;
use hosting_domain::clock::Clock;
use hosting_domain::clock::ManualClock;
use hosting_runtime::{LocalQueue, Runtime};
use hosting_support::config::{Config, StoreKind};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::builder::TestAppBuilder;
use super::{
    CREATOR_AVA, Response, backend, base_seed, contract, fake_livekit, invariants, start_time,
    store_log,
};

pub struct TestApp {
    pub runtime: Runtime,
    pub(super) dynamo: Option<hosting_aws::dynamodb::DynamoStore>,
    /// Drives the app unless it runs on the system clock.
    pub clock: ManualClock,
    pub(super) service: local_api::ApiService,
    pub(super) background: Vec<tokio::task::JoinHandle<()>>,
    pub(super) store_log: store_log::StoreLog,
    pub(super) queue_log: store_log::QueueLog,
    /// KMS's requests, on DynamoDB.
    pub(super) key_log: Option<store_log::Recorder>,
    /// The fake LiveKit the app was built with, whose rooms the drop check reads.
    pub(super) livekit: Option<fake_livekit::FakeLiveKit>,
    /// Whether dropping it checks the invariants (`invariants.rs`); off once a test breaks the
    /// store on purpose.
    pub(super) check_invariants: std::sync::atomic::AtomicBool,
    /// A store outage the test started and has not ended ([`TestApp::store_outage`]): the
    /// store cannot be read for the drop check meanwhile.
    pub(super) in_outage: std::sync::atomic::AtomicBool,
    /// Why the test leaves outbox records it cannot relay, when it does on purpose.
    pub(super) skipped_outbox_check: std::sync::OnceLock<&'static str>,
    /// Why the test leaves rooms of finished streams in LiveKit, when it does on purpose.
    pub(super) skipped_rooms_check: std::sync::OnceLock<&'static str>,
    /// Streams loaded as fixtures: they finished without a transition, so without an event.
    pub(super) seeded_streams: std::sync::Mutex<std::collections::HashSet<uuid::Uuid>>,
}

/// The ids of the streams a seed holds.
fn stream_ids(seed: &Value) -> impl Iterator<Item = uuid::Uuid> + '_ {
    seed["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|stream| stream["id"].as_str()?.parse().ok())
}

impl Drop for TestApp {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
        if std::thread::panicking()
            || !self
                .check_invariants
                .load(std::sync::atomic::Ordering::SeqCst)
            || self.in_outage.load(std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let backend = match (&self.runtime.embedded, &self.dynamo, &self.runtime.queue) {
            (Some(embedded), _, LocalQueue::Embedded(queue)) => invariants::Backend::Embedded {
                store: embedded.clone(),
                queue: queue.clone(),
                vault: self.runtime.app.vault.clone(),
            },
            (None, Some(dynamo), LocalQueue::Sqs(queue)) => invariants::Backend::DynamoDb {
                table: dynamo.table().to_owned(),
                queue_url: queue.queue_url().to_owned(),
                dlq_url: queue.dlq_url().to_owned(),
            },
            _ => return,
        };
        let violations = invariants::violations(invariants::Subject {
            backend,
            config: self.runtime.app.config.clone(),
            test_now: self.now(),
            livekit: self
                .livekit
                .clone()
                .filter(|_| self.skipped_rooms_check.get().is_none()),
            outbox_must_drain: self.skipped_outbox_check.get().is_none(),
            seeded_streams: self.seeded_streams(),
        });
        assert!(
            violations.is_empty(),
            "the test left the store inconsistent:\n{}",
            violations.join("\n")
        );
    }
}

impl TestApp {
    /// The default app: the embedded clock, no room provider, no background loops.
    pub async fn new() -> Self {
        Self::builder().await
    }

    /// An app configured step by step; awaiting the builder starts it.
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder::default()
    }

    pub(super) async fn build(builder: TestAppBuilder) -> Self {
        let TestAppBuilder {
            vars,
            livekit,
            delivery_dns,
            viewer_partitions,
        } = builder;
        let config = Config::from_lookup(StoreKind::Embedded, |name| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                // On DynamoDB/SQS recordings go to S3, as deployed.
                .or_else(|| {
                    (name == "RECORDINGS_BUCKET" && backend::is_dynamodb())
                        .then(|| backend::TEST_RECORDINGS_BUCKET.to_owned())
                })
        })
        .expect("test config");
        let clock = ManualClock::new(start_time());
        let app_clock: Arc<dyn Clock> = match delivery_dns {
            Some(_) => Arc::new(hosting_domain::clock::SystemClock),
            None => Arc::new(clock.clone()),
        };
        let (timeout, allow_private) = (config.webhook_timeout, config.webhook_allow_private_urls);
        let rooms = hosting_livekit::rooms_from_config(&config);
        if let (Some(fake), None) = (&livekit, &delivery_dns) {
            fake.use_clock(clock.clone());
        }
        let (mut parts, dynamo, store_log, queue_log, key_log) =
            backend::parts_logged(viewer_partitions).await;
        if let Some(bucket) = config
            .recordings
            .bucket
            .as_deref()
            .filter(|b| backend::is_dynamodb() && *b != backend::TEST_RECORDINGS_BUCKET)
        {
            parts.recordings = Some(Arc::new(backend::own_recordings_bucket(bucket).await));
        }
        let runtime = Runtime::assemble(config, app_clock.clone(), rooms, parts);
        let base = base_seed(app_clock.now());
        let seeded_streams = stream_ids(&base).collect();
        let seed = Seed::from_json(&base.to_string()).unwrap();
        seed.load(&*runtime.app.store).await.unwrap();
        let service = local_api::service(runtime.app.clone());
        let background = match delivery_dns {
            Some(dns) => {
                runtime.spawn_background(Deliverer::with_dns(timeout, allow_private, dns).unwrap())
            }
            None => Vec::new(),
        };
        Self {
            runtime,
            dynamo,
            clock,
            service,
            background,
            store_log,
            queue_log,
            key_log,
            livekit,
            check_invariants: std::sync::atomic::AtomicBool::new(true),
            in_outage: std::sync::atomic::AtomicBool::new(false),
            skipped_outbox_check: std::sync::OnceLock::new(),
            skipped_rooms_check: std::sync::OnceLock::new(),
            seeded_streams: std::sync::Mutex::new(seeded_streams),
        }
    }

    /// The streams loaded as fixtures so far.
    pub fn seeded_streams(&self) -> std::collections::HashSet<uuid::Uuid> {
        self.seeded_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn remember_seeded(&self, seed: &Value) {
        self.seeded_streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(stream_ids(seed));
    }

    /// The store requests the app made since the last call (seeding's included).
    pub fn store_requests(&self) -> store_log::StoreRequests {
        self.store_log.take()
    }

    /// The KMS requests the app made since the last call (none on the embedded backend).
    pub fn key_requests(&self) -> Vec<store_log::Call> {
        self.key_log
            .as_ref()
            .map(store_log::Recorder::take)
            .unwrap_or_default()
    }

    /// The delivery queue requests that carried work since the last call
    /// ([`store_log::QueueLog::take_work`]).
    pub fn queue_work(&self) -> u64 {
        self.queue_log.take_work()
    }

    /// Loads more fixtures.
    pub async fn seed(&self, seed: Value) {
        self.remember_seeded(&seed);
        Seed::from_json(&seed.to_string())
            .unwrap()
            .load(&*self.runtime.app.store)
            .await
            .unwrap();
    }

    /// Loads fixtures through another store instance, as an operator's `admin load-seed` would
    /// (on DynamoDB, the API's instance keeps what it remembered from before).
    pub async fn seed_elsewhere(&self, seed: Value) {
        self.remember_seeded(&seed);
        let seed = Seed::from_json(&seed.to_string()).unwrap();
        match &self.dynamo {
            Some(dynamo) => {
                let elsewhere = hosting_aws::dynamodb::DynamoStore::new(
                    dynamo.client().clone(),
                    dynamo.table(),
                );
                seed.load(&elsewhere).await.unwrap();
            }
            None => seed.load(&*self.runtime.app.store).await.unwrap(),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.runtime.app.clock.now()
    }

    /// Another instance of the API on the same backends: its own caches, the same store, as a
    /// second Lambda instance would be.
    pub fn another_instance(&self) -> local_api::ApiService {
        let app = &self.runtime.app;
        local_api::service(hosting_app::App::new(hosting_app::app::AppParts {
            vault: app.vault.clone(),
            config: app.config.clone(),
            clock: app.clock.clone(),
            store: app.store.clone(),
            timers: app.timers.clone(),
            queue: app.queue.clone(),
            clip_queue: app.clip_queue.clone(),
            rooms: app.rooms.clone(),
            recordings: app.recordings.clone(),
        }))
    }

    /// A keyed request to `service` (see [`TestApp::another_instance`]).
    pub async fn send_to(
        &self,
        service: &local_api::ApiService,
        method: &str,
        path: &str,
        key: &str,
    ) -> Response {
        let request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(format!("/api/v1{path}"))
            .header("authorization", format!("Bearer {key}"))
            .body(Body::empty())
            .unwrap();
        Self::exchange(service, request).await
    }

    /// A keyed request with a JSON body and extra `headers` to `service`.
    pub async fn send_json_to(
        &self,
        service: &local_api::ApiService,
        method: &str,
        path: &str,
        key: &str,
        body: Value,
        headers: &[(&str, &str)],
    ) -> Response {
        let mut request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(format!("/api/v1{path}"))
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Self::exchange(service, request.body(Body::from(body.to_string())).unwrap()).await
    }

    pub async fn send(&self, request: Request<Body>) -> Response {
        Self::exchange(&self.service, request).await
    }

    async fn exchange(service: &local_api::ApiService, request: Request<Body>) -> Response {
        let (method, uri) = (request.method().to_string(), request.uri().to_string());
        let response = service.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        contract::check(&method, &uri, status.as_u16(), &headers, &body);
        Response {
            status,
            headers,
            bytes,
            body,
        }
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Response {
        let raw = body.map(|b| b.to_string());
        self.call_raw(method, path, key, raw.as_deref()).await
    }

    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&str>,
    ) -> Response {
        let mut builder = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(format!("/api/v1{path}"));
        if let Some(key) = key {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        if body.is_some() {
            builder = builder.header("content-type", "application/json");
        }
        let request = builder
            .body(Body::from(body.unwrap_or("").to_owned()))
            .unwrap();
        self.send(request).await
    }

    /// Posts a LiveKit webhook as a test writes it; what it reports is made so in the fake
    /// LiveKit's rooms (a read-back then finds what the webhook said).
    pub async fn post_livekit(&self, signed: &(String, String)) -> Response {
        if let Ok(event) = serde_json::from_str::<Value>(&signed.0) {
            self.mirror_livekit(&event);
        }
        self.post_livekit_as_sent(signed).await
    }

    /// The fake LiveKit's rooms made to agree with `event`, a webhook a test sends by hand.
    pub fn mirror_livekit(&self, event: &Value) {
        if let Some(fake) = &self.livekit {
            fake.mirror(event);
        }
    }

    /// Posts a LiveKit webhook as it is, not mirrored into the fake LiveKit (it came from its
    /// rooms: [`super::fake_livekit::FakeLiveKit::take_webhooks`]).
    pub async fn post_livekit_as_sent(&self, (body, authorization): &(String, String)) -> Response {
        let request = Request::builder()
            .method("POST")
            .uri("/livekit/webhook")
            .header("authorization", authorization)
            .body(Body::from(body.clone()))
            .unwrap();
        self.send(request).await
    }

    /// LiveKit sends the webhooks the fake LiveKit has waiting, as LiveKit sends them: each at
    /// most 5 times, again only after a `429` or `5xx` (a `4xx` is final), and those an answer
    /// makes (a dispatch's agent joining) after them; how many it sent.
    pub async fn livekit_sends(&self) -> usize {
        let fake = self.livekit.as_ref().expect("an app built with_livekit");
        let mut sent = 0;
        for _ in 0..20 {
            let events = fake.take_webhooks();
            if events.is_empty() {
                break;
            }
            for event in events {
                let signed = fake_livekit::signed_webhook(&event);
                for _ in 0..5 {
                    let status = self.post_livekit_as_sent(&signed).await.status.as_u16();
                    if status != 429 && status < 500 {
                        break;
                    }
                }
                sent += 1;
            }
        }
        sent
    }

    /// Posts a LiveKit event until it is accepted (a 2xx), as LiveKit resends what was not;
    /// `answered` sees every answer.
    pub async fn post_livekit_until_accepted(
        &self,
        event: &Value,
        mut answered: impl FnMut(&Response),
    ) {
        let signed = fake_livekit::signed_webhook(event);
        for _ in 0..50 {
            let r = self.post_livekit(&signed).await;
            answered(&r);
            if r.status.is_success() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("LiveKit event never accepted: {event}");
    }

    pub async fn get(&self, path: &str, key: &str) -> Response {
        self.call("GET", path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> Response {
        self.call("POST", path, Some(key), Some(body)).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> Response {
        self.call("DELETE", path, Some(key), None).await
    }

    /// Starts a stream with a valid body plus `overrides`.
    pub async fn start(&self, key: &str, overrides: Value) -> Response {
        let mut body = json!({
            "creator_id": CREATOR_AVA, "product_name": "Glow Serum", "platform": "tiktok",
            "duration_minutes": 30,
        });
        for (k, v) in overrides.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        self.post("/streams", key, body).await
    }

    /// Starts a test stream and returns its id.
    pub async fn start_test_stream(&self, key: &str) -> String {
        let r = self.start(key, json!({})).await;
        r.assert_status(201);
        r.body["stream_id"].as_str().unwrap().to_owned()
    }

    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// Moves the clock and fires whatever timers became due.
    pub async fn advance_and_fire(&self, by: Duration) -> usize {
        self.clock.advance(by);
        self.runtime.fire_due_timers().await
    }
}
