//! Scale benchmark: `GET /streams` and `GET /analytics` latency against the size of a brand's
//! history, on the embedded store or on DynamoDB (`--backend dynamodb` with
//! `AWS_ENDPOINT_URL` set, e.g. moto server). Run by `bench/scale.sh`.
//!
//! For each size, a fresh store gets one brand with that many streams: the newest 100 inside
//! the last 30 days, the rest older, one in five in `error` (so that even 100 streams fill a
//! page of errors) and the others `ended`. With `--in-window 200,20000,...`, it then measures
//! analytics against the size of the window: for each, a fresh store whose brand has that many
//! streams spread over the last 30 days (and 100 older). With `--shows 100,10000`, `GET /shows`
//! against how many shows a brand holds (`shows.rs`). Requests go
//! through the whole router (authentication, rate limit, store, JSON), in process, so the
//! figures are the API's own time without a network client. On DynamoDB it also counts the
//! items each request reads (what DynamoDB bills read capacity for), from the responses. Each
//! request's peak memory is how far the heap rose above where it stood before the request (a
//! counting allocator); on DynamoDB that is what a function holds for the request, the store
//! being another process.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration as StdDuration, Instant};

use aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use axum::body::Body;
use axum::http::{Request, StatusCode, header::AUTHORIZATION};
use chrono::{Duration, Utc};
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::account::hash_key;
use hosting_domain::clock::{Clock, ManualClock};
use hosting_domain::{ApiKey, Brand, Creator, KeyEnvironment, Plan, Scope, Stream, StreamStatus};
use hosting_embedded::EmbeddedQueue;
use hosting_runtime::{LocalQueue, Parts, Runtime};
use hosting_support::config::{Config, StoreKind};
use tower::ServiceExt;
use uuid::Uuid;

mod backend;
mod heap;
mod shows;

use backend::{ItemsRead, history, runtime, seed};
use heap::peak_memory_of;

const BRAND: &str = "brand_scale";
const KEY: &str = "svc_test_scalebenchmarkkey000000000000000";
const CREATOR: &str = "avt_scalebench01";
/// Streams created in the last 30 days, whatever the size of the history.
const IN_WINDOW: usize = 100;
/// The rate limit is 100 a minute: the clock moves on a minute before it is reached.
const REQUESTS_PER_MINUTE: usize = 90;

struct Args {
    backend: String,
    sizes: Vec<usize>,
    in_window: Vec<usize>,
    delivery_log: Vec<usize>,
    shows: Vec<usize>,
    requests: usize,
}

fn numbers(flag: &str, value: &str) -> Vec<usize> {
    value
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or_else(|_| panic!("{flag}: numbers")))
        .collect()
}

fn args() -> Args {
    let mut args = Args {
        backend: "embedded".into(),
        sizes: vec![100, 10_000, 100_000],
        in_window: Vec::new(),
        delivery_log: Vec::new(),
        shows: Vec::new(),
        requests: 50,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--backend" => args.backend = value,
            "--sizes" => args.sizes = numbers(&flag, &value),
            "--in-window" => args.in_window = numbers(&flag, &value),
            "--delivery-log" => args.delivery_log = numbers(&flag, &value),
            "--shows" => args.shows = numbers(&flag, &value),
            "--requests" => args.requests = value.parse().expect("--requests: a number"),
            other => panic!("unknown flag {other}"),
        }
    }
    args
}

struct Case {
    name: &'static str,
    path: String,
}

fn cases(size: usize) -> Vec<Case> {
    let errors = (0..size).filter(|i| i % 5 == 3).count();
    let ended = size - errors;
    let deep = |count: usize| count.saturating_sub(20);
    vec![
        Case {
            name: "list, offset 0",
            path: "/api/v1/streams?limit=20".into(),
        },
        Case {
            name: "list, deep offset",
            path: format!("/api/v1/streams?limit=20&offset={}", deep(size)),
        },
        Case {
            name: "list ended, offset 0",
            path: "/api/v1/streams?status=ended&limit=20".into(),
        },
        Case {
            name: "list ended, deep offset",
            path: format!(
                "/api/v1/streams?status=ended&limit=20&offset={}",
                deep(ended)
            ),
        },
        Case {
            name: "list error, deep offset",
            path: format!(
                "/api/v1/streams?status=error&limit=20&offset={}",
                deep(errors)
            ),
        },
        Case {
            name: "analytics 30d",
            path: "/api/v1/analytics?period=30d".into(),
        },
    ]
}

