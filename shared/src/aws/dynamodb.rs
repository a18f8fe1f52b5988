//! The DynamoDB store: one table, every request a `GetItem`, `BatchGetItem`, `Query`,
//! conditional write or transaction (never a `Scan`).
//!
//! | item | pk | sk | indexes |
//! |---|---|---|---|
//! | brand (with its counters) | `BRAND#<id>` | `BRAND` | |
//! | API key | `KEY#<sha256>` | `KEY` | |
//! | creator | `CREATORS` | `<id>` | |
//! | stream | `STREAM#<id>` | `STREAM` | |
//! | stream, by position | `POS#<brand>#<position>` | `POS` | |
//! | positions that ended in `error` | `ERRORS#<brand>#<block>` | `ERRORS` | |
//! | first position of a day | `DAY#<brand>#<yyyy-mm-dd>` | `DAY` | |
//! | room name -> stream | `ROOM#<name>` | `ROOM` | |
//! | webhook | `WEBHOOK#<id>` | `WEBHOOK` | gsi1: brand's webhooks, newest first |
//! | event (outbox) | `EVENT#<id>` | `EVENT` | gsi3 (sparse): not yet relayed, oldest first |
//! | rate window | `RATE#<brand>#<minute>` | `RATE` | TTL |
//! | provider event id | `PROVIDER_EVENT#<id>` | `PROVIDER_EVENT` | TTL |
//!
//! The brand item carries the counters that make limits atomic and totals cheap: `active`
//! (streams in `preparing` or `live`), `streams_total`, `streams_<status>` and `webhooks`,
//! and the positions index that pages streams without a `Query` ([`super::positions`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, Delete, GlobalSecondaryIndex,
    KeySchemaElement, KeyType, Projection, ProjectionType, Put, ScalarAttributeType,
    StreamSpecification, StreamViewType, TimeToLiveSpecification, TransactWriteItem, Update,
};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::describe;
use super::positions::{self, BrandIndex};
use crate::domain::event::EventType;
use crate::domain::stream::Transition;
use crate::domain::{
    ApiKey, Brand, Creator, KeyEnvironment, Plan, Scope, Stream, StreamEvent, StreamStatus, Webhook,
};
use crate::error::StoreError;
use crate::ports::*;

type Item = HashMap<String, AttributeValue>;

const GSI1: &str = "gsi1";
const GSI3: &str = "gsi3";
/// Placing a new stream at the brand's next position, against concurrent starts.
const CREATE_ATTEMPTS: u32 = 12;
/// Days whose first position the streams since a time look up: a 30-day window and today.
const DAYS_PROBED: usize = 31;
/// Keys per `BatchGetItem`, and such requests in flight at once.
const BATCH_GET_KEYS: usize = 100;
const BATCH_GETS_IN_FLIGHT: usize = 8;
/// Error sets cached per instance before the cache starts over.
const ERROR_SETS_CACHED: usize = 2048;
/// Rate windows are kept a little past their minute.
const RATE_TTL_SECS: i64 = 180;
const PROVIDER_EVENT_TTL: Duration = Duration::hours(24);
/// Relayed events stay readable for a week, then expire.
const EVENT_TTL: Duration = Duration::days(7);

fn backend<E: std::error::Error>(err: E) -> StoreError {
    StoreError::Backend(describe(&err))
}

fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// Fixed-width UTC timestamps, so that string order is time order in sort keys.
fn sortable(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

fn key(pk: String, sk: &str) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
}

/// Reading attributes, with clear errors for malformed items.
trait ItemExt {
    fn string(&self, name: &str) -> Result<String, StoreError>;
    fn opt_string(&self, name: &str) -> Option<String>;
    fn number(&self, name: &str) -> Result<i64, StoreError>;
    fn opt_number(&self, name: &str) -> Option<i64>;
    fn boolean(&self, name: &str) -> bool;
    fn time(&self, name: &str) -> Result<DateTime<Utc>, StoreError>;
    fn opt_time(&self, name: &str) -> Result<Option<DateTime<Utc>>, StoreError>;
}

impl ItemExt for Item {
    fn string(&self, name: &str) -> Result<String, StoreError> {
        self.opt_string(name)
            .ok_or_else(|| corrupt(format!("missing string attribute `{name}`")))
    }

    fn opt_string(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Some(AttributeValue::S(value)) => Some(value.clone()),
            _ => None,
        }
    }

    fn number(&self, name: &str) -> Result<i64, StoreError> {
        self.opt_number(name)
            .ok_or_else(|| corrupt(format!("missing number attribute `{name}`")))
    }

    fn opt_number(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(AttributeValue::N(value)) => value.parse().ok(),
            _ => None,
        }
    }

    fn boolean(&self, name: &str) -> bool {
        matches!(self.get(name), Some(AttributeValue::Bool(true)))
    }

    fn time(&self, name: &str) -> Result<DateTime<Utc>, StoreError> {
        self.opt_time(name)?
            .ok_or_else(|| corrupt(format!("missing time attribute `{name}`")))
    }

    fn opt_time(&self, name: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        self.opt_string(name)
            .map(|raw| {
                DateTime::parse_from_rfc3339(&raw)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(|_| corrupt(format!("`{name}` is not a timestamp")))
            })
            .transpose()
    }
}

fn parse<T: serde::de::DeserializeOwned>(raw: String, what: &str) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(raw))
        .map_err(|_| corrupt(format!("bad {what}")))
}

// ---- item mapping --------------------------------------------------------------------------

fn stream_pk(id: Uuid) -> String {
    format!("STREAM#{id}")
}

fn brand_pk(id: &str) -> String {
    format!("BRAND#{id}")
}

fn position_pk(brand_id: &str, position: u64) -> String {
    format!("POS#{brand_id}#{position}")
}

fn errors_pk(brand_id: &str, block: u64) -> String {
    format!("ERRORS#{brand_id}#{block}")
}

fn day_pk(brand_id: &str, day: chrono::NaiveDate) -> String {
    format!("DAY#{brand_id}#{day}")
}

/// The copy of a stream kept at its position.
fn position_item(stream: &Stream, position: u64) -> Item {
    let mut item = Item::from(stream);
    item.insert("pk".into(), s(position_pk(&stream.brand_id, position)));
    item.insert("sk".into(), s("POS"));
    item
}

fn created_sort_key(created_at: DateTime<Utc>, id: Uuid) -> String {
    format!("{}#{id}", sortable(created_at))
}

fn status_counter(status: StreamStatus) -> String {
    format!("streams_{}", status.as_str())
}

impl From<&Stream> for Item {
    fn from(stream: &Stream) -> Item {
        let mut item = key(stream_pk(stream.id), "STREAM");
        let mut put = |name: &str, value: AttributeValue| {
            item.insert(name.to_owned(), value);
        };
        put("id", s(stream.id.to_string()));
        put("brand_id", s(&stream.brand_id));
        put("status", s(stream.status.as_str()));
        put("vertical", s(&stream.vertical));
        put("product_name", s(&stream.product_name));
        put("source", s(&stream.source));
        put("viewer_count", n(stream.viewer_count));
        put("test", AttributeValue::Bool(stream.test));
        put("created_at", s(sortable(stream.created_at)));
        if let Some(position) = stream.position {
            put("position", n(position));
        }
        for (name, value) in [
            ("platform", &stream.platform),
            ("creator_id", &stream.creator_id),
            ("room_name", &stream.room_name),
            ("script", &stream.script),
        ] {
            if let Some(value) = value {
                put(name, s(value));
            }
        }
        for (name, value) in [
            ("started_at", stream.started_at),
            ("ended_at", stream.ended_at),
        ] {
            if let Some(value) = value {
                put(name, s(sortable(value)));
            }
        }
        if let Some(minutes) = stream.duration_minutes {
            put("duration_minutes", n(minutes));
        }
        item
    }
}

