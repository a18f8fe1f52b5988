//! The DynamoDB store: one table, every request a `GetItem`, `Query`, conditional write or
//! transaction (never a `Scan`).
//!
//! | item | pk | sk | indexes |
//! |---|---|---|---|
//! | brand (with its counters) | `BRAND#<id>` | `BRAND` | |
//! | API key | `KEY#<sha256>` | `KEY` | |
//! | creator | `CREATORS` | `<id>` | |
//! | stream | `STREAM#<id>` | `STREAM` | gsi1: brand, newest first; gsi2: brand and status |
//! | room name -> stream | `ROOM#<name>` | `ROOM` | |
//! | webhook | `WEBHOOK#<id>` | `WEBHOOK` | gsi1: brand's webhooks, newest first |
//! | event (outbox) | `EVENT#<id>` | `EVENT` | gsi3 (sparse): not yet relayed, oldest first |
//! | rate window | `RATE#<brand>#<minute>` | `RATE` | TTL |
//! | provider event id | `PROVIDER_EVENT#<id>` | `PROVIDER_EVENT` | TTL |
//!
//! The brand item carries the counters that make limits atomic and totals cheap: `active`
//! (streams in `preparing` or `live`), `streams_total`, `streams_<status>` and `webhooks`.

use std::collections::HashMap;

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
use crate::domain::event::EventType;
use crate::domain::stream::Transition;
use crate::domain::{
    ApiKey, Brand, Creator, KeyEnvironment, Plan, Scope, Stream, StreamEvent, StreamStatus, Webhook,
};
use crate::error::StoreError;
use crate::ports::*;

type Item = HashMap<String, AttributeValue>;

const GSI1: &str = "gsi1";
const GSI2: &str = "gsi2";
const GSI3: &str = "gsi3";
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

fn streams_index_pk(brand_id: &str) -> String {
    format!("BRAND#{brand_id}#STREAMS")
}

