//! A stream's status and host changes, each one conditional write on the status and revision
//! the caller saw (docs/lifecycle.md, "Atomicity"): a finishing transition also releases the
//! slot, adds the stream to the analytics aggregates and writes its event, all in one
//! transaction.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use super::DynamoStore;
use super::items::{
    agents_value, corrupt, destinations_value, egress_value, event_item, n, s, stream_of,
};
use super::keys::{self, sortable};
use super::positions;
use super::requests::{UpdateSpec, backend, condition_failed_at, delete, put, update};
use super::room_cleanups::cleanup_item;
use super::streams::dedupe_item;
use hosting_domain::analytics::Figures;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{Outcome, StoreResult};
use hosting_domain::stream::Transition;
use hosting_domain::{RoomCleanup, Stream, StreamEvent, StreamStatus};

/// Writes of a transition whose stream a host change or a position renumbering changed
/// meanwhile (viewer events never write the stream item: `viewers.rs`).
const TRANSITION_ATTEMPTS: u32 = 8;

/// The stream item's part of a change that every write of its state shares: the host's times
/// (set, or removed when `None`), its revision, and its place in the due index
/// ([`Stream::next_due`]).
fn host_times<'a>(
    stream: &Stream,
    sets: &mut Vec<&'a str>,
    removes: &mut Vec<&'a str>,
    values: &mut Vec<(&'a str, AttributeValue)>,
) {
    for (name, set, placeholder, time) in [
        (
            "next_dispatch_at",
            "next_dispatch_at = :next_dispatch_at",
            ":next_dispatch_at",
            stream.next_dispatch_at,
        ),
        (
            "host_check_at",
            "host_check_at = :host_check_at",
            ":host_check_at",
            stream.host_check_at,
        ),
        (
            "host_lost_at",
            "host_lost_at = :host_lost_at",
            ":host_lost_at",
            stream.host_lost_at,
        ),
        (
            "reconnect_until",
            "reconnect_until = :reconnect_until",
            ":reconnect_until",
            stream.reconnect_until,
        ),
    ] {
        match time {
            Some(time) => {
                sets.push(set);
                values.push((placeholder, s(sortable(time))));
            }
            None => removes.push(name),
        }
    }
    for (name, set, placeholder, value) in [
        (
            "#destinations",
            "#destinations = :destinations",
            ":destinations",
            destinations_value(stream),
        ),
        (
            "#egress",
            "#egress = :egress",
            ":egress",
            egress_value(stream),
        ),
        // Top-level, so the table stream's filter can pick out the items that owe a start.
        (
            "#egress_due",
            "#egress_due = :egress_due",
            ":egress_due",
            stream
                .egress
                .due_at
                .filter(|_| stream.status == StreamStatus::Live)
                .map(|due| s(sortable(due))),
        ),
    ] {
        match value {
            Some(value) => {
                sets.push(set);
                values.push((placeholder, value));
            }
            None => removes.push(name),
        }
    }
    sets.push("#revision = :revision");
    values.push((":revision", n(stream.revision)));
    match stream.next_due() {
        Some(due) => {
            sets.extend(["#due_pk = :due_pk", "#due_sk = :due_sk"]);
            values.push((":due_pk", s(keys::deadline_pk(stream.id))));
            values.push((":due_sk", s(keys::due_sk(due, &stream.id.to_string()))));
        }
        None => removes.extend(["#due_pk", "#due_sk"]),
    }
}

