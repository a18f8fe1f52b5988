//! The HTTP-level test harness: the local server's router on the backend under test, a manual
//! clock, and seeded brands and keys for every case the pipeline distinguishes.

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::{DateTime, Duration, TimeZone, Utc};
use hosting_app::delivery::{Deliverer, Dns, SystemDns};
use hosting_app::seed::Seed;
use hosting_domain::clock::Clock;
use hosting_domain::clock::ManualClock;
use hosting_domain::config::{Config, StoreKind};
use hosting_runtime::Runtime;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

pub const ALL_SCOPES: [&str; 4] = [
    "streams:read",
    "streams:write",
    "analytics:read",
    "webhooks:write",
];

/// A well-formed key: prefix, then `tag` padded with `x` to 32 characters.
pub fn key(env: &str, tag: &str) -> String {
    assert!(tag.len() <= 32 && tag.bytes().all(|b| b.is_ascii_alphanumeric()));
    format!("svc_{env}_{tag:x<32}")
}

pub struct Keys;

impl Keys {
    pub fn test_a() -> String {
        key("test", "brandA")
    }
    pub fn live_a() -> String {
        key("live", "brandA")
    }
    pub fn test_a2() -> String {
        key("test", "brandAsecond")
    }
    pub fn test_b() -> String {
        key("test", "brandB")
    }
    pub fn live_b() -> String {
        key("live", "brandB")
    }
    pub fn live_free() -> String {
        key("live", "free")
    }
    pub fn test_free() -> String {
        key("test", "free")
    }
    pub fn live_starter() -> String {
        key("live", "starter")
    }
    pub fn test_gaming() -> String {
        key("test", "gaming")
    }
    pub fn revoked() -> String {
        key("test", "revoked")
    }
    pub fn expired() -> String {
        key("test", "expired")
    }
    pub fn expiring_now() -> String {
        key("test", "expiringNow")
    }
    /// A brand A key holding only `scope`.
    pub fn only(scope: &str) -> String {
        key("test", &format!("only{}", scope.replace(':', "")))
    }
    pub fn live_only(scope: &str) -> String {
        key("live", &format!("only{}", scope.replace(':', "")))
    }
}

pub const CREATOR_AVA: &str = "avt_ava000000001";
pub const CREATOR_ZED: &str = "avt_zed000000002";
pub const CREATOR_BEA: &str = "avt_bea000000003";

pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 30).unwrap()
}

pub fn base_seed(now: DateTime<Utc>) -> Value {
    let brand = |id: &str, plan: &str, vertical: &str| json!({"id": id, "name": id, "plan": plan, "vertical": vertical});
    let api_key = |key: String, brand: &str, scopes: &[&str]| json!({"key": key, "brand_id": brand, "scopes": scopes, "revoked": false, "expires_at": null});
    let mut keys = vec![
        api_key(Keys::test_a(), "brand_a", &ALL_SCOPES),
        api_key(Keys::live_a(), "brand_a", &ALL_SCOPES),
        api_key(Keys::test_a2(), "brand_a", &ALL_SCOPES),
        api_key(Keys::test_b(), "brand_b", &ALL_SCOPES),
        api_key(Keys::live_b(), "brand_b", &ALL_SCOPES),
        api_key(Keys::live_free(), "brand_free", &ALL_SCOPES),
        api_key(Keys::test_free(), "brand_free", &ALL_SCOPES),
        api_key(Keys::live_starter(), "brand_starter", &ALL_SCOPES),
        api_key(Keys::test_gaming(), "brand_gaming", &ALL_SCOPES),
        json!({"key": Keys::revoked(), "brand_id": "brand_a", "scopes": ALL_SCOPES, "revoked": true}),
        json!({"key": Keys::expired(), "brand_id": "brand_a", "scopes": ALL_SCOPES,
               "expires_at": (now - Duration::seconds(1)).to_rfc3339()}),
        json!({"key": Keys::expiring_now(), "brand_id": "brand_a", "scopes": ALL_SCOPES,
               "expires_at": now.to_rfc3339()}),
    ];
    for scope in ALL_SCOPES {
        keys.push(api_key(Keys::only(scope), "brand_a", &[scope]));
        keys.push(api_key(Keys::live_only(scope), "brand_a", &[scope]));
    }
    let creator = |id: &str, name: &str| {
        json!({"id": id, "name": name, "status": "active", "languages": ["en"], "style": null,
               "personality": null, "vibe": null, "consent": true, "photo": null})
    };
    json!({
        "brands": [
            brand("brand_a", "growth", "live-commerce"),
            brand("brand_b", "enterprise", "live-commerce"),
            brand("brand_free", "free", "live-commerce"),
            brand("brand_starter", "starter", "live-commerce"),
            brand("brand_gaming", "growth", "gaming"),
        ],
        "api_keys": keys,
        "creators": [creator(CREATOR_ZED, "zed"), creator(CREATOR_AVA, "Ava"), creator(CREATOR_BEA, "bea")],
    })
}

