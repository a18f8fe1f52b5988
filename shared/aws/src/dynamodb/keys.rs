//! Every key of the table, built here and nowhere else (the table design is in `mod.rs`).

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::Item;
use super::items::s;
use hosting_domain::StreamStatus;

/// The sparse index of work due by a time: outbox events waiting to be relayed, active
/// streams' deadlines, and pending room cleanups. Its keys are `due_pk` (the kind of work and a shard) and `due_sk`
/// (the time it is due, then the id).
pub(super) const DUE_INDEX: &str = "due";
pub(super) const DUE_PK: &str = "due_pk";
pub(super) const DUE_SK: &str = "due_sk";
/// Partitions each kind of due work is spread over, so no single index partition is hot.
pub(super) const DUE_SHARDS: u32 = 8;
/// Where the relay sets aside events it gave up on.
pub(super) const SET_ASIDE_PK: &str = "OUTBOX#SET_ASIDE";

pub(super) const WEBHOOK_SK_PREFIX: &str = "WEBHOOK#";

/// Fixed-width UTC timestamps, so that string order is time order in sort keys.
pub(super) fn sortable(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub(super) fn key(pk: String, sk: &str) -> Item {
    Item::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
}

/// A webhook's delivery log: every attempt is written to four partitions, one per filter a
/// page can have (none, its status, its event, both), each sorted by position (time), so that
/// any page is one range of one partition.
pub(super) fn attempts_pk(
    webhook_id: Uuid,
    status: Option<&str>,
    event_id: Option<&str>,
) -> String {
    let mut pk = format!("ATTEMPTS#{webhook_id}");
    if let Some(event_id) = event_id {
        pk.push_str("#EVT#");
        pk.push_str(event_id);
    }
    if let Some(status) = status {
        pk.push_str("#S#");
        pk.push_str(status);
    }
    pk
}

/// The event as delivered to a webhook (its body, for sending it again).
pub(super) fn delivered_event_key(webhook_id: Uuid, event_id: &str) -> Item {
    key(format!("DELIVERED#{webhook_id}#{event_id}"), "DELIVERED")
}

/// A webhook's deliveries that ended failed, by their event's creation.
pub(super) fn failed_deliveries_pk(webhook_id: Uuid) -> String {
    format!("FAILED#{webhook_id}")
}

pub(super) fn failed_delivery_key(
    webhook_id: Uuid,
    event_created_at: DateTime<Utc>,
    event_id: &str,
) -> Item {
    let sk = format!("{}#{event_id}", sortable(event_created_at));
    key(failed_deliveries_pk(webhook_id), &sk)
}

pub(super) fn brand_key(brand_id: &str) -> Item {
    key(format!("BRAND#{brand_id}"), "BRAND")
}

pub(super) fn api_key_key(key_hash: &str) -> Item {
    key(format!("KEY#{key_hash}"), "KEY")
}

/// A key the service keeps for itself ([`hosting_domain::ports::ServiceKeyStore`]).
pub(super) fn service_key_key(name: &str) -> Item {
    key(format!("SERVICE_KEY#{name}"), "SERVICE_KEY")
}

pub(super) const CREATORS_PK: &str = "CREATORS";

pub(super) fn creator_key(creator_id: &str) -> Item {
    key(CREATORS_PK.to_owned(), creator_id)
}

pub(super) fn stream_pk(stream_id: Uuid) -> String {
    format!("STREAM#{stream_id}")
}

/// The stream item's sort key: after its script's (`SCRIPT`).
pub(super) const STREAM_SK: &str = "STREAM";

pub(super) fn stream_key(stream_id: Uuid) -> Item {
    key(stream_pk(stream_id), STREAM_SK)
}

/// The sort keys of a live stream's viewer counter shards (see `viewers.rs`).
pub(super) const VIEWER_SHARD_PREFIX: &str = "VIEWERS#";

/// The partition of a stream's viewer shards numbered `partition` (of however many the store
/// spreads them over; see `viewers.rs`).
pub(super) fn viewer_shards_pk(stream_id: Uuid, partition: u32) -> String {
    format!("VIEWERS#{stream_id}#{partition}")
}

/// Shard `shard` of a stream's viewer count, in partition `shard % partitions`.
pub(super) fn viewer_shard_key(stream_id: Uuid, shard: u32, partitions: u32) -> Item {
    key(
        viewer_shards_pk(stream_id, shard % partitions.max(1)),
        &format!("{VIEWER_SHARD_PREFIX}{shard:02}"),
    )
}

/// A stream's script, apart from the stream (read only by the launch).
pub(super) fn script_key(stream_id: Uuid) -> Item {
    key(stream_pk(stream_id), "SCRIPT")
}

/// The item of a stream's destination keys: its sort key sorts before `STREAM`, so a read of
/// the stream and its viewer shards (`sk >= STREAM`) never carries it.
pub(super) fn stream_keys_key(stream_id: Uuid) -> Item {
    key(stream_pk(stream_id), "DESTINATION_KEYS")
}

pub(super) fn position_pk(brand_id: &str, position: u64) -> String {
    format!("POS#{brand_id}#{position}")
}

pub(super) fn position_key(brand_id: &str, position: u64) -> Item {
    key(position_pk(brand_id, position), "POS")
}

pub(super) fn errors_key(brand_id: &str, block: u64) -> Item {
    key(format!("ERRORS#{brand_id}#{block}"), "ERRORS")
}

/// The block an error-set item's key names.
pub(super) fn errors_block(pk: &str) -> Option<u64> {
    pk.rsplit('#').next()?.parse().ok()
}

/// A brand's analytics aggregates of a day of creation, per hour (see `analytics.rs`).
pub(super) fn day_key(brand_id: &str, day: NaiveDate) -> Item {
    key(format!("DAY#{brand_id}#{day}"), "DAY")
}

/// A brand's analytics aggregates of an hour of creation, per minute (see `analytics.rs`).
pub(super) fn hour_key(brand_id: &str, day: NaiveDate, hour: u32) -> Item {
    key(format!("HOUR#{brand_id}#{day}T{hour:02}"), "HOUR")
}

pub(super) fn room_key(room_name: &str) -> Item {
    key(format!("ROOM#{room_name}"), "ROOM")
}

/// Webhooks live in their brand's partition, so the brand's list is one consistent `Query`.
pub(super) fn webhook_key(brand_id: &str, webhook_id: Uuid) -> Item {
    key(
        format!("BRAND#{brand_id}"),
        &format!("{WEBHOOK_SK_PREFIX}{webhook_id}"),
    )
}

pub(super) fn brand_pk(brand_id: &str) -> String {
    format!("BRAND#{brand_id}")
}

pub(super) fn event_key(event_id: &str) -> Item {
    key(format!("EVENT#{event_id}"), "EVENT")
}

pub(super) fn rate_key(brand_id: &str, window_start: DateTime<Utc>) -> Item {
    key(
        format!("RATE#{brand_id}#{}", window_start.timestamp()),
        "RATE",
    )
}

pub(super) fn idempotency_key(key_id: &str) -> Item {
    key(format!("IDEMPOTENCY#{key_id}"), "IDEMPOTENCY")
}

pub(super) fn provider_event_key(event_id: &str) -> Item {
    key(format!("PROVIDER_EVENT#{event_id}"), "PROVIDER_EVENT")
}

/// The due-index partition of a pending event: its shard, from the event id's random digits.
pub(super) fn outbox_pk(event_id: &str) -> String {
    format!("OUTBOX#{}", shard_of(event_id))
}

pub(super) fn outbox_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("OUTBOX#{shard}"))
}

