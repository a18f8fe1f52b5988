//! How late a scheduled show starts with the sweep alone (docs/shows.md, "The start"): shows
//! scheduled a minute or two ahead on the local runtime with its default settings, their
//! timers cancelled as a restart loses them, started by the local server's show sweep. Prints
//! each show's lateness: its stream's creation minus its `starts_at`. `--backend embedded` or
//! `--backend dynamodb` (with `AWS_ENDPOINT_URL` set, e.g. a moto server). Run by
//! `bench/show_starts.sh`; it takes about two and a half minutes per backend.

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, header::AUTHORIZATION};
use chrono::{Duration, Utc};
use hosting_app::delivery::Deliverer;
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::account::hash_key;
use hosting_domain::clock::{Clock, SystemClock};
use hosting_domain::{ApiKey, Brand, Creator, KeyEnvironment, Plan, Scope, TimerKind};
use hosting_embedded::EmbeddedQueue;
use hosting_runtime::{LocalQueue, Parts, Runtime};
use hosting_support::config::{Config, StoreKind};
use tower::ServiceExt;
use uuid::Uuid;

const BRAND: &str = "brand_shows";
const KEY: &str = "svc_test_showstartsbenchmarkkey0000000000";
const CREATOR: &str = "avt_showbench01";
/// Shows measured per backend, spread over a minute and a half from a minute ahead.
const SHOWS: i64 = 7;

async fn runtime(backend: &str) -> Runtime {
    let config = Config::from_lookup(StoreKind::Embedded, |_| None).expect("config");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    match backend {
        "embedded" | "memory" => Runtime::embedded(config, clock, None),
        "dynamodb" => {
            let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
            let store = DynamoStore::new(
                aws_sdk_dynamodb::Client::new(&sdk),
                format!("show-starts-{}", Uuid::new_v4().simple()),
            );
            store.create_table().await.expect("create table");
            let parts = Parts {
                store: Arc::new(store),
                embedded: None,
                queue: LocalQueue::Embedded(EmbeddedQueue::new()),
                clip_queue: None,
                scheduler: None,
                recordings: None,
                vault: None,
            };
            Runtime::assemble(config, clock, None, parts)
        }
        other => panic!("--backend {other}: expected embedded or dynamodb"),
    }
}

async fn seed(runtime: &Runtime) {
    let store = &runtime.app.store;
    store
        .put_brand(&Brand::new(BRAND, "Shows", Plan::Growth, "live-commerce"))
        .await
        .unwrap();
    store
        .put_api_key(&ApiKey {
            key_hash: hash_key(KEY),
            brand_id: BRAND.into(),
            environment: KeyEnvironment::Test,
            scopes: vec![Scope::StreamsRead, Scope::StreamsWrite],
            revoked: false,
            expires_at: None,
        })
        .await
        .unwrap();
    store
        .put_creator(&Creator {
            id: CREATOR.into(),
            name: "Bench".into(),
            status: Some("active".into()),
            languages: vec!["en".into()],
            style: None,
            personality: None,
            vibe: None,
            consent: Some(true),
            photo: None,
        })
        .await
        .unwrap();
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let backend = match (args.next().as_deref(), args.next()) {
        (Some("--backend"), Some(backend)) => backend,
        _ => "embedded".to_owned(),
    };
    let runtime = runtime(&backend).await;
    seed(&runtime).await;
    let app = runtime.app.clone();
    let router = local_api::router(app.clone());
    let now = Utc::now();
    let mut shows = Vec::new();
    for i in 0..SHOWS {
        // Odd milliseconds, so no start falls on a whole second.
        let starts_at =
            now + Duration::seconds(61) + Duration::milliseconds(13_000 * i + 137 * (i + 1));
        let body = serde_json::json!({"creator_id": CREATOR, "product_name": "Glow Serum",
            "platform": "tiktok", "duration_minutes": 5, "starts_at": starts_at.to_rfc3339()});
        let request = Request::post("/api/v1/shows")
            .header(AUTHORIZATION, format!("Bearer {KEY}"))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let show: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let id = show["show_id"].as_str().expect("scheduled").to_owned();
        let id = Uuid::parse_str(id.strip_prefix("shw_").unwrap()).unwrap();
        // The timers die, as in a restart: the sweep alone starts the show.
        for kind in [TimerKind::ShowStart, TimerKind::ShowReminder] {
            app.timers.cancel(id, kind).await.unwrap();
        }
        shows.push((id, starts_at));
    }
    let _background = runtime.spawn_background(
        Deliverer::new(StdDuration::from_secs(10), false).expect("delivery client"),
    );
    let begin = Instant::now();
    let mut lateness = Vec::new();
    for (id, starts_at) in shows {
        let stream_id = loop {
            let show = app.store.find_show(id).await.unwrap().unwrap();
            if let Some(stream_id) = show.stream_id {
                break stream_id;
            }
            assert!(begin.elapsed() < StdDuration::from_secs(300), "not started");
            tokio::time::sleep(StdDuration::from_millis(100)).await;
        };
        let stream = app.store.get_stream(stream_id).await.unwrap().unwrap();
        let late = (stream.created_at - starts_at).num_milliseconds() as f64 / 1000.0;
        // Ended at once: the brand's three concurrent streams are free for the next show.
        let end = Request::delete(format!("/api/v1/streams/{stream_id}"))
            .header(AUTHORIZATION, format!("Bearer {KEY}"))
            .body(Body::empty())
            .unwrap();
        let ended = router.clone().oneshot(end).await.unwrap();
        assert!(ended.status().is_success(), "{}", ended.status());
        println!("| {backend} | shw_{} | {late:.3} s |", id.simple());
        lateness.push(late);
    }
    lateness.sort_by(f64::total_cmp);
    println!(
        "{backend}: {} shows, lateness min {:.3} s, median {:.3} s, max {:.3} s",
        lateness.len(),
        lateness[0],
        lateness[lateness.len() / 2],
        lateness[lateness.len() - 1]
    );
}
