//! What building the `$default` router costs an instance's start: one router of every
//! function's routes ([`gateway_default::router`]) against the router each function builds for
//! itself, merged into one (how it was built before). BENCHMARKS.md, "Cold start".
//!
//! `cargo run --release -p gateway-default --example router_build [rounds]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hosting_app::App;
use hosting_domain::clock::{Clock, SystemClock};
use hosting_runtime::Runtime;
use hosting_support::config::{Config, StoreKind};

fn merged(app: App) -> Router {
    Router::new()
        .merge(discovery_api::router(app.clone()))
        .merge(streams_api::router(app.clone()))
        .merge(analytics_api::router(app.clone()))
        .merge(webhooks_api::router(app.clone()))
        .merge(livekit_webhook::router(app))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let config = Config::from_lookup(StoreKind::Embedded, |_| None).expect("configuration");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let app = Runtime::embedded(config, clock, None).app;
    let (mut one, mut each_merged) = (Vec::new(), Vec::new());
    // Alternated, so that both see the same machine.
    for _ in 0..rounds {
        let started = Instant::now();
        drop(std::hint::black_box(gateway_default::router(app.clone())));
        one.push(started.elapsed());
        let started = Instant::now();
        drop(std::hint::black_box(merged(app.clone())));
        each_merged.push(started.elapsed());
    }
    println!(
        "rounds {rounds}: one router {:?}, each function's merged {:?} (medians)",
        median(one),
        median(each_merged)
    );
}