impl TryFrom<&Item> for Stream {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Stream, StoreError> {
        Ok(Stream {
            id: Uuid::parse_str(&item.string("id")?).map_err(|_| corrupt("stream id"))?,
            brand_id: item.string("brand_id")?,
            status: StreamStatus::parse(&item.string("status")?)
                .ok_or_else(|| corrupt("stream status"))?,
            platform: item.opt_string("platform"),
            vertical: item.string("vertical")?,
            creator_id: item.opt_string("creator_id"),
            product_name: item.string("product_name")?,
            source: item.string("source")?,
            room_name: item.opt_string("room_name"),
            viewer_count: u64::try_from(item.number("viewer_count")?).unwrap_or(0),
            test: item.boolean("test"),
            created_at: item.time("created_at")?,
            started_at: item.opt_time("started_at")?,
            ended_at: item.opt_time("ended_at")?,
            duration_minutes: item
                .opt_number("duration_minutes")
                .and_then(|m| u32::try_from(m).ok()),
            script: item.opt_string("script"),
            position: item
                .opt_number("position")
                .and_then(|p| u64::try_from(p).ok()),
        })
    }
}

fn event_item(event: &StreamEvent) -> Item {
    let mut item = key(format!("EVENT#{}", event.id), "EVENT");
    item.insert("id".into(), s(&event.id));
    item.insert("type".into(), s(event.event_type.as_str()));
    item.insert("brand_id".into(), s(&event.brand_id));
    item.insert("stream_id".into(), s(event.stream_id.to_string()));
    item.insert("created_at".into(), s(sortable(event.created_at)));
    item.insert("body".into(), s(&event.body));
    item.insert("gsi3pk".into(), s("OUTBOX"));
    item.insert(
        "gsi3sk".into(),
        s(format!("{}#{}", sortable(event.created_at), event.id)),
    );
    item.insert("ttl".into(), n((event.created_at + EVENT_TTL).timestamp()));
    item
}

/// Reads an event item (also the new image of a DynamoDB stream record).
pub fn event_from_item(item: &Item) -> Result<StreamEvent, StoreError> {
    Ok(StreamEvent {
        id: item.string("id")?,
        event_type: EventType::parse(&item.string("type")?).ok_or_else(|| corrupt("event type"))?,
        brand_id: item.string("brand_id")?,
        stream_id: Uuid::parse_str(&item.string("stream_id")?)
            .map_err(|_| corrupt("event stream id"))?,
        created_at: item.time("created_at")?,
        body: item.string("body")?,
    })
}

fn webhook_item(webhook: &Webhook) -> Item {
    let mut item = key(format!("WEBHOOK#{}", webhook.id), "WEBHOOK");
    item.insert("id".into(), s(webhook.id.to_string()));
    item.insert("brand_id".into(), s(&webhook.brand_id));
    item.insert("url".into(), s(&webhook.url));
    item.insert(
        "events".into(),
        AttributeValue::L(webhook.events.iter().map(|e| s(e.as_str())).collect()),
    );
    item.insert("secret".into(), s(&webhook.secret));
    item.insert("active".into(), AttributeValue::Bool(webhook.active));
    item.insert("created_at".into(), s(sortable(webhook.created_at)));
    item.insert(
        "gsi1pk".into(),
        s(format!("BRAND#{}#WEBHOOKS", webhook.brand_id)),
    );
    item.insert(
        "gsi1sk".into(),
        s(created_sort_key(webhook.created_at, webhook.id)),
    );
    item
}

fn webhook_from_item(item: &Item) -> Result<Webhook, StoreError> {
    let events = match item.get("events") {
        Some(AttributeValue::L(list)) => list
            .iter()
            .filter_map(|v| v.as_s().ok())
            .filter_map(|e| EventType::parse(e))
            .collect(),
        _ => return Err(corrupt("webhook events")),
    };
    Ok(Webhook {
        id: Uuid::parse_str(&item.string("id")?).map_err(|_| corrupt("webhook id"))?,
        brand_id: item.string("brand_id")?,
        url: item.string("url")?,
        events,
        secret: item.string("secret")?,
        active: item.boolean("active"),
        created_at: item.time("created_at")?,
    })
}

fn creator_item(creator: &Creator) -> Item {
    let mut item = key("CREATORS".to_owned(), &creator.id);
    item.insert("id".into(), s(&creator.id));
    item.insert("name".into(), s(&creator.name));
    item.insert(
        "languages".into(),
        AttributeValue::L(creator.languages.iter().map(s).collect()),
    );
    for (name, value) in [
        ("status", &creator.status),
        ("style", &creator.style),
        ("personality", &creator.personality),
        ("vibe", &creator.vibe),
        ("photo", &creator.photo),
    ] {
        if let Some(value) = value {
            item.insert(name.into(), s(value));
        }
    }
    if let Some(consent) = creator.consent {
        item.insert("consent".into(), AttributeValue::Bool(consent));
    }
    item
}

fn creator_from_item(item: &Item) -> Result<Creator, StoreError> {
    Ok(Creator {
        id: item.string("id")?,
        name: item.string("name")?,
        status: item.opt_string("status"),
        languages: match item.get("languages") {
            Some(AttributeValue::L(list)) => {
                list.iter().filter_map(|v| v.as_s().ok().cloned()).collect()
            }
            _ => Vec::new(),
        },
        style: item.opt_string("style"),
        personality: item.opt_string("personality"),
        vibe: item.opt_string("vibe"),
        consent: match item.get("consent") {
            Some(AttributeValue::Bool(b)) => Some(*b),
            _ => None,
        },
        photo: item.opt_string("photo"),
    })
}

fn api_key_from_item(item: &Item) -> Result<ApiKey, StoreError> {
    let scopes = match item.get("scopes") {
        Some(AttributeValue::L(list)) => list
            .iter()
            .filter_map(|v| v.as_s().ok())
            .filter_map(|scope| scope.parse::<Scope>().ok())
            .collect(),
        _ => Vec::new(),
    };
    Ok(ApiKey {
        key_hash: item.string("key_hash")?,
        brand_id: item.string("brand_id")?,
        environment: parse::<KeyEnvironment>(item.string("environment")?, "key environment")?,
        scopes,
        revoked: item.boolean("revoked"),
        expires_at: item.opt_time("expires_at")?,
    })
}

// ---- the store -----------------------------------------------------------------------------

#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
    error_sets: Arc<Mutex<ErrorSetCache>>,
}

/// Error sets of blocks, by (brand, generation, block); see [`positions`].
type ErrorSetCache = HashMap<(String, u64, u64), Arc<Vec<u64>>>;