pub(super) fn delivery_slot_key(brand_id: &str, slot: u32) -> Item {
    key(format!("DSLOT#{brand_id}#{slot}"), "DSLOT")
}

/// A brand's parked deliveries: one partition, in park order.
pub(super) fn parked_pk(brand_id: &str) -> String {
    format!("PARKED#{brand_id}")
}

pub(super) fn parked_wake_key(brand_id: &str) -> Item {
    key(format!("PARKED_WAKE#{brand_id}"), "PARKED_WAKE")
}

/// The due-index partition of a brand's wake-up: a shard from its id's bytes (brand ids are
/// not random hex).
pub(super) fn parked_wake_due_pk(brand_id: &str) -> String {
    let sum = brand_id.bytes().fold(0u32, |sum, byte| {
        sum.wrapping_mul(31).wrapping_add(u32::from(byte))
    });
    format!("PARKED_WAKE#{}", sum % DUE_SHARDS)
}

pub(super) fn parked_wake_due_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("PARKED_WAKE#{shard}"))
}

pub(super) fn room_cleanup_key(stream_id: Uuid) -> Item {
    key(format!("CLEANUP#{stream_id}"), "CLEANUP")
}

/// The due-index partition of a pending room cleanup.
pub(super) fn room_cleanup_pk(stream_id: Uuid) -> String {
    format!("CLEANUP#{}", shard_of(&stream_id.simple().to_string()))
}

