//! The items of a scheduled show on DynamoDB and the writes that move them (the layout is in
//! `shows.rs`).

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use uuid::Uuid;

use super::Item;
use super::items::{ItemExt, corrupt, n, s, stream_keys_item};
use super::keys::{self, key, sortable};
use super::requests::{backend, delete, put};
use super::show_counts::{Hour, count_writes, hour_of};
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::ports::StoreResult;
use hosting_domain::show::{Show, ShowStatus};

/// The list a status's copy lives in.
pub(super) fn status_letter(status: ShowStatus) -> char {
    match status {
        ShowStatus::Scheduled => 's',
        ShowStatus::Starting => 't',
        ShowStatus::Started => 'd',
        ShowStatus::Failed => 'f',
        ShowStatus::Cancelled => 'c',
    }
}

pub(super) const ALL: char = 'a';

pub(super) fn list_sk(show: &Show) -> String {
    keys::due_sk(show.starts_at, &show.id.to_string())
}

pub(super) fn body(show: &Show) -> StoreResult<String> {
    serde_json::to_string(show).map_err(|err| corrupt(format!("show: {err}")))
}

pub(super) fn show_item(show: &Show, rev: u64) -> StoreResult<Item> {
    let mut item = keys::show_key(show.id);
    item.insert("id".into(), s(show.id.to_string()));
    item.insert("brand_id".into(), s(&show.brand_id));
    item.insert("status".into(), s(show.status.as_str()));
    item.insert("rev".into(), n(rev));
    item.insert("body".into(), s(body(show)?));
    if let Some(until) = show.claim_until {
        item.insert("claim_until".into(), s(sortable(until)));
    }
    if let Some(due) = show.next_moment() {
        item.insert(keys::DUE_PK.into(), s(keys::show_due_pk(show.id)));
        item.insert(
            keys::DUE_SK.into(),
            s(keys::due_sk(due, &show.id.to_string())),
        );
    }
    Ok(item)
}

pub(super) fn copy_item(show: &Show, letter: char) -> StoreResult<Item> {
    let mut item = key(keys::show_list_pk(&show.brand_id, letter), &list_sk(show));
    item.insert("body".into(), s(body(show)?));
    Ok(item)
}

pub(super) fn show_of(item: &Item) -> StoreResult<Show> {
    serde_json::from_str(&item.string("body")?).map_err(|_| corrupt("show body"))
}

pub(super) fn rev_of(item: &Item) -> u64 {
    item.opt_number("rev")
        .and_then(|rev| rev.try_into().ok())
        .unwrap_or(0)
}

/// An item under another key (the show's cold items reuse the stream's layouts).
pub(super) fn rekeyed(mut item: Item, key: Item) -> Item {
    item.extend(key);
    item
}

pub(super) fn keys_item(show_id: Uuid, stream_keys: &SealedStreamKeys) -> Item {
    rekeyed(
        stream_keys_item(show_id, stream_keys),
        keys::show_keys_key(show_id),
    )
}

pub(super) fn script_item(show_id: Uuid, script: &str) -> Item {
    let mut item = keys::show_script_key(show_id);
    item.insert("script".into(), s(script));
    item
}

/// The show item's write: a `Put` under `condition`.
pub(super) fn put_show(
    table: &str,
    item: Item,
    condition: &str,
    values: Vec<(&str, AttributeValue)>,
) -> StoreResult<TransactWriteItem> {
    let mut builder = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(condition);
    if condition.contains("#st") {
        builder = builder.expression_attribute_names("#st", "status");
    }
    for (name, value) in values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .put(builder.build().map_err(backend)?)
        .build())
}

/// The condition that the show item is still as read.
pub(super) fn unchanged(rev: u64) -> (&'static str, Vec<(&'static str, AttributeValue)>) {
    ("rev = :rev", vec![(":rev", n(rev))])
}

/// Every write of a show going from `before` (`None`: new) to `after`: the show item under
/// `condition` (first, so a refusal is at index 0), its list copies moved, its counts moved.
pub(super) fn show_writes(
    table: &str,
    before: Option<(&Show, u64)>,
    after: &Show,
    condition: (&str, Vec<(&str, AttributeValue)>),
) -> StoreResult<Vec<TransactWriteItem>> {
    let rev = before.map_or(1, |(_, rev)| rev + 1);
    let mut writes = vec![put_show(
        table,
        show_item(after, rev)?,
        condition.0,
        condition.1,
    )?];
    // Per list, per hour: how its counts move.
    let mut deltas: BTreeMap<(char, Hour), i64> = BTreeMap::new();
    for letter in [ALL, status_letter(after.status)] {
        writes.push(put(table, copy_item(after, letter)?, None)?);
        *deltas
            .entry((letter, hour_of(after.starts_at)))
            .or_default() += 1;
    }
    if let Some((before, _)) = before {
        for letter in [ALL, status_letter(before.status)] {
            let moved = list_sk(before) != list_sk(after)
                || (letter != ALL && before.status != after.status);
            if moved {
                writes.push(delete(
                    table,
                    key(
                        keys::show_list_pk(&before.brand_id, letter),
                        &list_sk(before),
                    ),
                )?);
            }
            *deltas
                .entry((letter, hour_of(before.starts_at)))
                .or_default() -= 1;
        }
    }
    writes.extend(count_writes(table, &after.brand_id, &deltas)?);
    Ok(writes)
}