/// What creation adds to a counters update: its condition and the position it takes.
struct Creation<'a> {
    condition: &'a str,
    total: u64,
    max_active: u32,
}

/// Whether a failed transaction was cancelled by the condition of item `index`.
fn condition_failed_at<E>(
    err: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        E,
    >,
    index: usize,
) -> bool {
    err.as_service_error()
        .and_then(|e| match e {
            aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(c) => {
                c.cancellation_reasons().get(index).and_then(|r| r.code()).map(|code| code == "ConditionalCheckFailed")
            }
            _ => None,
        })
        .unwrap_or(false)
}

/// Whether a single-item write was refused by its condition.
fn condition_failed<E: ProvideErrorMetadata, R>(
    err: &aws_sdk_dynamodb::error::SdkError<E, R>,
) -> bool {
    err.as_service_error().and_then(ProvideErrorMetadata::code)
        == Some("ConditionalCheckFailedException")
}

/// Retries of a transaction cancelled by a conflicting one.
const TRANSACTION_RETRIES: u32 = 8;

/// Whether a failed transaction was cancelled by a conflicting transaction, not a condition.
fn conflicted<E>(
    err: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        E,
    >,
) -> bool {
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError as E2;
    match err.as_service_error() {
        Some(E2::TransactionCanceledException(c)) => {
            let codes: Vec<&str> = c
                .cancellation_reasons()
                .iter()
                .filter_map(|r| r.code())
                .collect();
            codes.contains(&"TransactionConflict") && !codes.contains(&"ConditionalCheckFailed")
        }
        _ => false,
    }
}

/// Whether a failed transaction was cancelled by any condition.
fn any_condition_failed<E>(
    err: &aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        E,
    >,
) -> bool {
    (0..10).any(|i| condition_failed_at(err, i))
}

fn put(table: &str, item: Item, condition: Option<&str>) -> Result<TransactWriteItem, StoreError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .set_condition_expression(condition.map(str::to_owned))
        .build()
        .map_err(backend)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

