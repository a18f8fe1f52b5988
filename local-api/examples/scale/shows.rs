//! `--shows 100,10000`: `GET /shows` against how many shows a brand holds. For each size, a
//! fresh store gets one brand with that many shows spread over the next 30 days, one in five
//! cancelled and the rest `scheduled`; then pages at offset 0 and deep, of all shows and of one
//! status, and one show by id.

use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::show::{Show, ShowStatus};

use super::*;

/// Shows written at once while seeding.
const IN_FLIGHT: usize = 16;

fn shows(size: usize, now: chrono::DateTime<Utc>) -> Vec<Show> {
    let spacing_ms = Duration::days(30).num_milliseconds() / i64::try_from(size.max(1)).unwrap();
    let stream = serde_json::json!({"creator_id": CREATOR, "product_name": "Glow Serum",
                                    "platform": "tiktok", "duration_minutes": 30});
    (0..size)
        .map(|i| Show {
            id: Uuid::new_v4(),
            brand_id: BRAND.into(),
            status: if i % 5 == 3 {
                ShowStatus::Cancelled
            } else {
                ShowStatus::Scheduled
            },
            starts_at: now + Duration::minutes(5) + Duration::milliseconds(spacing_ms * i as i64),
            remind_minutes_before: None,
            stream: stream.as_object().unwrap().clone(),
            stream_id: None,
            error: None,
            created_at: now,
            test: true,
            reminded: true,
            claim_until: None,
        })
        .collect()
}

async fn seed_shows(runtime: &Runtime, shows: Vec<Show>) -> Uuid {
    let first = shows[0].id;
    let mut writing = tokio::task::JoinSet::new();
    for show in shows {
        if writing.len() >= IN_FLIGHT {
            writing.join_next().await.unwrap().unwrap();
        }
        let store = runtime.app.store.clone();
        writing.spawn(async move {
            store
                .create_show(&show, &SealedStreamKeys::default(), None, None)
                .await
                .unwrap();
        });
    }
    while let Some(done) = writing.join_next().await {
        done.unwrap();
    }
    first
}

fn cases(size: usize, one: Uuid) -> Vec<Case> {
    let cancelled = (0..size).filter(|i| i % 5 == 3).count();
    let scheduled = size - cancelled;
    let deep = |count: usize| count.saturating_sub(20);
    vec![
        Case {
            name: "shows, offset 0",
            path: "/api/v1/shows?limit=20".into(),
        },
        Case {
            name: "shows, deep offset",
            path: format!("/api/v1/shows?limit=20&offset={}", deep(size)),
        },
        Case {
            name: "shows scheduled, deep offset",
            path: format!(
                "/api/v1/shows?status=scheduled&limit=20&offset={}",
                deep(scheduled)
            ),
        },
        Case {
            name: "shows cancelled, deep offset",
            path: format!(
                "/api/v1/shows?status=cancelled&limit=20&offset={}",
                deep(cancelled)
            ),
        },
        Case {
            name: "show by id",
            path: format!("/api/v1/shows/shw_{}", one.simple()),
        },
    ]
}

pub async fn measure_shows(args: &Args, items_read: &ItemsRead, show_read: &dyn Fn(u64) -> String) {
    println!();
    println!(
        "| backend | shows | request | p50 ms | p99 ms | items read per request | peak memory per request, KiB |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &size in &args.shows {
        let now = Utc::now();
        let clock = ManualClock::new(now);
        let runtime = runtime(&args.backend, size, items_read, clock.clone()).await;
        seed(&runtime, &[]).await;
        let started = Instant::now();
        let one = seed_shows(&runtime, shows(size, now)).await;
        eprintln!(
            "{} shows scheduled in {:.1} s",
            size,
            started.elapsed().as_secs_f64()
        );
        let router = local_api::router(runtime.app.clone());
        let mut sent = 0usize;
        for case in cases(size, one) {
            let (p50, p99, read, peak_kib) =
                measure(&router, &clock, &mut sent, &case, args.requests, items_read).await;
            println!(
                "| {} | {} | {} | {p50:.2} | {p99:.2} | {} | {peak_kib} |",
                args.backend,
                size,
                case.name,
                show_read(read)
            );
        }
    }
}
