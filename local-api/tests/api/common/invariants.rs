//! What every test leaves true, checked when its `TestApp` is dropped, on either backend: each
//! brand's active slots are its `preparing` plus `live` streams, and each stream has at most one
//! `stream.started` and at most one final event, whose type is the stream's final status. A
//! test that breaks the store on purpose (an outage, a deleted table) is not checked.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue;
use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::domain::{EventType, StreamEvent, StreamStatus};
use hosting_domain::ports::StreamStore;
use hosting_embedded::MemoryStore;
use uuid::Uuid;

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
    Memory(MemoryStore),
    DynamoDb { table: String },
}

/// The violations, read on a thread of its own: `Drop` cannot wait on the test's runtime, and
/// the test's DynamoDB client belongs to that runtime, so the check makes its own.
pub(super) fn violations(backend: Backend) -> Vec<String> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the check")
            .block_on(check(backend))
    })
    .join()
    .unwrap_or_else(|_| vec!["the invariant check itself panicked".into()])
}

async fn check(backend: Backend) -> Vec<String> {
    match backend {
        Backend::Memory(memory) => {
            let events = memory.emitted_events();
            let active = |brand: &str| memory.active_streams(brand);
            check_store(&memory, &events, active).await
        }
        Backend::DynamoDb { table } => {
            // Fault rules a test left for its table must not fail the check's own reads.
            if std::env::var_os("FAULT_PROXY_URL").is_some() {
                faults::clear(&table).await;
            }
            let sdk = hosting_aws::sdk_config().await;
            let store = DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table);
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
            let active = |brand: &str| active.get(brand).copied().unwrap_or(0);
            check_store(&store, &events, active).await
        }
    }
}

fn brands(events: &[StreamEvent]) -> BTreeSet<String> {
    SEEDED_BRANDS
        .iter()
        .map(|b| b.to_string())
        .chain(events.iter().map(|e| e.brand_id.clone()))
        .collect()
}

/// The violations of `events` against `store`, with `active` giving each brand's slot count.
pub async fn check_store<S: StreamStore + ?Sized>(
    store: &S,
    events: &[StreamEvent],
    active: impl Fn(&str) -> u32,
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
    for event in events {
        let (started, finals) = per_stream.entry(event.stream_id).or_default();
        match event.event_type {
            EventType::StreamStarted => *started += 1,
            EventType::StreamEnded | EventType::StreamError => finals.push(event.event_type),
            EventType::WebhookTest => {}
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