pub struct TestApi {
    pub runtime: Runtime,
    dynamo: Option<hosting_aws::dynamodb::DynamoStore>,
    /// Drives the app unless it runs on the system clock.
    pub clock: ManualClock,
    service: local_api::ApiService,
    background: Vec<tokio::task::JoinHandle<()>>,
    store_log: store_log::StoreLog,
}

impl Drop for TestApi {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
    }
}

pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
    pub body: Value,
}

impl Response {
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an error envelope with this status and code, and nothing else in it.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status.as_u16(), self.code()),
            (status, code),
            "body: {}",
            self.body
        );
        let error = self.body["error"].as_object().expect("error object");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(error.len(), 2, "error has exactly code and message");
        assert_eq!(self.body.as_object().unwrap().len(), 1);
        assert_eq!(self.header("content-type"), Some("application/json"));
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
    }
}

impl TestApi {
    pub async fn new() -> Self {
        Self::with_config(&[]).await
    }

    pub async fn with_config(vars: &[(&str, &str)]) -> Self {
        Self::build(vars, None).await
    }

    /// Live keys served by `livekit`, with `extra` configuration.
    pub async fn with_livekit(livekit: &fake_livekit::FakeLiveKit, extra: &[(&str, &str)]) -> Self {
        let config = livekit.config();
        let mut vars: Vec<(&str, &str)> = config.iter().map(|(k, v)| (*k, v.as_str())).collect();
        vars.extend_from_slice(extra);
        Self::with_config(&vars).await
    }

    /// On the system clock with the timers, outbox relay and delivery worker running, as the
    /// local server runs: for tests with real webhook receivers.
    pub async fn with_delivery(vars: &[(&str, &str)], dns: Option<Arc<dyn Dns>>) -> Self {
        Self::build(vars, Some(dns.unwrap_or_else(|| Arc::new(SystemDns)))).await
    }

    async fn build(vars: &[(&str, &str)], delivery_dns: Option<Arc<dyn Dns>>) -> Self {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let config = Config::from_lookup(StoreKind::Memory, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .expect("test config");
        let clock = ManualClock::new(start_time());
        let app_clock: Arc<dyn Clock> = match delivery_dns {
            Some(_) => Arc::new(hosting_domain::clock::SystemClock),
            None => Arc::new(clock.clone()),
        };
        let (timeout, allow_private) = (config.webhook_timeout, config.webhook_allow_private_urls);
        let rooms = hosting_livekit::rooms_from_config(&config);
        let (parts, dynamo, store_log) = backend::parts_logged().await;
        let runtime = Runtime::assemble(config, app_clock.clone(), rooms, parts);
        let seed = Seed::from_json(&base_seed(app_clock.now()).to_string()).unwrap();
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
        }
    }

    /// The store requests the app made since the last call (seeding's included).
    pub fn store_requests(&self) -> store_log::StoreRequests {
        self.store_log.take()
    }

