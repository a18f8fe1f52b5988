//! What every test leaves true, checked when its `TestApp` is dropped, on either backend:
//!
//! - each brand's active slots are its `preparing` plus `live` streams, and each stream has at
//!   most one `stream.started` and at most one final event, whose type is the stream's final
//!   status; a stream the test finished (not one loaded as a fixture) has exactly one;
//! - the outbox drains: the durable records that drive side effects are the events waiting
//!   for the relay to hand them to the delivery queue, and the pending room cleanups of
//!   finished streams (docs/lifecycle.md, "Room cleanup"). The check runs the outbox relay
//!   and the room cleanup sweep until each completes nothing more, as the local runtime's
//!   loops would, on a clock a day past the test's (and the system's) time, so that every
//!   retry, claim lease and launch hold the test left has come due. Drained means none of
//!   those records is left afterwards: no event still to relay or waiting for a retry, none
//!   set aside for an operator, no room cleanup pending. Deliveries already in the delivery
//!   queue are past the outbox and not checked;
//! - no finished room is left: when the app was built with a fake LiveKit, after the drain no
//!   `ended` or `error` stream's room (`stream-<id>`) exists there, no egress of that room
//!   runs, no destination of it is short of final, its recording is past `processing` once
//!   read back, and its keys are erased (docs/destinations.md);
//! - each destination's `stream.destination_active` and `stream.destination_failed` are written
//!   at most once.
//!
//! A test that breaks the store on purpose (an outage, a deleted table) is not checked at all;
//! one that leaves side effects undone on purpose (a LiveKit that never deletes, a queue that
//! refuses) opts out of the check it fails, saying why.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, TimeDelta, Utc};
use hosting_app::App;
use hosting_app::app::AppParts;
use hosting_app::delivery::relay;
use hosting_app::service::rooms;
use hosting_aws::dynamodb::DynamoStore;
use hosting_aws::sqs::SqsQueue;
use hosting_domain::clock::ManualClock;
use hosting_domain::ports::{
    DeliveryQueue, KeyVault, Outbox, RoomCleanupStore, Store, StreamKeyStore, StreamListStore,
    StreamStore,
};
use hosting_domain::{EventType, Stream, StreamEvent, StreamStatus};
use hosting_embedded::{EmbeddedQueue, EmbeddedStore, EmbeddedTimers};
use hosting_support::config::Config;
use uuid::Uuid;

use super::fake_livekit::FakeLiveKit;
pub use super::room_invariants::{doubled_hosts, undeleted_rooms, unstopped_egresses};
use super::{backend, faults};

/// The brands every test's seed holds; brands of the events are checked too.
const SEEDED_BRANDS: [&str; 5] = [
    "brand_a",
    "brand_b",
    "brand_free",
    "brand_starter",
    "brand_gaming",
];

pub(super) enum Backend {
    Embedded {
        store: EmbeddedStore,
        queue: EmbeddedQueue,
        /// The app's own: a key of the process.
        vault: Arc<dyn KeyVault>,
    },
    DynamoDb {
        table: String,
        queue_url: String,
        dlq_url: String,
    },
}

/// What the drop check reads: the app's backends and configuration, the test clock's time,
/// and which of the checks apply.
pub(super) struct Subject {
    pub backend: Backend,
    pub config: Config,
    pub test_now: DateTime<Utc>,
    /// `None` when the app had no fake LiveKit or the test opted out of the rooms check.
    pub livekit: Option<FakeLiveKit>,
    pub outbox_must_drain: bool,
    /// Streams loaded as fixtures, which finished without an event.
    pub seeded_streams: HashSet<Uuid>,
}

/// The violations, read on a thread of its own: `Drop` cannot wait on the test's runtime, and
/// the test's AWS and LiveKit clients belong to that runtime, so the check makes its own.
pub(super) fn violations(subject: Subject) -> Vec<String> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the check")
            .block_on(check(subject))
    })
    .join()
    .unwrap_or_else(|_| vec!["the invariant check itself panicked".into()])
}

/// What the check reads from a backend: its store, queue and vault, the events it holds and
/// each brand's count of active streams.
type Read = (
    Arc<dyn Store>,
    Arc<dyn DeliveryQueue>,
    Arc<dyn KeyVault>,
    Vec<StreamEvent>,
    BTreeMap<String, u32>,
);