struct UpdateSpec<'a> {
    key: Item,
    expression: &'a str,
    condition: Option<&'a str>,
    names: Vec<(&'a str, String)>,
    values: Vec<(&'a str, AttributeValue)>,
}

fn update(table: &str, spec: UpdateSpec<'_>) -> Result<TransactWriteItem, StoreError> {
    let mut builder = Update::builder()
        .table_name(table)
        .set_key(Some(spec.key))
        .update_expression(spec.expression)
        .set_condition_expression(spec.condition.map(str::to_owned));
    for (name, value) in spec.names {
        builder = builder.expression_attribute_names(name, value);
    }
    for (name, value) in spec.values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .update(builder.build().map_err(backend)?)
        .build())
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            error_sets: Arc::default(),
        }
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(backend)?;
        Ok(out.item)
    }

    /// An unconditional write of a whole item.
    async fn put_item(&self, item: Item) -> StoreResult<()> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn transact(
        &self,
        items: Vec<TransactWriteItem>,
    ) -> Result<
        (),
        aws_sdk_dynamodb::error::SdkError<
            aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
            aws_sdk_dynamodb::config::http::HttpResponse,
        >,
    > {
        // Transactions on the same brand item (concurrent starts) can be cancelled by each
        // other; DynamoDB asks the caller to retry those, so retry a few times with jitter.
        let mut attempt = 0u32;
        loop {
            let result = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .send()
                .await
                .map(drop);
            match result {
                Err(err) if attempt < TRANSACTION_RETRIES && conflicted(&err) => {
                    attempt += 1;
                    let jitter = rand::random_range(5..=25u64) * u64::from(attempt);
                    tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
                }
                other => return other,
            }
        }
    }

    /// Every page of a query, up to `max` items (`None`: all).
    async fn query_all(
        &self,
        index: Option<&str>,
        condition: &str,
        values: Vec<(&str, AttributeValue)>,
        newest_first: bool,
        max: Option<usize>,
    ) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let mut query = self
                .client
                .query()
                .table_name(&self.table)
                .set_index_name(index.map(str::to_owned))
                .key_condition_expression(condition)
                .scan_index_forward(!newest_first)
                .set_exclusive_start_key(start.take());
            for (name, value) in &values {
                query = query.expression_attribute_values(*name, value.clone());
            }
            if let Some(max) = max {
                let wanted = max.saturating_sub(items.len()).clamp(1, 1000);
                query = query.limit(i32::try_from(wanted).unwrap_or(1000));
            }
            let out = query.send().await.map_err(backend)?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() || max.is_some_and(|max| items.len() >= max) {
                return Ok(items);
            }
        }
    }

    /// The counters update of a brand for `stream` (as it is after the change) leaving status
    /// `from`, or appearing (`creation`): the status counts, the active slots and the
    /// positions index (see [`positions`]).
    fn counters_update(
        &self,
        stream: &Stream,
        from: Option<StreamStatus>,
        creation: Option<Creation<'_>>,
    ) -> Result<TransactWriteItem, StoreError> {
        let to = stream.status;
        let position = stream
            .position
            .ok_or_else(|| corrupt("stream without a position"))?;
        let mut sets = vec!["#to = if_not_exists(#to, :zero) + :one".to_owned()];
        let mut removes = Vec::new();
        let mut names = vec![("#to", status_counter(to))];
        let mut values = vec![(":zero", n(0)), (":one", n(1))];
        if let Some(from) = from {
            sets.push("#from = if_not_exists(#from, :zero) - :one".into());
            names.push(("#from", status_counter(from)));
        }
        let mut condition = None;
        if let Some(creation) = creation {
            sets.push("streams_total = :next_total".into());
            sets.push("newest = :newest".into());
            values.push((":next_total", n(creation.total + 1)));
            values.push((":newest", s(created_sort_key(stream.created_at, stream.id))));
            if creation.condition.contains(":total") {
                values.push((":total", n(creation.total)));
            }
            values.push((":max_active", n(creation.max_active)));
            condition = Some(creation.condition);
        }
        let active_delta =
            i64::from(to.is_active()) - i64::from(from.is_some_and(|f| f.is_active()));
        if active_delta != 0 {
            sets.push("active = if_not_exists(active, :zero) + :active_delta".into());
            values.push((":active_delta", n(active_delta)));
        }
        names.push(("#act", positions::active_attribute(position)));
        if to.is_active() {
            sets.push("#act = :to_status".into());
            values.push((":to_status", s(to.as_str())));
        } else {
            removes.push("#act");
        }
        if to == StreamStatus::Error {
            sets.push("#errors = if_not_exists(#errors, :zero) + :one".into());
            names.push((
                "#errors",
                positions::errors_attribute(positions::block_of(position)),
            ));
        }
        let mut expression = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            expression.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        update(
            &self.table,
            UpdateSpec {
                key: key(brand_pk(&stream.brand_id), "BRAND"),
                expression: &expression,
                condition,
                names,
                values,
            },
        )
    }

    /// Creates the table with its indexes, TTL and stream (tests and first deployments use
    /// the SAM template; this is for local emulators).
    pub async fn create_table(&self) -> Result<(), StoreError> {
        let attribute = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(backend)
        };
        let key_schema = |pk: &str, sk: &str| -> Result<Vec<KeySchemaElement>, StoreError> {
            Ok(vec![
                KeySchemaElement::builder()
                    .attribute_name(pk)
                    .key_type(KeyType::Hash)
                    .build()
                    .map_err(backend)?,
                KeySchemaElement::builder()
                    .attribute_name(sk)
                    .key_type(KeyType::Range)
                    .build()
                    .map_err(backend)?,
            ])
        };
        let index = |name: &str| -> Result<GlobalSecondaryIndex, StoreError> {
            GlobalSecondaryIndex::builder()
                .index_name(name)
                .set_key_schema(Some(key_schema(
                    &format!("{name}pk"),
                    &format!("{name}sk"),
                )?))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(backend)
        };
        let mut attributes = Vec::new();
        for name in ["pk", "sk", "gsi1pk", "gsi1sk", "gsi3pk", "gsi3sk"] {
            attributes.push(attribute(name)?);
        }
        self.client
            .create_table()
            .table_name(&self.table)
            .set_attribute_definitions(Some(attributes))
            .set_key_schema(Some(key_schema("pk", "sk")?))
            .set_global_secondary_indexes(Some(vec![index(GSI1)?, index(GSI3)?]))
            .billing_mode(BillingMode::PayPerRequest)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewImage)
                    .build()
                    .map_err(backend)?,
            )
            .send()
            .await
            .map_err(backend)?;
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name("ttl")
                    .build()
                    .map_err(backend)?,
            )
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }

    pub async fn delete_table(&self) -> Result<(), StoreError> {
        self.client
            .delete_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// The streams at `positions` of a brand, in that order (a missing one is skipped and
    /// logged: positions are written with their streams, so it means a damaged index).
    async fn streams_at(&self, brand_id: &str, at: &[u64]) -> StoreResult<Vec<Stream>> {
        let keys = at
            .iter()
            .map(|p| key(position_pk(brand_id, *p), "POS"))
            .collect();
        let mut found: HashMap<u64, Stream> = HashMap::with_capacity(at.len());
        for item in self.batch_get(keys).await? {
            let stream = Stream::try_from(&item)?;
            if let Some(position) = stream.position {
                found.insert(position, stream);
            }
        }
        let mut streams = Vec::with_capacity(at.len());
        for position in at {
            match found.remove(position) {
                Some(stream) => streams.push(stream),
                None => tracing::warn!(brand_id, position, "stream position missing"),
            }
        }
        Ok(streams)
    }

    /// Error sets of `blocks`, from the cache while their counts say they are complete.
    async fn error_sets(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        blocks: &[u64],
    ) -> StoreResult<HashMap<u64, Arc<Vec<u64>>>> {
        let cache_key = |block: u64| (brand_id.to_owned(), index.generation, block);
        let mut sets = HashMap::new();
        let mut missing = Vec::new();
        {
            let cache = self.error_sets.lock().unwrap_or_else(|p| p.into_inner());
            for block in blocks {
                match cache.get(&cache_key(*block)) {
                    Some(set) if set.len() as u64 == index.errors_in(*block) => {
                        sets.insert(*block, set.clone());
                    }
                    _ => missing.push(*block),
                }
            }
        }
        if missing.is_empty() {
            return Ok(sets);
        }
        let keys = missing
            .iter()
            .map(|block| key(errors_pk(brand_id, *block), "ERRORS"))
            .collect();
        let items = self.batch_get(keys).await?;
        let mut cache = self.error_sets.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() + items.len() > ERROR_SETS_CACHED {
            cache.clear();
        }
        for item in items {
            let block = item
                .string("pk")?
                .rsplit('#')
                .next()
                .and_then(|b| b.parse::<u64>().ok())
                .ok_or_else(|| corrupt("error block key"))?;
            let mut set: Vec<u64> = match item.get("positions") {
                Some(AttributeValue::Ns(numbers)) => numbers
                    .iter()
                    .map(|p| p.parse().map_err(|_| corrupt("error block position")))
                    .collect::<Result<_, _>>()?,
                _ => Vec::new(),
            };
            set.sort_unstable();
            let set = Arc::new(set);
            // Only a complete set is kept: one read before its count caught up is not.
            if set.len() as u64 == index.errors_in(block) {
                cache.insert(cache_key(block), set.clone());
            }
            sets.insert(block, set);
        }
        Ok(sets)
    }

    /// The first position created at or after `since`, by halving (a few reads; used only
    /// when `since` is long before the next stream).
    async fn first_position_since(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        since: DateTime<Utc>,
    ) -> StoreResult<u64> {
        let (mut low, mut high) = (0, index.total);
        while low < high {
            let middle = low + (high - low) / 2;
            let created_at = match self.streams_at(brand_id, &[middle]).await?.first() {
                Some(stream) => stream.created_at,
                None => return Err(corrupt("stream position missing")),
            };
            if created_at < since {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        Ok(low)
    }

    /// Items by key, consistently read: `BatchGetItem`s of 100 keys, a few in flight at once,
    /// resending what DynamoDB left over. Order is not kept.
    async fn batch_get(&self, keys: Vec<Item>) -> StoreResult<Vec<Item>> {
        let mut chunks = keys.chunks(BATCH_GET_KEYS).map(<[Item]>::to_vec);
        let Some(first) = chunks.next() else {
            return Ok(Vec::new());
        };
        if keys.len() <= BATCH_GET_KEYS {
            return self.batch_get_chunk(first).await;
        }
        let mut in_flight = tokio::task::JoinSet::new();
        let mut items = Vec::with_capacity(keys.len());
        for chunk in std::iter::once(first).chain(chunks) {
            if in_flight.len() >= BATCH_GETS_IN_FLIGHT
                && let Some(done) = in_flight.join_next().await
            {
                items.extend(done.map_err(backend)??);
            }
            let store = self.clone();
            in_flight.spawn(async move { store.batch_get_chunk(chunk).await });
        }
        while let Some(done) = in_flight.join_next().await {
            items.extend(done.map_err(backend)??);
        }
        Ok(items)
    }

    async fn batch_get_chunk(&self, keys: Vec<Item>) -> StoreResult<Vec<Item>> {
        use aws_sdk_dynamodb::types::KeysAndAttributes;
        let mut items = Vec::with_capacity(keys.len());
        let mut request = Some(
            KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .consistent_read(true)
                .build()
                .map_err(backend)?,
        );
        while let Some(keys) = request.take() {
            let out = self
                .client
                .batch_get_item()
                .request_items(&self.table, keys)
                .send()
                .await
                .map_err(backend)?;
            items.extend(
                out.responses
                    .unwrap_or_default()
                    .remove(&self.table)
                    .unwrap_or_default(),
            );
            request = out
                .unprocessed_keys
                .and_then(|mut unprocessed| unprocessed.remove(&self.table));
        }
        Ok(items)
    }

    /// Counters of a brand: (active, total, per status).
    pub async fn brand_counters(&self, brand_id: &str) -> Result<Item, StoreError> {
        Ok(self
            .get(key(brand_pk(brand_id), "BRAND"))
            .await?
            .unwrap_or_default())
    }
}

#[async_trait]
impl AccountStore for DynamoStore {
    async fn find_api_key(&self, key_hash: &str) -> StoreResult<Option<ApiKey>> {
        self.get(key(format!("KEY#{key_hash}"), "KEY"))
            .await?
            .as_ref()
            .map(api_key_from_item)
            .transpose()
    }

    async fn get_brand(&self, brand_id: &str) -> StoreResult<Option<Brand>> {
        let Some(item) = self.get(key(brand_pk(brand_id), "BRAND")).await? else {
            return Ok(None);
        };
        // The brand item exists as soon as counters move; a brand is its name and plan.
        if !item.contains_key("plan") {
            return Ok(None);
        }
        Ok(Some(Brand {
            id: brand_id.to_owned(),
            name: item.string("name")?,
            plan: item.string("plan")?.parse::<Plan>().map_err(corrupt)?,
            vertical: item.string("vertical")?,
        }))
    }
}

#[async_trait]
impl RateLimitStore for DynamoStore {
    async fn count_request(&self, brand_id: &str, window_start: DateTime<Utc>) -> StoreResult<u64> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(
                format!("RATE#{brand_id}#{}", window_start.timestamp()),
                "RATE",
            )))
            .update_expression("ADD #count :one SET #ttl = :ttl")
            .expression_attribute_names("#count", "count")
            .expression_attribute_names("#ttl", "ttl")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":ttl", n(window_start.timestamp() + RATE_TTL_SECS))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(backend)?;
        let count = out.attributes.unwrap_or_default().number("count")?;
        Ok(u64::try_from(count).unwrap_or(0))
    }
}