    /// Loads more fixtures.
    pub async fn seed(&self, seed: Value) {
        Seed::from_json(&seed.to_string())
            .unwrap()
            .load(&*self.runtime.app.store)
            .await
            .unwrap();
    }

    /// Loads fixtures through another store instance, as an operator's `admin load-seed` would
    /// (on DynamoDB, the API's instance keeps what it remembered from before).
    pub async fn seed_elsewhere(&self, seed: Value) {
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
            config: app.config.clone(),
            clock: app.clock.clone(),
            store: app.store.clone(),
            timers: app.timers.clone(),
            queue: app.queue.clone(),
            rooms: app.rooms.clone(),
        }))
    }

    /// A keyed request to `service` (see [`TestApi::another_instance`]).
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

    /// Posts a LiveKit webhook (see [`fake_livekit::signed_webhook`]).
    pub async fn post_livekit(&self, (body, authorization): &(String, String)) -> Response {
        let request = Request::builder()
            .method("POST")
            .uri("/livekit/webhook")
            .header("authorization", authorization)
            .body(Body::from(body.clone()))
            .unwrap();
        self.send(request).await
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

    /// Types of every event emitted for `stream_id`, in order.
    pub async fn events_of(&self, stream_id: &str) -> Vec<String> {
        self.emitted_events()
            .await
            .into_iter()
            .filter(|e| e.stream_id.to_string() == stream_id)
            .map(|e| e.event_type.as_str().to_owned())
            .collect()
    }

    /// The stream's `end_reason` as its detail, its list item and (once it is final) its one
    /// final event's `data.stream` show it (docs/lifecycle.md, "Why a stream ended"): `None` means
    /// absent from all three.
    pub async fn assert_end_reason(&self, key: &str, id: &str, status: &str, reason: Option<&str>) {
        let detail = self.get(&format!("/streams/{id}"), key).await;
        detail.assert_status(200);
        assert_eq!(detail.body["status"], status, "{id}");
        assert_eq!(
            detail.body.get("end_reason").and_then(|r| r.as_str()),
            reason,
            "detail of {id}"
        );
        let list = self
            .get(&format!("/streams?status={status}&limit=100"), key)
            .await;
        let item = list.body["streams"]
            .as_array()
            .and_then(|items| items.iter().find(|item| item["id"] == id))
            .unwrap_or_else(|| panic!("{id} not listed as {status}"));
        assert_eq!(
            item.get("end_reason").and_then(|r| r.as_str()),
            reason,
            "list item of {id}"
        );
        if matches!(status, "ended" | "error") {
            let event_type = format!("stream.{status}");
            let finals: Vec<_> = self
                .emitted_events()
                .await
                .into_iter()
                .filter(|e| e.stream_id.to_string() == id && e.event_type.as_str() == event_type)
                .collect();
            assert_eq!(finals.len(), 1, "one {event_type} of {id}");
            let body: Value = serde_json::from_str(&finals[0].body).unwrap();
            assert_eq!(body["data"]["stream"]["status"], status);
            assert_eq!(
                body["data"]["stream"]
                    .get("end_reason")
                    .and_then(|r| r.as_str()),
                reason,
                "event of {id}"
            );
        }
    }

    /// Every event emitted so far, in order.
    pub async fn emitted_events(&self) -> Vec<hosting_domain::domain::StreamEvent> {
        backend::emitted_events(&self.runtime, self.dynamo.as_ref()).await
    }

    /// Active slots the brand's counter holds.
    pub async fn active_streams(&self, brand_id: &str) -> u32 {
        backend::active_streams(&self.runtime, self.dynamo.as_ref(), brand_id).await
    }

    /// Makes every later store request fail, as an outage would.
    pub async fn set_failing(&self) {
        backend::set_failing(&self.runtime, self.dynamo.as_ref()).await
    }

    /// The DynamoDB store, when that is the backend.
    pub fn dynamo(&self) -> Option<&hosting_aws::dynamodb::DynamoStore> {
        self.dynamo.as_ref()
    }

    /// The DynamoDB table, when that is the backend (its name scopes fault rules).
    pub fn table(&self) -> Option<&str> {
        self.dynamo.as_ref().map(|d| d.table())
    }

    /// Makes store writes fail for a while, as a transient outage would: on DynamoDB every
    /// transaction answers `InternalServerError` (reads still work); on the embedded store
    /// every call fails.
    pub async fn store_outage(&self, on: bool) {
        match (&self.runtime.memory, self.table()) {
            (Some(memory), _) => memory.set_failing(on),
            (None, Some(table)) if on => {
                faults::set(
                    table,
                    serde_json::json!({"fail_ops": ["TransactWriteItems"]}),
                )
                .await
            }
            (None, Some(table)) => faults::clear(table).await,
            (None, None) => unreachable!("one backend or the other"),
        }
    }

    /// Makes the delivery queue refuse messages whose body contains `needle`, as SQS refuses
    /// one it cannot take (`None`: accepts all again).
    pub async fn refuse_queue_bodies_containing(&self, needle: Option<&str>) {
        match (&self.runtime.queue, self.table()) {
            (hosting_runtime::LocalQueue::Memory(queue), _) => {
                queue.refuse_bodies_containing(needle)
            }
            (_, Some(table)) => match needle {
                Some(needle) => {
                    faults::set(
                        table,
                        serde_json::json!({"refuse_bodies_containing": needle}),
                    )
                    .await
                }
                None => faults::clear(table).await,
            },
            (_, None) => unreachable!("SQS runs with DynamoDB"),
        }
    }

    pub async fn dead_letters(&self) -> Vec<hosting_domain::ports::DeadLetter> {
        backend::dead_letters(&self.runtime).await
    }

    /// Waits until something is dead-lettered (panics after `limit`).
    pub async fn wait_for_dead_letters(
        &self,
        limit: std::time::Duration,
    ) -> Vec<hosting_domain::ports::DeadLetter> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let dead = self.dead_letters().await;
            if !dead.is_empty() {
                return dead;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "nothing was dead-lettered"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Changes a stored key in place (revocation, expiry), as an operator would.
    pub async fn update_key(
        &self,
        raw_key: &str,
        change: impl FnOnce(&mut hosting_domain::domain::ApiKey),
    ) {
        let store = &self.runtime.app.store;
        let hash = hosting_domain::domain::account::hash_key(raw_key);
        let mut key = store
            .find_api_key(&hash)
            .await
            .unwrap()
            .expect("a seeded key");
        change(&mut key);
        store.put_api_key(&key).await.unwrap();
    }

    /// The in-process timers (the suite drives them with its clock on every backend).
    pub fn timers(&self) -> &hosting_embedded::MemoryTimers {
        self.runtime.timers.as_ref().expect("in-process timers")
    }
}
pub mod backend;
pub mod contract;
pub mod fake_livekit;
pub mod faults;
pub mod receiver;
pub mod store_log;

/// The `local-api` binary started on a free loopback port with `args` and `envs`: the process,
/// the first line it printed, its base URL (`http://127.0.0.1:<port>/api/v1`) and the rest of
/// its stdout.
pub fn spawn_local_api(
    args: &[&str],
    envs: &[(&str, &str)],
) -> (
    std::process::Child,
    String,
    String,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .envs(envs.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start local-api");
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let first = first.trim_end().to_owned();
    let base = first
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    (child, first, base, reader)
}

/// Runs `count` copies of `request` at once; returns how many answered each status.
pub async fn concurrently<F, Fut>(count: usize, request: F) -> std::collections::HashMap<u16, usize>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = u16> + Send + 'static,
{
    let handles: Vec<_> = (0..count).map(|i| tokio::spawn(request(i))).collect();
    let mut statuses = std::collections::HashMap::new();
    for handle in handles {
        *statuses.entry(handle.await.unwrap()).or_insert(0) += 1;
    }
    statuses
}