fn percentile(sorted: &[StdDuration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at].as_secs_f64() * 1000.0
}

/// p50 and p99 in ms, the items the last request read, and the highest peak memory of any
/// request in KiB.
async fn measure(
    router: &hosting_http::Edge,
    clock: &ManualClock,
    sent: &mut usize,
    case: &Case,
    requests: usize,
    items_read: &ItemsRead,
) -> (f64, f64, u64, u64) {
    let mut timings = Vec::with_capacity(requests);
    let mut read = 0;
    let mut peak_kib = 0;
    for round in 0..requests + 3 {
        if *sent > 0 && sent.is_multiple_of(REQUESTS_PER_MINUTE) {
            clock.advance(Duration::minutes(1));
        }
        *sent += 1;
        let request = Request::get(&case.path)
            .header(AUTHORIZATION, format!("Bearer {KEY}"))
            .body(Body::empty())
            .unwrap();
        let read_before = items_read.0.load(Ordering::Relaxed);
        let begin = Instant::now();
        let ((status, body), peak) = peak_memory_of(async {
            let response = router.clone().oneshot(request).await.unwrap();
            let status = response.status();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            (status, body)
        })
        .await;
        let elapsed = begin.elapsed();
        assert_eq!(
            status,
            StatusCode::OK,
            "{}: {}",
            case.path,
            String::from_utf8_lossy(&body)
        );
        if round >= 3 {
            timings.push(elapsed);
            read = items_read.0.load(Ordering::Relaxed) - read_before;
            peak_kib = peak_kib.max(peak);
        }
    }
    timings.sort();
    (
        percentile(&timings, 0.5),
        percentile(&timings, 0.99),
        read,
        peak_kib,
    )
}

fn window_cases() -> Vec<Case> {
    vec![
        Case {
            name: "analytics 30d",
            path: "/api/v1/analytics?period=30d".into(),
        },
        Case {
            name: "analytics 7d",
            path: "/api/v1/analytics?period=7d".into(),
        },
        Case {
            name: "analytics 24h",
            path: "/api/v1/analytics?period=24h".into(),
        },
    ]
}