pub(super) fn room_cleanup_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("CLEANUP#{shard}"))
}

/// The due-index partition of a clip owed work (docs/clips.md).
pub(super) fn clip_due_pk(clip_id: &str) -> String {
    format!("CLIP#{}", shard_of(clip_id))
}

pub(super) fn clip_due_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("CLIP#{shard}"))
}

/// The due-index partition of an active stream's deadline.
pub(super) fn deadline_pk(stream_id: Uuid) -> String {
    format!("DEADLINE#{}", shard_of(&stream_id.simple().to_string()))
}

pub(super) fn deadline_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("DEADLINE#{shard}"))
}

/// A show's item (`sk` `SHOW`) and its cold items: its destinations' keys
/// (`DESTINATION_KEYS`) and its script (`SCRIPT`), erased when it starts, fails or is cancelled.
pub(super) fn show_key(show_id: Uuid) -> Item {
    key(format!("SHOW#{show_id}"), "SHOW")
}

pub(super) fn show_keys_key(show_id: Uuid) -> Item {
    key(format!("SHOW#{show_id}"), "DESTINATION_KEYS")
}

pub(super) fn show_script_key(show_id: Uuid) -> Item {
    key(format!("SHOW#{show_id}"), "SCRIPT")
}

/// A brand's list of shows of one filter (`a`ll, or a status's letter), sorted by
/// `starts_at` then id (see `shows.rs`).
pub(super) fn show_list_pk(brand_id: &str, filter: char) -> String {
    format!("SHOWS#{brand_id}#{filter}")
}

/// How many shows a brand's list `filter` holds per month of `starts_at` (see
/// `show_counts.rs`).
pub(super) fn show_counts_key(brand_id: &str, filter: char) -> Item {
    key(format!("SHOWCOUNTS#{brand_id}#{filter}"), "SHOWCOUNTS")
}

/// How many shows a brand's list `filter` holds per hour of one month (`yyyymm`).
pub(super) fn show_month_counts_key(brand_id: &str, filter: char, month: &str) -> Item {
    key(
        format!("SHOWCOUNTS#{brand_id}#{filter}"),
        &format!("MONTH#{month}"),
    )
}

/// The due-index partition of a show's next moment (its reminder, its start, its claim's end).
pub(super) fn show_due_pk(show_id: Uuid) -> String {
    format!("SHOW#{}", shard_of(&show_id.simple().to_string()))
}

pub(super) fn show_due_pks() -> impl Iterator<Item = String> {
    (0..DUE_SHARDS).map(|shard| format!("SHOW#{shard}"))
}

/// A shard from the last hex digit of an id (ids are random).
fn shard_of(id: &str) -> u32 {
    id.chars()
        .next_back()
        .and_then(|c| c.to_digit(16))
        .unwrap_or(0)
        % DUE_SHARDS
}

pub(super) fn due_sk(at: DateTime<Utc>, id: &str) -> String {
    format!("{}#{id}", sortable(at))
}

/// The brand's newest stream, as its counters keep it.
pub(super) fn created_sort_key(created_at: DateTime<Utc>, id: Uuid) -> String {
    format!("{}#{id}", sortable(created_at))
}

pub(super) fn status_counter(status: StreamStatus) -> String {
    format!("streams_{}", status.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_spread_over_every_partition() {
        let shards: std::collections::BTreeSet<String> = (0..200)
            .map(|_| outbox_pk(&hosting_domain::event::new_event_id()))
            .collect();
        assert_eq!(shards, outbox_pks().collect());
        let shards: std::collections::BTreeSet<String> =
            (0..200).map(|_| deadline_pk(Uuid::new_v4())).collect();
        assert_eq!(shards, deadline_pks().collect());
    }

    #[test]
    fn sortable_times_sort_as_times() {
        let a = DateTime::parse_from_rfc3339("2026-01-01T09:59:59.999999Z")
            .unwrap()
            .to_utc();
        let b = DateTime::parse_from_rfc3339("2026-01-01T10:00:00Z")
            .unwrap()
            .to_utc();
        assert!(sortable(a) < sortable(b));
        assert_eq!(sortable(b), "2026-01-01T10:00:00.000000Z");
    }
}