impl DynamoStore {
    pub(super) async fn transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        cleanup: Option<&RoomCleanup>,
    ) -> StoreResult<Outcome<(Stream, StreamEvent)>> {
        // No read of the stream: the update is conditional on the status and revision the
        // caller saw (so an end during a reconnect window it did not see is made again, as of
        // the drop). A stream changed meanwhile in anything but its status is read, and the
        // write made again from it. A live stream that finishes takes its count from its
        // viewer shards, read just before: the final count, on no condition, so churn cannot
        // hold the end up.
        let mut seen = current.clone();
        let from = seen.status;
        let mut fresh = false;
        for _ in 0..TRANSITION_ATTEMPTS {
            let mut stream = seen.clone();
            if !stream.apply(transition, at) {
                return Ok(Outcome::Stale);
            }
            let finishes = !stream.status.is_active();
            if finishes && from == StreamStatus::Live {
                // `seen` may hold a count already summed; the stored base and shards are read.
                if let Some(stored) = self.stream_with_viewers(stream.id).await?
                    && stored.status == StreamStatus::Live
                {
                    stream.viewer_count = stored.viewer_count;
                }
            }
            // A position remembered from before a seeding renumbered the brand is refused by
            // the copy's condition; the next pass reads it afresh.
            if fresh {
                self.forget_position(stream.id);
            }
            let position = self.position(stream.id).await?;
            let events = StreamEvent::of_change(Some(transition.event_type()), &seen, &stream, at);
            let event = events[0].clone();

            // The record's changes, shared by the stream item and its position copy.
            let mut sets = vec!["#status = :to"];
            let mut values = vec![(":to", s(stream.status.as_str()))];
            if let Some(started) = stream
                .started_at
                .filter(|_| from == StreamStatus::Preparing && stream.status == StreamStatus::Live)
            {
                sets.push("started_at = :started_at");
                values.push((":started_at", s(sortable(started))));
            }
            if let Some(ended) = stream.ended_at.filter(|_| !stream.status.is_active()) {
                sets.push("ended_at = :ended_at");
                values.push((":ended_at", s(sortable(ended))));
            }
            if let Some(reason) = stream.end_reason {
                sets.push("end_reason = :end_reason");
                values.push((":end_reason", s(reason.as_str())));
            }
            if finishes {
                sets.push("viewer_count = :viewers");
                values.push((":viewers", n(stream.viewer_count)));
            }
            // The deadline moves with the status, and with it what is due; the host's retries
            // and window end with it too. Only the stream item is in the due index.
            let mut removes = Vec::new();
            match stream.deadline {
                Some(deadline) => {
                    sets.push("deadline = :deadline");
                    values.push((":deadline", s(sortable(deadline))));
                }
                None => removes.push("deadline"),
            }
            let mut stream_sets = sets.clone();
            let mut stream_removes = removes.clone();
            let mut stream_values = values.clone();
            host_times(
                &stream,
                &mut stream_sets,
                &mut stream_removes,
                &mut stream_values,
            );
            let expression = |sets: &[&str], removes: &[&str]| {
                let mut expression = format!("SET {}", sets.join(", "));
                if !removes.is_empty() {
                    expression.push_str(&format!(" REMOVE {}", removes.join(", ")));
                }
                expression
            };
            let stream_expression = expression(&stream_sets, &stream_removes);
            let copy_expression = expression(&sets, &removes);
            stream_values.push((":from", s(from.as_str())));
            let mut stream_condition = "#status = :from".to_owned();
            if seen.revision == 0 {
                stream_condition.push_str(" AND attribute_not_exists(#revision)");
            } else {
                stream_values.push((":seen_revision", n(seen.revision)));
                stream_condition.push_str(" AND #revision = :seen_revision");
            }
            let mut copy_values = values;
            copy_values.push((":id", s(stream.id.to_string())));
            let mut items = vec![
                update(
                    &self.table,
                    UpdateSpec {
                        key: keys::stream_key(stream.id),
                        expression: &stream_expression,
                        condition: Some(&stream_condition),
                        names: vec![
                            ("#status", "status".to_owned()),
                            ("#revision", "revision".to_owned()),
                            ("#due_pk", keys::DUE_PK.to_owned()),
                            ("#due_sk", keys::DUE_SK.to_owned()),
                            ("#destinations", "destinations".to_owned()),
                            ("#egress", "egress".to_owned()),
                            ("#egress_due", "egress_due".to_owned()),
                        ],
                        values: stream_values,
                    },
                )?,
                update(
                    &self.table,
                    UpdateSpec {
                        key: keys::position_key(&stream.brand_id, position),
                        expression: &copy_expression,
                        condition: Some("#id = :id"),
                        names: vec![("#status", "status".to_owned()), ("#id", "id".to_owned())],
                        values: copy_values,
                    },
                )?,
                self.counters_update(&stream, position, Some(from), None)?,
            ];
            for event in &events {
                items.push(put(&self.table, event_item(event), None)?);
            }
            if finishes {
                items.extend(self.aggregate_updates(&stream, &Figures::finished(&stream))?);
            }
            if stream.status == StreamStatus::Error {
                items.push(update(
                    &self.table,
                    UpdateSpec {
                        key: keys::errors_key(&stream.brand_id, positions::block_of(position)),
                        expression: "ADD #positions :position",
                        condition: None,
                        names: vec![("#positions", "positions".to_owned())],
                        values: vec![(":position", AttributeValue::Ns(vec![position.to_string()]))],
                    },
                )?);
            }
            match cleanup {
                Some(cleanup) => items.push(put(
                    &self.table,
                    cleanup_item(&cleanup.of_stored(&stream)),
                    None,
                )?),
                // No room, so no egress to stop first: the keys go with the transition.
                None if finishes && !stream.destinations.is_empty() => {
                    items.push(delete(&self.table, keys::stream_keys_key(stream.id))?);
                }
                None => {}
            }
            let dedupe_at = items.len();
            if let Some(event_id) = dedupe {
                items.push(dedupe_item(&self.table, event_id, at)?);
            }
            match self.transact(items).await {
                Ok(()) => return Ok(Outcome::Applied((stream, event))),
                Err(err) if dedupe.is_some() && condition_failed_at(&err, dedupe_at) => {
                    return Ok(Outcome::Duplicate);
                }
                Err(err) if condition_failed_at(&err, 0) => {
                    // Still in its status, so a host change came first: again from the
                    // stream as stored.
                    let stored = match self.get(keys::stream_key(stream.id)).await? {
                        Some(item) => stream_of(&item)?,
                        None => return Ok(Outcome::Stale),
                    };
                    if stored.status != from {
                        return Ok(Outcome::Stale);
                    }
                    seen = stored;
                }
                Err(err) if !fresh && condition_failed_at(&err, 1) => fresh = true,
                Err(err) if condition_failed_at(&err, 1) => {
                    return Err(corrupt("the stream's position copy holds another stream"));
                }
                Err(err) => return Err(backend(err)),
            }
        }
        Err(StoreError::Backend(format!(
            "stream {}: it kept changing while its status changed",
            current.id
        )))
    }

    pub(super) async fn host_change(
        &self,
        current: &Stream,
        updated: &Stream,
        at: DateTime<Utc>,
        dedupe: Option<&str>,
        events: &[StreamEvent],
        added_key: Option<(&str, &hosting_domain::sealed::StoredSecret)>,
    ) -> StoreResult<Outcome<Stream>> {
        // Only the stream item: lists and analytics show none of this.
        let mut sets = vec!["dispatches = :dispatches"];
        let mut removes = Vec::new();
        let mut values = vec![
            (":dispatches", n(updated.dispatches)),
            (":status", s(current.status.as_str())),
        ];
        if updated.agents.is_empty() {
            removes.push("agents");
        } else {
            sets.push("agents = :agents");
            values.push((":agents", agents_value(&updated.agents)));
        }
        host_times(updated, &mut sets, &mut removes, &mut values);
        let mut expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            expression.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        let condition = if current.revision == 0 {
            "#status = :status AND attribute_not_exists(#revision)"
        } else {
            values.push((":seen_revision", n(current.revision)));
            "#status = :status AND #revision = :seen_revision"
        };
        let names = vec![
            ("#status", "status".to_owned()),
            ("#revision", "revision".to_owned()),
            ("#due_pk", keys::DUE_PK.to_owned()),
            ("#due_sk", keys::DUE_SK.to_owned()),
            ("#destinations", "destinations".to_owned()),
            ("#egress", "egress".to_owned()),
            ("#egress_due", "egress_due".to_owned()),
        ];
        let change = update(
            &self.table,
            UpdateSpec {
                key: keys::stream_key(updated.id),
                expression: &expression,
                condition: Some(condition),
                names,
                values,
            },
        )?;
        let mut items = vec![change];
        for event in events {
            items.push(put(&self.table, event_item(event), None)?);
        }
        if let Some((destination_id, key)) = added_key {
            items.push(update(
                &self.table,
                UpdateSpec {
                    key: keys::stream_keys_key(updated.id),
                    expression: "SET #destination = :key",
                    condition: None,
                    names: vec![("#destination", destination_id.to_owned())],
                    values: vec![(":key", super::items::secret_value(key))],
                },
            )?);
        }
        let dedupe_at = items.len();
        if let Some(event_id) = dedupe {
            items.push(dedupe_item(&self.table, event_id, at)?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(Outcome::Applied(updated.clone())),
            Err(err) if dedupe.is_some() && condition_failed_at(&err, dedupe_at) => {
                Ok(Outcome::Duplicate)
            }
            Err(err) if condition_failed_at(&err, 0) => Ok(Outcome::Stale),
            Err(err) => Err(backend(err)),
        }
    }
}