async fn check(subject: Subject) -> Vec<String> {
    let Subject {
        backend,
        config,
        test_now,
        livekit,
        outbox_must_drain,
        seeded_streams,
    } = subject;
    let (store, queue, vault, events, active): Read = match backend {
        Backend::Embedded {
            store,
            queue,
            vault,
        } => {
            let events = store.emitted_events();
            let active: BTreeMap<String, u32> = brands(&events)
                .into_iter()
                .map(|brand| {
                    let count = store.active_streams(&brand);
                    (brand, count)
                })
                .collect();
            (Arc::new(store), Arc::new(queue), vault, events, active)
        }
        Backend::DynamoDb {
            table,
            queue_url,
            dlq_url,
        } => {
            // Fault rules a test left for its table must not fail the check's own requests.
            if std::env::var_os("FAULT_PROXY_URL").is_some() {
                faults::clear(&table).await;
            }
            let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
            let vault = hosting_aws::kms::KmsKeyVault::new(
                hosting_aws::kms::client(&sdk),
                backend::TEST_SECRETS_KEY.to_owned(),
                table.clone(),
            );
            let store = DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table);
            let queue = SqsQueue::new(aws_sdk_sqs::Client::new(&sdk), queue_url, dlq_url);
            let events = backend::scan_events(&store).await;
            let mut active = BTreeMap::new();
            for brand in brands(&events) {
                let counters = store.brand_counters(&brand).await.unwrap_or_default();
                let count = match counters.get("active") {
                    Some(AttributeValue::N(n)) => n.parse().unwrap_or(u32::MAX),
                    _ => 0,
                };
                active.insert(brand, count);
            }
            (
                Arc::new(store),
                Arc::new(queue),
                Arc::new(vault),
                events,
                active,
            )
        }
    };
    let mut violations = match &livekit {
        Some(livekit) => doubled_hosts(&*store, &brands(&events), livekit).await,
        None => Vec::new(),
    };
    let at = drain_time(test_now);
    violations.extend(drain(&app_at(config, store.clone(), queue, vault, at)).await);
    if outbox_must_drain {
        violations.extend(undrained(&*store, at).await);
    }
    if let Some(livekit) = livekit {
        violations.extend(undeleted_rooms(&*store, &brands(&events), &livekit).await);
        violations.extend(unstopped_egresses(&*store, &brands(&events), &livekit.egresses()).await);
    }
    let active = |brand: &str| active.get(brand).copied().unwrap_or(0);
    violations.extend(check_store(&*store, &events, active, &seeded_streams).await);
    violations.extend(super::show_invariants::check_shows(&*store, &brands(&events)).await);
    violations
}

/// When the drain runs: a day past the later of the test's clock and the system's, past every
/// retry delay, relay lease and launch hold a test can leave pending.
pub fn drain_time(test_now: DateTime<Utc>) -> DateTime<Utc> {
    test_now.max(Utc::now()) + TimeDelta::days(1)
}

/// An app on `store` and `queue`, with the room provider `config` names, whose clock stands
/// still at `at`.
pub fn app_at(
    config: Config,
    store: Arc<dyn Store>,
    queue: Arc<dyn DeliveryQueue>,
    vault: Arc<dyn KeyVault>,
    at: DateTime<Utc>,
) -> App {
    let rooms = hosting_livekit::rooms_from_config(&config);
    let clock: Arc<dyn hosting_domain::clock::Clock> = Arc::new(ManualClock::new(at));
    let recordings = Arc::new(hosting_runtime::folder_recordings(&config, clock.clone()));
    App::new(AppParts {
        config,
        clock,
        store,
        timers: Arc::new(EmbeddedTimers::new()),
        queue,
        clip_queue: Arc::new(hosting_embedded::EmbeddedClipQueue::new()),
        rooms,
        recordings,
        vault,
    })
}