fn status_index_pk(brand_id: &str, status: StreamStatus) -> String {
    format!("BRAND#{brand_id}#STATUS#{}", status.as_str())
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
        let sort = created_sort_key(stream.created_at, stream.id);
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
        put("gsi1pk", s(streams_index_pk(&stream.brand_id)));
        put("gsi1sk", s(sort.clone()));
        put(
            "gsi2pk",
            s(status_index_pk(&stream.brand_id, stream.status)),
        );
        put("gsi2sk", s(sort));
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

    /// The counter update of a brand for a stream changing status (or appearing: `from` None).
    fn counters_update(
        &self,
        brand_id: &str,
        from: Option<StreamStatus>,
        to: StreamStatus,
        condition: Option<&str>,
        max_active: Option<u32>,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut sets = vec!["#to = if_not_exists(#to, :zero) + :one".to_owned()];
        let mut names = vec![("#to", status_counter(to))];
        let mut values = vec![(":zero", n(0)), (":one", n(1))];
        match from {
            None => sets.push("streams_total = if_not_exists(streams_total, :zero) + :one".into()),
            Some(from) => {
                sets.push("#from = if_not_exists(#from, :zero) - :one".into());
                names.push(("#from", status_counter(from)));
            }
        }
        let active_delta =
            i64::from(to.is_active()) - i64::from(from.is_some_and(|f| f.is_active()));
        if active_delta != 0 {
            sets.push("active = if_not_exists(active, :zero) + :active_delta".into());
            values.push((":active_delta", n(active_delta)));
        }
        if let Some(max) = max_active {
            values.push((":max_active", n(max)));
        }
        let expression = format!("SET {}", sets.join(", "));
        update(
            &self.table,
            UpdateSpec {
                key: key(brand_pk(brand_id), "BRAND"),
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
        for name in [
            "pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk",
        ] {
            attributes.push(attribute(name)?);
        }
        self.client
            .create_table()
            .table_name(&self.table)
            .set_attribute_definitions(Some(attributes))
            .set_key_schema(Some(key_schema("pk", "sk")?))
            .set_global_secondary_indexes(Some(vec![index(GSI1)?, index(GSI2)?, index(GSI3)?]))
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
        event: Option<&StreamEvent>,
        max_active: u32,
    ) -> StoreResult<CreateStreamOutcome> {
        let mut items = vec![
            self.counters_update(
                &stream.brand_id,
                None,
                stream.status,
                Some("attribute_not_exists(active) OR active < :max_active"),
                Some(max_active),
            )?,
            put(
                &self.table,
                Item::from(stream),
                Some("attribute_not_exists(pk)"),
            )?,
        ];
        if let Some(room) = &stream.room_name {
            let mut room_item = key(format!("ROOM#{room}"), "ROOM");
            room_item.insert("stream_id".into(), s(stream.id.to_string()));
            items.push(put(&self.table, room_item, None)?);
        }
        if let Some(event) = event {
            items.push(put(&self.table, event_item(event), None)?);
        }
        match self.transact(items).await {
            Ok(()) => Ok(CreateStreamOutcome::Created),
            Err(err) if condition_failed_at(&err, 0) => Ok(CreateStreamOutcome::ConcurrencyLimit),
            Err(err) => Err(backend(err)),
        }
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
        let (index, pk) = match status {
            None => (GSI1, ("gsi1pk = :pk", streams_index_pk(brand_id))),
            Some(status) => (GSI2, ("gsi2pk = :pk", status_index_pk(brand_id, status))),
        };
        // The total (a counter) and the page (an index query) in parallel: one round trip.
        let (counters, items) = tokio::join!(
            self.brand_counters(brand_id),
            self.query_all(
                Some(index),
                pk.0,
                vec![(":pk", s(pk.1))],
                true,
                Some(offset.saturating_add(limit)),
            )
        );
        let counters = counters?;
        let total = match status {
            None => counters.opt_number("streams_total"),
            Some(status) => counters.opt_number(&status_counter(status)),
        }
        .and_then(|t| u64::try_from(t).ok())
        .unwrap_or(0);
        let items = items?;
        let streams = items
            .iter()
            .skip(offset)
            .take(limit)
            .map(Stream::try_from)
            .collect::<Result<_, _>>()?;
        Ok(StreamPage { streams, total })
    }

    async fn streams_created_since(
        &self,
        brand_id: &str,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<Stream>> {
        self.query_all(
            Some(GSI1),
            "gsi1pk = :pk AND gsi1sk >= :since",
            vec![
                (":pk", s(streams_index_pk(brand_id))),
                (":since", s(sortable(since))),
            ],
            true,
            None,
        )
        .await?
        .iter()
        .map(Stream::try_from)
        .collect()
    }

    async fn apply_transition(
        &self,
        current: &Stream,
        transition: Transition,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<(Stream, StreamEvent)>> {
        // No read: the update is conditional on the status the caller saw.
        let mut stream = current.clone();
        let stream_id = stream.id;
        let from = stream.status;
        if !stream.apply(transition, at) {
            return Ok(None);
        }
        let event = StreamEvent::new(transition.event_type(), &stream, at);
        let mut sets = vec!["#status = :to", "gsi2pk = :gsi2pk"];
        let mut values = vec![
            (":from", s(from.as_str())),
            (":to", s(stream.status.as_str())),
            (
                ":gsi2pk",
                s(status_index_pk(&stream.brand_id, stream.status)),
            ),
        ];
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
        let items = vec![
            update(
                &self.table,
                UpdateSpec {
                    key: key(stream_pk(stream_id), "STREAM"),
                    expression: &expression,
                    condition: Some("#status = :from"),
                    names: vec![("#status", "status".to_owned())],
                    values,
                },
            )?,
            self.counters_update(&stream.brand_id, Some(from), stream.status, None, None)?,
            put(&self.table, event_item(&event), None)?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(Some((stream, event))),
            Err(err) if condition_failed_at(&err, 0) => Ok(None),
            Err(err) => Err(backend(err)),
        }
    }

    async fn adjust_viewer_count(
        &self,
        stream_id: Uuid,
        delta: i64,
    ) -> StoreResult<Option<Stream>> {
        let condition = if delta < 0 {
            "#status = :live AND viewer_count >= :floor"
        } else {
            "#status = :live"
        };
        let mut request = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(stream_pk(stream_id), "STREAM")))
            .update_expression("ADD viewer_count :delta")
            .condition_expression(condition)
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":delta", n(delta))
            .expression_attribute_values(":live", s(StreamStatus::Live.as_str()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew);
        if delta < 0 {
            request = request.expression_attribute_values(":floor", n(-delta));
        }
        match request.send().await {
            Ok(out) => out.attributes.as_ref().map(Stream::try_from).transpose(),
            Err(err) if condition_failed(&err) => Ok(None),
            Err(err) => Err(backend(err)),
        }
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
        use aws_sdk_dynamodb::types::{KeysAndAttributes, PutRequest, WriteRequest};
        // Streams being replaced count out of their old status.
        let mut previous: HashMap<Uuid, Stream> = HashMap::new();
        for chunk in streams.chunks(100) {
            let keys: Vec<Item> = chunk
                .iter()
                .map(|st| key(stream_pk(st.id), "STREAM"))
                .collect();
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
                for item in out
                    .responses
                    .unwrap_or_default()
                    .remove(&self.table)
                    .unwrap_or_default()
                {
                    let stream = Stream::try_from(&item)?;
                    previous.insert(stream.id, stream);
                }
                request = out
                    .unprocessed_keys
                    .and_then(|mut unprocessed| unprocessed.remove(&self.table));
            }
        }
        let mut writes = Vec::new();
        let mut deltas: HashMap<String, HashMap<String, i64>> = HashMap::new();
        for stream in streams {
            writes.push(Item::from(stream));
            if let Some(room) = &stream.room_name {
                let mut room_item = key(format!("ROOM#{room}"), "ROOM");
                room_item.insert("stream_id".into(), s(stream.id.to_string()));
                writes.push(room_item);
            }
            let brand = deltas.entry(stream.brand_id.clone()).or_default();
            match previous.get(&stream.id) {
                Some(old) => {
                    *brand.entry(status_counter(old.status)).or_default() -= 1;
                    *brand.entry("active".into()).or_default() -= i64::from(old.status.is_active());
                }
                None => *brand.entry("streams_total".into()).or_default() += 1,
            }
            *brand.entry(status_counter(stream.status)).or_default() += 1;
            *brand.entry("active".into()).or_default() += i64::from(stream.status.is_active());
        }
        for chunk in writes.chunks(25) {
            let mut pending: Vec<WriteRequest> = chunk
                .iter()
                .map(|item| {
                    Ok(WriteRequest::builder()
                        .put_request(
                            PutRequest::builder()
                                .set_item(Some(item.clone()))
                                .build()
                                .map_err(backend)?,
                        )
                        .build())
                })
                .collect::<Result<_, StoreError>>()?;
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
        for (brand_id, counters) in deltas {
            let counters: Vec<(String, i64)> =
                counters.into_iter().filter(|(_, d)| *d != 0).collect();
            if counters.is_empty() {
                continue;
            }
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(brand_pk(&brand_id), "BRAND")));
            let mut parts = Vec::new();
            for (i, (name, delta)) in counters.iter().enumerate() {
                parts.push(format!("#c{i} :d{i}"));
                request = request
                    .expression_attribute_names(format!("#c{i}"), name)
                    .expression_attribute_values(format!(":d{i}"), n(delta));
            }
            request
                .update_expression(format!("ADD {}", parts.join(", ")))
                .send()
                .await
                .map_err(backend)?;
        }
        Ok(())
    }

    async fn put_stream(&self, stream: &Stream) -> StoreResult<()> {
        let previous = self.get_stream(stream.id).await?;
        let mut items = vec![put(&self.table, Item::from(stream), None)?];
        // Replacing a stream with one of the same status leaves the counters as they are.
        if previous.as_ref().map(|p| p.status) != Some(stream.status) {
            items.push(self.counters_update(
                &stream.brand_id,
                previous.as_ref().map(|p| p.status),
                stream.status,
                None,
                None,
            )?);
        }
        if let Some(room) = &stream.room_name {
            let mut room_item = key(format!("ROOM#{room}"), "ROOM");
            room_item.insert("stream_id".into(), s(stream.id.to_string()));
            items.push(put(&self.table, room_item, None)?);
        }
        self.transact(items).await.map_err(backend)
    }
}