fn ratios(
    backend: &str,
    medians: &[(usize, &'static str, f64)],
    sizes: &[usize],
    cases: &[Case],
    what: &str,
) {
    let (Some(&smallest), Some(&largest)) = (sizes.first(), sizes.last()) else {
        return;
    };
    println!();
    println!("| backend | request | p50 at {largest} / p50 at {smallest} {what} |");
    println!("|---|---|---|");
    for case in cases {
        let p50 = |size: usize| {
            medians
                .iter()
                .find(|(s, name, _)| *s == size && *name == case.name)
                .map(|(_, _, p)| *p)
                .unwrap_or(f64::NAN)
        };
        println!(
            "| {backend} | {} | {:.2}x |",
            case.name,
            p50(largest) / p50(smallest)
        );
    }
}

#[tokio::main]
async fn main() {
    let args = args();
    let items_read = ItemsRead::default();
    let show_read = |read: u64| {
        if args.backend == "dynamodb" {
            read.to_string()
        } else {
            "-".to_owned()
        }
    };
    if !args.sizes.is_empty() {
        let mut medians: Vec<(usize, &'static str, f64)> = Vec::new();
        println!(
            "| backend | streams | request | p50 ms | p99 ms | items read per request | peak memory per request, KiB |"
        );
        println!("|---|---|---|---|---|---|---|");
        for &size in &args.sizes {
            let now = Utc::now();
            let clock = ManualClock::new(now);
            let runtime = runtime(&args.backend, size, &items_read, clock.clone()).await;
            let started = Instant::now();
            seed(&runtime, &history(size, IN_WINDOW, now)).await;
            eprintln!(
                "{} streams seeded in {:.1} s",
                size,
                started.elapsed().as_secs_f64()
            );
            let router = local_api::router(runtime.app.clone());
            let mut sent = 0usize;
            for case in cases(size) {
                let (p50, p99, read, peak_kib) = measure(
                    &router,
                    &clock,
                    &mut sent,
                    &case,
                    args.requests,
                    &items_read,
                )
                .await;
                println!(
                    "| {} | {} | {} | {p50:.2} | {p99:.2} | {} | {peak_kib} |",
                    args.backend,
                    size,
                    case.name,
                    show_read(read)
                );
                medians.push((size, case.name, p50));
            }
        }
        ratios(
            &args.backend,
            &medians,
            &args.sizes,
            &cases(0),
            "of history",
        );
    }
    if !args.in_window.is_empty() {
        let mut medians: Vec<(usize, &'static str, f64)> = Vec::new();
        println!();
        println!(
            "| backend | streams in the 30-day window | request | p50 ms | p99 ms | items read per request | peak memory per request, KiB |"
        );
        println!("|---|---|---|---|---|---|---|");
        for &window in &args.in_window {
            let now = Utc::now();
            let clock = ManualClock::new(now);
            let runtime = runtime(&args.backend, window, &items_read, clock.clone()).await;
            let started = Instant::now();
            seed(&runtime, &history(window + IN_WINDOW, window, now)).await;
            eprintln!(
                "{} streams in the window seeded in {:.1} s",
                window,
                started.elapsed().as_secs_f64()
            );
            let router = local_api::router(runtime.app.clone());
            let mut sent = 0usize;
            for case in window_cases() {
                let (p50, p99, read, peak_kib) = measure(
                    &router,
                    &clock,
                    &mut sent,
                    &case,
                    args.requests,
                    &items_read,
                )
                .await;
                println!(
                    "| {} | {} | {} | {p50:.2} | {p99:.2} | {} | {peak_kib} |",
                    args.backend,
                    window,
                    case.name,
                    show_read(read)
                );
                medians.push((window, case.name, p50));
            }
        }
        ratios(
            &args.backend,
            &medians,
            &args.in_window,
            &window_cases(),
            "in the window",
        );
    }
    if !args.shows.is_empty() {
        shows::measure_shows(&args, &items_read, &show_read).await;
    }
    if !args.delivery_log.is_empty() {
        println!();
        println!(
            "| backend | attempts in the log | request | p50 ms | p99 ms | items read per request | peak memory per request, KiB |"
        );
        println!("|---|---|---|---|---|---|---|");
        for &size in &args.delivery_log {
            let now = Utc::now();
            let clock = ManualClock::new(now);
            let runtime = runtime(&args.backend, size, &items_read, clock.clone()).await;
            seed(&runtime, &[]).await;
            let started = Instant::now();
            let webhook_id = seed_delivery_log(&runtime, size, now).await;
            eprintln!(
                "{} attempts logged in {:.1} s",
                size,
                started.elapsed().as_secs_f64()
            );
            let router = local_api::router(runtime.app.clone());
            let mut sent = 0usize;
            let deep = deep_cursor(&router, &clock, &webhook_id).await;
            for case in delivery_log_cases(&webhook_id, &deep) {
                let (p50, p99, read, peak_kib) = measure(
                    &router,
                    &clock,
                    &mut sent,
                    &case,
                    args.requests,
                    &items_read,
                )
                .await;
                println!(
                    "| {} | {} | {} | {p50:.2} | {p99:.2} | {} | {peak_kib} |",
                    args.backend,
                    size,
                    case.name,
                    show_read(read)
                );
            }
            // One recovery of the failed deliveries (one in three attempts ended one), at
            // most 1,000 of them.
            let read_before = items_read.0.load(Ordering::Relaxed);
            let begin = Instant::now();
            let request = Request::post(format!("/api/v1/webhooks/{webhook_id}/redeliver"))
                .header(AUTHORIZATION, format!("Bearer {KEY}"))
                .body(Body::from(
                    serde_json::json!({"since": (now - Duration::days(29)).to_rfc3339()})
                        .to_string(),
                ))
                .unwrap();
            let ((status, body), peak_kib) = peak_memory_of(async {
                let response = router.clone().oneshot(request).await.unwrap();
                let status = response.status();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                (status, body)
            })
            .await;
            let elapsed = begin.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(
                status,
                StatusCode::ACCEPTED,
                "{}",
                String::from_utf8_lossy(&body)
            );
            let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
            println!(
                "| {} | {} | redeliver since (queued {}, has_more {}) | {elapsed:.2} | - | {} | {peak_kib} |",
                args.backend,
                size,
                answer["queued"],
                answer["has_more"],
                show_read(items_read.0.load(Ordering::Relaxed) - read_before)
            );
        }
    }
}

/// A webhook of the brand with `size` attempts over the last 29 days: three per event, the
/// third of every event ending its delivery failed. Returns its id.
async fn seed_delivery_log(runtime: &Runtime, size: usize, now: chrono::DateTime<Utc>) -> String {
    use hosting_domain::delivery_log::{DeliveredEvent, DeliveryAttempt};
    use hosting_domain::event::EventType;
    let store = runtime.app.store.clone();
    store
        .put_api_key(&ApiKey {
            key_hash: hash_key(KEY),
            brand_id: BRAND.into(),
            environment: KeyEnvironment::Test,
            scopes: vec![Scope::WebhooksWrite],
            revoked: false,
            expires_at: None,
        })
        .await
        .unwrap();
    let webhook_id = Uuid::new_v4();
    store
        .create_webhook(
            &hosting_domain::Webhook {
                id: webhook_id,
                brand_id: BRAND.into(),
                url: "https://hooks.example.com/bench".into(),
                events: vec![EventType::StreamStarted],
                secret: hosting_domain::sealed::StoredSecret::Plain("whsec_bench".into()),
                active: true,
                created_at: now - Duration::days(30),
                previous_secret: None,
                previous_secret_expires_at: None,
                secret_rotated_at: None,
                signing_key: None,
                previous_signing_key: None,
                public_key: None,
                failing_since: None,
                disabled_reason: None,
            },
            25,
            None,
        )
        .await
        .unwrap();
    let start = now - Duration::days(29);
    let step = Duration::days(29).num_milliseconds() / size.max(1) as i64;
    let records: Vec<(DeliveryAttempt, DeliveredEvent)> = (0..size)
        .map(|n| {
            let event_id = format!("evt_{:032x}", n / 3);
            let attempted_at = start + Duration::milliseconds(step * n as i64);
            let last = n % 3 == 2;
            let attempt = DeliveryAttempt {
                brand_id: BRAND.into(),
                webhook_id,
                event_id: event_id.clone(),
                event_type: EventType::StreamStarted,
                event_created_at: start + Duration::milliseconds(step * (n / 3 * 3) as i64),
                attempt: (n % 3) as u32 + 1,
                attempted_at,
                succeeded: false,
                response_status: Some(500),
                duration_ms: 40,
                error: None,
                next_attempt_at: (!last).then(|| attempted_at + Duration::seconds(30)),
            };
            let event = DeliveredEvent {
                brand_id: BRAND.into(),
                webhook_id,
                event_id: event_id.clone(),
                event_type: EventType::StreamStarted,
                event_created_at: attempt.event_created_at,
                body: serde_json::json!({"id": event_id, "type": "stream.started"}).to_string(),
            };
            (attempt, event)
        })
        .collect();
    for chunk in records.chunks(32) {
        let writes = chunk
            .iter()
            .map(|(attempt, event)| store.record_attempt(attempt, event));
        for written in futures::future::join_all(writes).await {
            written.unwrap();
        }
    }
    webhook_id.to_string()
}

/// The cursor of the page 90% of the way down the log (walked once, not measured).
async fn deep_cursor(
    router: &hosting_http::Edge,
    clock: &ManualClock,
    webhook_id: &str,
) -> Option<String> {
    let mut cursor: Option<String> = None;
    let mut last = None;
    for _ in 0..1_000 {
        // Each page in a minute of its own, clear of the rate limit.
        clock.advance(Duration::minutes(1));
        let path = match &cursor {
            Some(cursor) => {
                format!("/api/v1/webhooks/{webhook_id}/deliveries?limit=100&cursor={cursor}")
            }
            None => format!("/api/v1/webhooks/{webhook_id}/deliveries?limit=100"),
        };
        let request = Request::get(&path)
            .header(AUTHORIZATION, format!("Bearer {KEY}"))
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let page: serde_json::Value = serde_json::from_slice(&body).unwrap();
        match page["next_cursor"].as_str() {
            Some(next) => {
                last = cursor.replace(next.to_owned());
            }
            None => break,
        }
    }
    // The one before the last page: deep, and still followed by a full page.
    last.or(cursor)
}

fn delivery_log_cases(webhook_id: &str, deep: &Option<String>) -> Vec<Case> {
    let base = format!("/api/v1/webhooks/{webhook_id}/deliveries");
    let mut cases = vec![
        Case {
            name: "deliveries, first page",
            path: format!("{base}?limit=20"),
        },
        Case {
            name: "deliveries `status=failed`, first page",
            path: format!("{base}?limit=20&status=failed"),
        },
        Case {
            name: "deliveries `event_id`",
            path: format!("{base}?limit=20&event_id=evt_{:032x}", 1),
        },
    ];
    if let Some(deep) = deep {
        cases.push(Case {
            name: "deliveries, a deep page",
            path: format!("{base}?limit=20&cursor={deep}"),
        });
    }
    cases
}