#[async_trait]
impl CreatorStore for DynamoStore {
    async fn list_creators(&self) -> StoreResult<Vec<Creator>> {
        self.query_all(None, "pk = :pk", vec![(":pk", s("CREATORS"))], false, None)
            .await?
            .iter()
            .map(creator_from_item)
            .collect()
    }

    async fn get_creator(&self, creator_id: &str) -> StoreResult<Option<Creator>> {
        self.get(key("CREATORS".to_owned(), creator_id))
            .await?
            .as_ref()
            .map(creator_from_item)
            .transpose()
    }
}

#[async_trait]
impl StreamStore for DynamoStore {
    async fn create_stream(
        &self,
        stream: &Stream,
        announce: Option<EventType>,
        max_active: u32,
    ) -> StoreResult<CreateStreamOutcome> {
        // The position is the brand's current total, taken in a transaction conditional on
        // that total: a concurrent start of the brand makes it fail, and it is placed again
        // after the winner. At most `max_active` starts can win, so a burst settles quickly.
        for attempt in 0..CREATE_ATTEMPTS {
            if attempt > 0 {
                let jitter = rand::random_range(2..=10u64) * u64::from(attempt);
                tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
            }
            let index = BrandIndex::from_item(&self.brand_counters(&stream.brand_id).await?)?;
            if index.active.len() >= max_active as usize {
                return Ok(CreateStreamOutcome::ConcurrencyLimit);
            }
            let mut stored = stream.clone();
            if let Some(newest) = &index.newest {
                let (newest_at, newest_id) = newest
                    .split_once('#')
                    .and_then(|(at, id)| {
                        Some((DateTime::parse_from_rfc3339(at).ok()?, id.parse().ok()?))
                    })
                    .ok_or_else(|| corrupt("brand counters: newest"))?;
                stored.place_after(newest_at.to_utc(), newest_id);
            }
            let position = index.total;
            stored.position = Some(position);
            let total_condition = if position == 0 {
                "(attribute_not_exists(streams_total) OR streams_total = :total)"
            } else {
                "streams_total = :total"
            };
            let condition = format!(
                "{total_condition} AND (attribute_not_exists(active) OR active < :max_active)"
            );
            let mut items = vec![
                self.counters_update(
                    &stored,
                    None,
                    Some(Creation {
                        condition: &condition,
                        total: position,
                        max_active,
                    }),
                )?,
                put(
                    &self.table,
                    Item::from(&stored),
                    Some("attribute_not_exists(pk)"),
                )?,
                put(&self.table, position_item(&stored, position), None)?,
                update(
                    &self.table,
                    UpdateSpec {
                        key: key(
                            day_pk(&stored.brand_id, stored.created_at.date_naive()),
                            "DAY",
                        ),
                        expression: "SET #first = if_not_exists(#first, :position)",
                        condition: None,
                        names: vec![("#first", "first".to_owned())],
                        values: vec![(":position", n(position))],
                    },
                )?,
            ];
            if let Some(room) = &stored.room_name {
                let mut room_item = key(format!("ROOM#{room}"), "ROOM");
                room_item.insert("stream_id".into(), s(stored.id.to_string()));
                items.push(put(&self.table, room_item, None)?);
            }
            if let Some(event_type) = announce {
                let event = StreamEvent::new(event_type, &stored, stored.created_at);
                items.push(put(&self.table, event_item(&event), None)?);
            }
            match self.transact(items).await {
                Ok(()) => return Ok(CreateStreamOutcome::Created(Box::new(stored))),
                // Another start took the position, or the last slot: read again and see.
                Err(err) if condition_failed_at(&err, 0) => continue,
                Err(err) => return Err(backend(err)),
            }
        }
        Err(StoreError::Backend(format!(
            "too many concurrent starts for brand {}",
            stream.brand_id
        )))
    }

    async fn get_stream(&self, stream_id: Uuid) -> StoreResult<Option<Stream>> {
        self.get(key(stream_pk(stream_id), "STREAM"))
            .await?
            .as_ref()
            .map(Stream::try_from)
            .transpose()
    }

    async fn find_stream_by_room(&self, room_name: &str) -> StoreResult<Option<Stream>> {
        let Some(room) = self.get(key(format!("ROOM#{room_name}"), "ROOM")).await? else {
            return Ok(None);
        };
        let id =
            Uuid::parse_str(&room.string("stream_id")?).map_err(|_| corrupt("room stream id"))?;
        self.get_stream(id).await
    }

    async fn list_streams(
        &self,
        brand_id: &str,
        status: Option<StreamStatus>,
        limit: usize,
        offset: usize,
    ) -> StoreResult<StreamPage> {
        let index = BrandIndex::from_item(&self.brand_counters(brand_id).await?)?;
        let (offset, limit) = (offset as u64, limit as u64);
        let positions = match status {
            None => index.page(offset, limit),
            Some(status) if status.is_active() => index.active_page(status, offset, limit),
            Some(status) => {
                let slices = index.slices(status, offset, limit);
                let sets = self
                    .error_sets(brand_id, &index, &index.error_sets_needed(&slices))
                    .await?;
                index.positions(status, &slices, &sets)
            }
        };
        Ok(StreamPage {
            streams: self.streams_at(brand_id, &positions).await?,
            total: index.total_of(status),
        })
    }