/// Runs the outbox relay and the room cleanup sweep until each completes nothing more, as
/// the local runtime's loops do; returns what failed outright.
pub async fn drain(app: &App) -> Vec<String> {
    let mut failures = Vec::new();
    // A day on, every egress is past its read-back (docs/destinations.md, "Lost, late and early
    // reports"): a recording still `processing` is settled from LiveKit.
    if let Err(err) = hosting_app::service::timers::read_back_egresses(app, 1_000).await {
        failures.push(format!("the egress read-back failed: {err}"));
    }
    // A sweep stops when its time budget is spent (a test of hundreds of streams on moto):
    // swept again until it finds nothing more.
    for _ in 0..20 {
        match relay::sweep(app, std::time::Duration::ZERO).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                failures.push(format!("the outbox relay failed: {err}"));
                break;
            }
        }
    }
    // A sweep takes one batch of the due cleanups; those that fail are due again only later.
    for _ in 0..100 {
        match rooms::sweep(app).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                failures.push(format!("the room cleanup sweep failed: {err}"));
                break;
            }
        }
    }
    failures
}

/// The outbox records left in `store` after a drain at `drained_at`.
pub async fn undrained<
    S: Outbox + StreamStore + StreamListStore + StreamKeyStore + RoomCleanupStore + ?Sized,
>(
    store: &S,
    drained_at: DateTime<Utc>,
) -> Vec<String> {
    // Past any retry the drain itself scheduled.
    let horizon = drained_at + TimeDelta::days(365);
    const ALL: usize = 1000;
    let mut left = Vec::new();
    match store.pending_events(horizon, ALL).await {
        Ok(events) => left.extend(events.iter().map(|e| {
            format!(
                "event {} ({}) of stream {}: not relayed",
                e.id,
                e.event_type.as_str(),
                e.stream_id.map(|id| id.to_string()).unwrap_or_default()
            )
        })),
        Err(err) => left.push(format!("the outbox is unreadable: {err}")),
    }
    match store.set_aside_events(ALL).await {
        Ok(set_aside) => left.extend(set_aside.iter().map(|s| {
            format!(
                "event {} ({}) of stream {}: set aside after {} attempts: {}",
                s.event.id,
                s.event.event_type.as_str(),
                s.event
                    .stream_id
                    .map(|id| id.to_string())
                    .unwrap_or_default(),
                s.attempts,
                s.error
            )
        })),
        Err(err) => left.push(format!("the set-aside events are unreadable: {err}")),
    }
    match store.due_room_cleanups(horizon, ALL).await {
        Ok(cleanups) => left.extend(cleanups.iter().map(|c| {
            format!(
                "stream {}: the deletion of room {} still pending after {} failed attempts",
                c.stream_id, c.room_name, c.attempts
            )
        })),
        Err(err) => left.push(format!("the room cleanups are unreadable: {err}")),
    }
    left
}

pub fn brands(events: &[StreamEvent]) -> BTreeSet<String> {
    SEEDED_BRANDS
        .iter()
        .map(|b| b.to_string())
        .chain(events.iter().map(|e| e.brand_id.clone()))
        .collect()
}

/// All of a brand's streams in `status`, newest first; a failed read is reported in
/// `violations`.
pub(super) async fn finished_streams<S: StreamStore + StreamListStore + StreamKeyStore + ?Sized>(
    store: &S,
    brand: &str,
    status: StreamStatus,
    violations: &mut Vec<String>,
) -> Vec<Stream> {
    const PAGE: usize = 100;
    let mut streams = Vec::new();
    loop {
        match store
            .list_streams(brand, Some(status), PAGE, streams.len())
            .await
        {
            Ok(page) => {
                let last = page.streams.len() < PAGE;
                streams.extend(page.streams);
                if last {
                    break;
                }
            }
            Err(err) => {
                violations.push(format!("{brand}: streams unreadable: {err}"));
                break;
            }
        }
    }
    streams
}