    async fn streams_created_since(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<Stream>> {
        let days: Vec<chrono::NaiveDate> =
            since.date_naive().iter_days().take(DAYS_PROBED).collect();
        let day_keys = days
            .iter()
            .map(|day| key(day_pk(brand_id, *day), "DAY"))
            .collect();
        let (counters, day_items) =
            tokio::join!(self.brand_counters(brand_id), self.batch_get(day_keys));
        let index = BrandIndex::from_item(&counters?)?;
        if index
            .newest
            .as_ref()
            .is_none_or(|newest| *newest < sortable(since))
        {
            return Ok(Vec::new());
        }
        // Positions follow creation time, so the earliest day found holds the lowest one.
        let first = day_items?
            .iter()
            .filter_map(|item| item.opt_number("first"))
            .filter_map(|first| u64::try_from(first).ok())
            .min();
        let first = match first {
            Some(first) => first,
            // Nothing in the days probed, yet something newer: a search by position.
            None => self.first_position_since(brand_id, &index, since).await?,
        };
        let positions: Vec<u64> = (first..index.total).rev().collect();
        let mut streams = self.streams_at(brand_id, &positions).await?;
        streams.retain(|stream| stream.created_at >= since);
        Ok(streams)
    }

    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<(Stream, StreamEvent)>> {
        // No read: the update is conditional on the status the caller saw.
        let mut stream = current.clone();
        let from = stream.status;
        if !stream.apply(transition, at) {
            return Ok(None);
        }
        let position = stream
            .position
            .ok_or_else(|| corrupt("stream without a position"))?;
        let event = StreamEvent::new(transition.event_type(), &stream, at);
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
        let expression = format!("SET {}", sets.join(", "));
        let names = vec![("#status", "status".to_owned())];
        let mut conditioned = values.clone();
        conditioned.push((":from", s(from.as_str())));
        let mut items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: key(stream_pk(stream.id), "STREAM"),
                    expression: &expression,
                    condition: Some("#status = :from"),
                    names: names.clone(),
                    values: conditioned,
                },
            )?,
            update(
                &self.table,
                UpdateSpec {
                    key: key(position_pk(&stream.brand_id, position), "POS"),
                    expression: &expression,
                    condition: None,
                    names,
                    values,
                },
            )?,
            self.counters_update(&stream, Some(from), None)?,
            put(&self.table, event_item(&event), None)?,
        ];
        if stream.status == StreamStatus::Error {
            items.push(update(
                &self.table,
                UpdateSpec {
                    key: key(
                        errors_pk(&stream.brand_id, positions::block_of(position)),
                        "ERRORS",
                    ),
                    expression: "ADD #positions :position",
                    condition: None,
                    names: vec![("#positions", "positions".to_owned())],
                    values: vec![(":position", AttributeValue::Ns(vec![position.to_string()]))],
                },
            )?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(Some((stream, event))),
            Err(err) if condition_failed_at(&err, 0) => Ok(None),
            Err(err) => Err(backend(err)),
        }
    }

    async fn adjust_viewer_count(
        &self,
        stream: &Stream,
        delta: i64,
    ) -> StoreResult<Option<Stream>> {
        let position = stream
            .position
            .ok_or_else(|| corrupt("stream without a position"))?;
        // Single-item updates, not a transaction: viewers of one stream join in bursts, and
        // transactions on one item cancel each other. Each update raises `viewer_version`,
        // and the position copy takes a count only if it is newer than the one it holds.
        let condition = if delta < 0 {
            "#status = :live AND viewer_count >= :floor"
        } else {
            "#status = :live"
        };
        let mut request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(stream_pk(stream.id), "STREAM")))
            .update_expression("ADD viewer_count :delta, viewer_version :one")
            .condition_expression(condition)
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":delta", n(delta))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":live", s(StreamStatus::Live.as_str()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew);
        if delta < 0 {
            request = request.expression_attribute_values(":floor", n(-delta));
        }
        let updated = match request.send().await {
            Ok(out) => out.attributes.unwrap_or_default(),
            Err(err) if condition_failed(&err) => return Ok(None),
            Err(err) => return Err(backend(err)),
        };
        let version = updated.number("viewer_version")?;
        let copied = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(position_pk(&stream.brand_id, position), "POS")))
            .update_expression("SET viewer_count = :count, viewer_version = :version")
            .condition_expression(
                "attribute_exists(pk) AND \
                 (attribute_not_exists(viewer_version) OR viewer_version < :version)",
            )
            .expression_attribute_values(":count", n(updated.number("viewer_count")?))
            .expression_attribute_values(":version", n(version))
            .send()
            .await;
        match copied {
            Ok(_) => {}
            // Refused: a later count is already there.
            Err(err) if condition_failed(&err) => {}
            Err(err) => return Err(backend(err)),
        }
        Stream::try_from(&updated).map(Some)
    }
}

#[async_trait]
impl WebhookStore for DynamoStore {
    async fn create_webhook(&self, webhook: &Webhook, max: usize) -> StoreResult<bool> {
        let items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: key(brand_pk(&webhook.brand_id), "BRAND"),
                    expression: "SET webhooks = if_not_exists(webhooks, :zero) + :one",
                    condition: Some("attribute_not_exists(webhooks) OR webhooks < :max"),
                    names: vec![],
                    values: vec![(":zero", n(0)), (":one", n(1)), (":max", n(max))],
                },
            )?,
            put(
                &self.table,
                webhook_item(webhook),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(err) if condition_failed_at(&err, 0) => Ok(false),
            Err(err) => Err(backend(err)),
        }
    }

    async fn list_webhooks(&self, brand_id: &str) -> StoreResult<Vec<Webhook>> {
        self.query_all(
            Some(GSI1),
            "gsi1pk = :pk",
            vec![(":pk", s(format!("BRAND#{brand_id}#WEBHOOKS")))],
            true,
            None,
        )
        .await?
        .iter()
        .map(webhook_from_item)
        .collect()
    }

    async fn get_webhook(&self, webhook_id: Uuid) -> StoreResult<Option<Webhook>> {
        self.get(key(format!("WEBHOOK#{webhook_id}"), "WEBHOOK"))
            .await?
            .as_ref()
            .map(webhook_from_item)
            .transpose()
    }

    async fn delete_webhook(&self, brand_id: &str, webhook_id: Uuid) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(format!("WEBHOOK#{webhook_id}"), "WEBHOOK")))
            .condition_expression("brand_id = :brand")
            .expression_attribute_values(":brand", s(brand_id))
            .build()
            .map_err(backend)?;
        let items = vec![
            TransactWriteItem::builder().delete(delete).build(),
            update(
                &self.table,
                UpdateSpec {
                    key: key(brand_pk(brand_id), "BRAND"),
                    expression: "SET webhooks = webhooks - :one",
                    condition: Some("webhooks > :zero"),
                    names: vec![],
                    values: vec![(":zero", n(0)), (":one", n(1))],
                },
            )?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(()),
            // Absent, or another brand's: nothing to delete.
            Err(err) if any_condition_failed(&err) => Ok(()),
            Err(err) => Err(backend(err)),
        }
    }

    async fn deactivate_webhook(&self, webhook_id: Uuid) -> StoreResult<()> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(format!("WEBHOOK#{webhook_id}"), "WEBHOOK")))
            .update_expression("SET active = :false")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":false", AttributeValue::Bool(false))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(err) if condition_failed(&err) => Ok(()),
            Err(err) => Err(backend(err)),
        }
    }
}