/// The violations of `events` against `store`, with `active` giving each brand's slot count;
/// finished streams outside `seeded` must have their final event.
pub async fn check_store<S: StreamStore + StreamListStore + StreamKeyStore + ?Sized>(
    store: &S,
    events: &[StreamEvent],
    active: impl Fn(&str) -> u32,
    seeded: &HashSet<Uuid>,
) -> Vec<String> {
    let mut violations = Vec::new();
    for brand in brands(events) {
        let mut in_flight = 0;
        for status in [StreamStatus::Preparing, StreamStatus::Live] {
            match store.list_streams(&brand, Some(status), 1, 0).await {
                Ok(page) => in_flight += page.total,
                Err(err) => violations.push(format!("{brand}: streams unreadable: {err}")),
            }
        }
        let slots = active(&brand);
        if u64::from(slots) != in_flight {
            violations.push(format!(
                "{brand}: {slots} active slots for {in_flight} preparing or live streams"
            ));
        }
    }
    let mut per_stream: BTreeMap<Uuid, (u32, Vec<EventType>)> = BTreeMap::new();
    // Each destination reaches each evented state once.
    let mut per_destination: BTreeMap<(String, &'static str), u32> = BTreeMap::new();
    let mut per_recording: BTreeMap<Uuid, u32> = BTreeMap::new();
    let mut per_clip: BTreeMap<String, u32> = BTreeMap::new();
    for event in events {
        // A webhook's own event is about no stream.
        let Some(stream_id) = event.stream_id else {
            continue;
        };
        let (started, finals) = per_stream.entry(stream_id).or_default();
        match event.event_type {
            EventType::StreamStarted => *started += 1,
            EventType::StreamEnded | EventType::StreamError => finals.push(event.event_type),
            EventType::DestinationActive | EventType::DestinationFailed => {
                let body: serde_json::Value = serde_json::from_str(&event.body).unwrap_or_default();
                let id = body["data"]["destination"]["destination_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                *per_destination
                    .entry((id, event.event_type.as_str()))
                    .or_default() += 1;
            }
            // A recording is evented once: `ready` or `failed`.
            EventType::RecordingReady | EventType::RecordingFailed => {
                *per_recording.entry(stream_id).or_default() += 1;
            }
            // A clip is evented once: `ready` or `failed`.
            EventType::ClipReady | EventType::ClipFailed => {
                let body: serde_json::Value = serde_json::from_str(&event.body).unwrap_or_default();
                let id = body["data"]["clip"]["clip_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                *per_clip.entry(id).or_default() += 1;
            }
            EventType::WebhookTest
            | EventType::WebhookDisabled
            | EventType::ShowStarted
            | EventType::ShowFailed
            | EventType::ShowReminder => {}
        }
    }
    for (id, count) in per_recording {
        if count > 1 {
            violations.push(format!("stream {id}: {count} recording events"));
        }
    }
    for (id, count) in per_clip {
        if count > 1 || id.is_empty() {
            violations.push(format!("clip {id:?}: {count} clip events"));
        }
    }
    for ((id, event_type), count) in per_destination {
        if count > 1 || id.is_empty() {
            violations.push(format!("destination {id:?}: {count} {event_type} events"));
        }
    }
    for brand in brands(events) {
        for status in [StreamStatus::Ended, StreamStatus::Error] {
            for stream in finished_streams(store, &brand, status, &mut violations).await {
                let finals = per_stream
                    .get(&stream.id)
                    .map_or(0, |(_, finals)| finals.len());
                if finals == 0 && !seeded.contains(&stream.id) {
                    violations.push(format!(
                        "stream {}: {} with no final event",
                        stream.id,
                        status.as_str()
                    ));
                }
            }
        }
    }
    for (id, (started, finals)) in per_stream {
        if started > 1 {
            violations.push(format!("stream {id}: {started} stream.started events"));
        }
        match finals.as_slice() {
            [] => {}
            [last] => {
                let expected = match last {
                    EventType::StreamEnded => StreamStatus::Ended,
                    _ => StreamStatus::Error,
                };
                match store.get_stream(id).await {
                    Ok(Some(stream)) if stream.status == expected => {}
                    Ok(Some(stream)) => violations.push(format!(
                        "stream {id}: a final {last:?} event, but it is {}",
                        stream.status.as_str()
                    )),
                    Ok(None) => violations.push(format!("stream {id}: an event, no stream")),
                    Err(err) => violations.push(format!("stream {id}: unreadable: {err}")),
                }
            }
            many => violations.push(format!("stream {id}: {} final events", many.len())),
        }
    }
    violations
}