#[async_trait]
impl Outbox for DynamoStore {
    async fn pending_events(&self, limit: usize) -> StoreResult<Vec<StreamEvent>> {
        self.query_all(
            Some(GSI3),
            "gsi3pk = :pk",
            vec![(":pk", s("OUTBOX"))],
            false,
            Some(limit),
        )
        .await?
        .iter()
        .map(event_from_item)
        .collect()
    }

    async fn mark_relayed(&self, event_ids: &[String]) -> StoreResult<()> {
        for id in event_ids {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(format!("EVENT#{id}"), "EVENT")))
                .update_expression("REMOVE gsi3pk, gsi3sk")
                .condition_expression("attribute_exists(pk)")
                .send()
                .await
                .map_err(backend)?;
        }
        Ok(())
    }
}

#[async_trait]
impl ProviderEventLog for DynamoStore {
    async fn first_sighting(&self, event_id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
        let mut item = key(format!("PROVIDER_EVENT#{event_id}"), "PROVIDER_EVENT");
        item.insert("ttl".into(), n((at + PROVIDER_EVENT_TTL).timestamp()));
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(err) if condition_failed(&err) => Ok(false),
            Err(err) => Err(backend(err)),
        }
    }
}

#[async_trait]
impl AdminStore for DynamoStore {
    async fn put_brand(&self, brand: &Brand) -> StoreResult<()> {
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(brand_pk(&brand.id), "BRAND")))
            .update_expression("SET #name = :name, #plan = :plan, vertical = :vertical")
            .expression_attribute_names("#name", "name")
            .expression_attribute_names("#plan", "plan")
            .expression_attribute_values(":name", s(&brand.name))
            .expression_attribute_values(":plan", s(brand.plan.as_str()))
            .expression_attribute_values(":vertical", s(&brand.vertical))
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn put_api_key(&self, api_key: &ApiKey) -> StoreResult<()> {
        let mut item = key(format!("KEY#{}", api_key.key_hash), "KEY");
        item.insert("key_hash".into(), s(&api_key.key_hash));
        item.insert("brand_id".into(), s(&api_key.brand_id));
        item.insert(
            "environment".into(),
            s(match api_key.environment {
                KeyEnvironment::Live => "live",
                KeyEnvironment::Test => "test",
            }),
        );
        item.insert(
            "scopes".into(),
            AttributeValue::L(api_key.scopes.iter().map(|sc| s(sc.as_str())).collect()),
        );
        item.insert("revoked".into(), AttributeValue::Bool(api_key.revoked));
        if let Some(expires) = api_key.expires_at {
            item.insert("expires_at".into(), s(sortable(expires)));
        }
        self.put_item(item).await
    }

    async fn put_creator(&self, creator: &Creator) -> StoreResult<()> {
        self.put_item(creator_item(creator)).await
    }

    async fn delete_creator(&self, creator_id: &str) -> StoreResult<()> {
        self.client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key("CREATORS".to_owned(), creator_id)))
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn put_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        let mut by_brand: BTreeMap<&str, Vec<Stream>> = BTreeMap::new();
        for stream in streams {
            by_brand
                .entry(stream.brand_id.as_str())
                .or_default()
                .push(stream.clone());
        }
        for (brand_id, streams) in by_brand {
            self.put_brand_streams(brand_id, streams).await?;
        }
        Ok(())
    }

    async fn put_stream(&self, stream: &Stream) -> StoreResult<()> {
        self.put_streams(std::slice::from_ref(stream)).await
    }
}

/// What streams with positions add to their brand's index: status counts (and `active`), the
/// active positions' attributes, the error positions per block and each day's first position.
struct PositionsSummary {
    counts: BTreeMap<String, i64>,
    active: Vec<(String, AttributeValue)>,
    error_sets: BTreeMap<u64, Vec<u64>>,
    firsts: BTreeMap<chrono::NaiveDate, u64>,
}

impl PositionsSummary {
    /// `streams` oldest first, positions assigned.
    fn of(streams: &[Stream]) -> Self {
        let mut summary = PositionsSummary {
            counts: BTreeMap::new(),
            active: Vec::new(),
            error_sets: BTreeMap::new(),
            firsts: BTreeMap::new(),
        };
        for stream in streams {
            let position = stream.position.unwrap_or_default();
            *summary
                .counts
                .entry(status_counter(stream.status))
                .or_default() += 1;
            match stream.status {
                StreamStatus::Error => summary
                    .error_sets
                    .entry(positions::block_of(position))
                    .or_default()
                    .push(position),
                StreamStatus::Ended => {}
                active => {
                    *summary.counts.entry("active".into()).or_default() += 1;
                    let attribute = positions::active_attribute(position);
                    summary.active.push((attribute, s(active.as_str())));
                }
            }
            summary
                .firsts
                .entry(stream.created_at.date_naive())
                .or_insert(position);
        }
        summary
    }
}

/// Seeding a brand's streams: positions, position copies, error blocks and days, as creation
/// and transitions keep them. Not atomic with concurrent starts of the same brand: seed a
/// brand while it is idle.
impl DynamoStore {
    async fn put_brand_streams(&self, brand_id: &str, streams: Vec<Stream>) -> StoreResult<()> {
        // A later stream with the same id replaces an earlier one.
        let mut unique: HashMap<Uuid, Stream> = HashMap::new();
        for stream in streams {
            unique.insert(stream.id, stream);
        }
        let mut streams: Vec<Stream> = unique.into_values().collect();
        streams.sort_by_key(|s| (s.created_at, s.id));
        let index = BrandIndex::from_item(&self.brand_counters(brand_id).await?)?;
        let ids = streams
            .iter()
            .map(|s| key(stream_pk(s.id), "STREAM"))
            .collect();
        let replaces = !self.batch_get(ids).await?.is_empty();
        let all_newer = match (&index.newest, streams.first()) {
            (Some(newest), Some(first)) => created_sort_key(first.created_at, first.id) > *newest,
            _ => true,
        };
        if !replaces && all_newer {
            self.append_streams(brand_id, &index, streams).await
        } else {
            self.renumber_streams(brand_id, &index, streams).await
        }
    }

    /// Streams newer than every stream of the brand take the next positions.
    async fn append_streams(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        mut streams: Vec<Stream>,
    ) -> StoreResult<()> {
        let Some(newest) = streams.last().map(|s| created_sort_key(s.created_at, s.id)) else {
            return Ok(());
        };
        for (offset, stream) in streams.iter_mut().enumerate() {
            stream.position = Some(index.total + offset as u64);
        }
        self.write_streams(&streams).await?;
        let summary = PositionsSummary::of(&streams);
        let mut adds = summary.counts;
        adds.insert("streams_total".into(), streams.len() as i64);
        for (block, set) in &summary.error_sets {
            adds.insert(positions::errors_attribute(*block), set.len() as i64);
        }
        let mut sets = summary.active;
        sets.push(("newest".into(), s(newest)));
        self.update_attributes(key(brand_pk(brand_id), "BRAND"), adds, sets, Vec::new())
            .await?;
        for (block, set) in summary.error_sets {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(errors_pk(brand_id, block), "ERRORS")))
                .update_expression("ADD #positions :set")
                .expression_attribute_names("#positions", "positions")
                .expression_attribute_values(
                    ":set",
                    AttributeValue::Ns(set.iter().map(u64::to_string).collect()),
                )
                .send()
                .await
                .map_err(backend)?;
        }
        for (day, first) in summary.firsts {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(day_pk(brand_id, day), "DAY")))
                .update_expression("SET #first = if_not_exists(#first, :first)")
                .expression_attribute_names("#first", "first")
                .expression_attribute_values(":first", n(first))
                .send()
                .await
                .map_err(backend)?;
        }
        Ok(())
    }

    /// Streams that replace or precede some of the brand's: the whole history is read,
    /// merged and numbered again, and every index item rewritten.
    async fn renumber_streams(
        &self,
        brand_id: &str,
        index: &BrandIndex,
        streams: Vec<Stream>,
    ) -> StoreResult<()> {
        let existing: Vec<u64> = (0..index.total).collect();
        let mut merged: HashMap<Uuid, Stream> = self
            .streams_at(brand_id, &existing)
            .await?
            .into_iter()
            .map(|s| (s.id, s))
            .collect();
        for stream in streams {
            merged.insert(stream.id, stream);
        }
        let mut merged: Vec<Stream> = merged.into_values().collect();
        merged.sort_by_key(|s| (s.created_at, s.id));
        for (position, stream) in merged.iter_mut().enumerate() {
            stream.position = Some(position as u64);
        }
        self.write_streams(&merged).await?;

        let mut sets: Vec<(String, AttributeValue)> = vec![
            ("streams_total".into(), n(merged.len())),
            ("generation".into(), n(index.generation + 1)),
        ];
        if let Some(newest) = merged.last() {
            sets.push((
                "newest".into(),
                s(created_sort_key(newest.created_at, newest.id)),
            ));
        }
        let summary = PositionsSummary::of(&merged);
        // Absolute values: every status count, zero ones included, replaces the old.
        for status in StreamStatus::ALL {
            let name = status_counter(status);
            let count = summary.counts.get(&name).copied().unwrap_or(0);
            sets.push((name, n(count)));
        }
        let active = summary.counts.get("active").copied().unwrap_or(0);
        sets.push(("active".into(), n(active)));
        sets.extend(summary.active);
        for (block, set) in &summary.error_sets {
            sets.push((positions::errors_attribute(*block), n(set.len())));
        }
        let mut removes: Vec<String> = index
            .active
            .keys()
            .map(|p| positions::active_attribute(*p))
            .chain(index.errors.keys().map(|b| positions::errors_attribute(*b)))
            .collect();
        removes.retain(|name| !sets.iter().any(|(set, _)| set == name));
        self.update_attributes(
            key(brand_pk(brand_id), "BRAND"),
            BTreeMap::new(),
            sets,
            removes,
        )
        .await?;

        let mut puts = Vec::new();
        for (block, set) in &summary.error_sets {
            let mut item = key(errors_pk(brand_id, *block), "ERRORS");
            item.insert(
                "positions".into(),
                AttributeValue::Ns(set.iter().map(u64::to_string).collect()),
            );
            puts.push(item);
        }
        for (day, first) in &summary.firsts {
            let mut item = key(day_pk(brand_id, *day), "DAY");
            item.insert("first".into(), n(first));
            puts.push(item);
        }
        let deletes = index
            .errors
            .keys()
            .filter(|block| !summary.error_sets.contains_key(block))
            .map(|block| key(errors_pk(brand_id, *block), "ERRORS"))
            .collect();
        self.batch_write(puts, deletes).await
    }

    /// Stream items, their position copies and room items, in batches.
    async fn write_streams(&self, streams: &[Stream]) -> StoreResult<()> {
        let mut items = Vec::with_capacity(streams.len() * 2);
        for stream in streams {
            let position = stream
                .position
                .ok_or_else(|| corrupt("stream without a position"))?;
            items.push(Item::from(stream));
            items.push(position_item(stream, position));
            if let Some(room) = &stream.room_name {
                let mut room_item = key(format!("ROOM#{room}"), "ROOM");
                room_item.insert("stream_id".into(), s(stream.id.to_string()));
                items.push(room_item);
            }
        }
        self.batch_write(items, Vec::new()).await
    }

    /// `puts` and `deletes` in `BatchWriteItem`s of 25, resending what DynamoDB left over.
    async fn batch_write(&self, puts: Vec<Item>, deletes: Vec<Item>) -> StoreResult<()> {
        use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
        let mut requests = Vec::with_capacity(puts.len() + deletes.len());
        for item in puts {
            requests.push(
                WriteRequest::builder()
                    .put_request(
                        PutRequest::builder()
                            .set_item(Some(item))
                            .build()
                            .map_err(backend)?,
                    )
                    .build(),
            );
        }
        for key in deletes {
            requests.push(
                WriteRequest::builder()
                    .delete_request(
                        DeleteRequest::builder()
                            .set_key(Some(key))
                            .build()
                            .map_err(backend)?,
                    )
                    .build(),
            );
        }
        for chunk in requests.chunks(25) {
            let mut pending = chunk.to_vec();
            while !pending.is_empty() {
                let out = self
                    .client
                    .batch_write_item()
                    .request_items(&self.table, pending)
                    .send()
                    .await
                    .map_err(backend)?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                    .unwrap_or_default();
            }
        }
        Ok(())
    }

    /// `ADD`s, `SET`s and `REMOVE`s on one item, a few dozen per request (update expressions
    /// are limited in size).
    async fn update_attributes(
        &self,
        item_key: Item,
        adds: BTreeMap<String, i64>,
        sets: Vec<(String, AttributeValue)>,
        removes: Vec<String>,
    ) -> StoreResult<()> {
        enum Change {
            Add(String, i64),
            Set(String, AttributeValue),
            Remove(String),
        }
        let changes: Vec<Change> = adds
            .into_iter()
            .filter(|(_, delta)| *delta != 0)
            .map(|(name, delta)| Change::Add(name, delta))
            .chain(
                sets.into_iter()
                    .map(|(name, value)| Change::Set(name, value)),
            )
            .chain(removes.into_iter().map(Change::Remove))
            .collect();
        for chunk in changes.chunks(40) {
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(item_key.clone()));
            let (mut added, mut set, mut removed) = (Vec::new(), Vec::new(), Vec::new());
            for (i, change) in chunk.iter().enumerate() {
                let (name, value) = match change {
                    Change::Add(name, delta) => {
                        added.push(format!("#a{i} :v{i}"));
                        (name, Some(n(delta)))
                    }
                    Change::Set(name, value) => {
                        set.push(format!("#a{i} = :v{i}"));
                        (name, Some(value.clone()))
                    }
                    Change::Remove(name) => {
                        removed.push(format!("#a{i}"));
                        (name, None)
                    }
                };
                request = request.expression_attribute_names(format!("#a{i}"), name);
                if let Some(value) = value {
                    request = request.expression_attribute_values(format!(":v{i}"), value);
                }
            }
            let mut expression = Vec::new();
            for (verb, parts) in [("ADD", added), ("SET", set), ("REMOVE", removed)] {
                if !parts.is_empty() {
                    expression.push(format!("{verb} {}", parts.join(", ")));
                }
            }
            request
                .update_expression(expression.join(" "))
                .send()
                .await
                .map_err(backend)?;
        }
        Ok(())
    }
}
