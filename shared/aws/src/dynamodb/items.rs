//! Item mapping: each record to its item and back, and reading attributes with clear errors
//! for malformed items.

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Item;
use super::keys::{self, sortable};
use hosting_domain::destination::SealedStreamKeys;
use hosting_domain::error::StoreError;
use hosting_domain::event::EventType;
use hosting_domain::sealed::StoredSecret;
use hosting_domain::webhook::DisabledReason;
use hosting_domain::{
    ApiKey, Creator, EndReason, KeyEnvironment, Scope, Stream, StreamEvent, StreamStatus, Webhook,
};

pub(super) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

pub(super) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub(super) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// A stored secret: a sealed one is a binary attribute, a plain one (written before sealing)
/// a string, so the two never mix up whatever a plain secret holds.
pub(crate) fn secret_value(secret: &StoredSecret) -> AttributeValue {
    match secret {
        StoredSecret::Sealed(bytes) => AttributeValue::B(Blob::new(bytes.clone())),
        StoredSecret::Plain(plain) => s(plain),
    }
}

pub(crate) fn secret_of(value: &AttributeValue) -> Option<StoredSecret> {
    match value {
        AttributeValue::B(bytes) => Some(StoredSecret::Sealed(bytes.clone().into_inner())),
        AttributeValue::S(plain) => Some(StoredSecret::Plain(plain.clone())),
        _ => None,
    }
}

pub(super) trait ItemExt {
    fn string(&self, name: &str) -> Result<String, StoreError>;
    fn opt_string(&self, name: &str) -> Option<String>;
    fn number(&self, name: &str) -> Result<i64, StoreError>;
    fn opt_number(&self, name: &str) -> Option<i64>;
    fn boolean(&self, name: &str) -> bool;
    fn time(&self, name: &str) -> Result<DateTime<Utc>, StoreError>;
    fn opt_time(&self, name: &str) -> Result<Option<DateTime<Utc>>, StoreError>;
    fn strings(&self, name: &str) -> Option<Vec<String>>;
    fn opt_secret(&self, name: &str) -> Option<StoredSecret>;
}

impl ItemExt for Item {
    fn opt_secret(&self, name: &str) -> Option<StoredSecret> {
        self.get(name).and_then(secret_of)
    }

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

    /// A list of strings (other members are skipped).
    fn strings(&self, name: &str) -> Option<Vec<String>> {
        match self.get(name) {
            Some(AttributeValue::L(list)) => {
                Some(list.iter().filter_map(|v| v.as_s().ok().cloned()).collect())
            }
            _ => None,
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(raw: String, what: &str) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(raw))
        .map_err(|_| corrupt(format!("bad {what}")))
}

/// The script of a stream, on an item of its own: up to 50,000 characters that only the
/// launch needs, kept off every item that lists, analytics, viewer counts, transitions and the
/// due index read and write.
pub(super) fn script_item(stream_id: Uuid, script: &str) -> Item {
    let mut item = keys::script_key(stream_id);
    item.insert("script".into(), s(script));
    item
}

/// The stream's record attributes (never its script), under the stream's key. The position copy
/// ([`position_item`]) shares them; only the stream item itself is in the due index
/// ([`stream_item`]).
pub(super) fn record_item(stream: &Stream) -> Item {
    {
        let mut item = keys::stream_key(stream.id);
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
        for (name, value) in [
            ("platform", &stream.platform),
            ("creator_id", &stream.creator_id),
            ("room_name", &stream.room_name),
        ] {
            if let Some(value) = value {
                put(name, s(value));
            }
        }
        for (name, value) in [
            ("started_at", stream.started_at),
            ("ended_at", stream.ended_at),
            ("deadline", stream.deadline),
            ("next_dispatch_at", stream.next_dispatch_at),
            ("host_check_at", stream.host_check_at),
            ("host_lost_at", stream.host_lost_at),
            ("reconnect_until", stream.reconnect_until),
        ] {
            if let Some(value) = value {
                put(name, s(sortable(value)));
            }
        }
        if let Some(minutes) = stream.duration_minutes {
            put("duration_minutes", n(minutes));
        }
        if let Some(reason) = stream.end_reason {
            put("end_reason", s(reason.as_str()));
        }
        if stream.dispatches > 0 {
            put("dispatches", n(stream.dispatches));
        }
        if !stream.agents.is_empty() {
            put("agents", agents_value(&stream.agents));
        }
        if stream.revision > 0 {
            put("revision", n(stream.revision));
        }
        item
    }
}

/// The agents of a stream, as stored.
pub(super) fn agents_value(agents: &[String]) -> AttributeValue {
    AttributeValue::L(agents.iter().map(s).collect())
}

/// The stream's destination keys, on an item of their own (see [`keys::stream_keys_key`]): one
/// attribute per destination, named by its id, so a destination added later is one `SET`.
pub(super) fn stream_keys_item(stream_id: Uuid, stream_keys: &SealedStreamKeys) -> Item {
    let mut item = keys::stream_keys_key(stream_id);
    for (destination_id, key) in &stream_keys.0 {
        item.insert(destination_id.clone(), secret_value(key));
    }
    item
}

pub(super) fn stream_keys_of(item: &Item) -> SealedStreamKeys {
    SealedStreamKeys(
        item.iter()
            .filter(|(name, _)| name.starts_with("dst_"))
            .filter_map(|(name, value)| Some((name.clone(), secret_of(value)?)))
            .collect(),
    )
}

/// The destinations and the egress as the stream item holds them (never the position copy:
/// lists and analytics show neither), JSON in one attribute each; `None` to remove.
pub(super) fn destinations_value(stream: &Stream) -> Option<AttributeValue> {
    (!stream.destinations.is_empty())
        .then(|| s(serde_json::to_string(&stream.destinations).unwrap_or_default()))
}

pub(super) fn egress_value(stream: &Stream) -> Option<AttributeValue> {
    (!stream.egress.is_idle()).then(|| s(serde_json::to_string(&stream.egress).unwrap_or_default()))
}

/// The stream item at its `position`, in the due index while it has something due.
pub(super) fn stream_item(stream: &Stream, position: u64) -> Item {
    let mut item = record_item(stream);
    item.insert("position".into(), n(position));
    if let Some(destinations) = destinations_value(stream) {
        item.insert("destinations".into(), destinations);
    }
    if let Some(egress) = egress_value(stream) {
        item.insert("egress".into(), egress);
    }
    if let Some(due) = stream.next_due() {
        item.insert(keys::DUE_PK.into(), s(keys::deadline_pk(stream.id)));
        item.insert(
            keys::DUE_SK.into(),
            s(keys::due_sk(due, &stream.id.to_string())),
        );
    }
    item
}

/// The copy of a stream kept at its position.
pub(super) fn position_item(stream: &Stream, position: u64) -> Item {
    let mut item = record_item(stream);
    item.insert("position".into(), n(position));
    item.extend(keys::position_key(&stream.brand_id, position));
    item
}

/// The position a stream item or position copy records (the adapter's own; the domain record
/// has none).
pub(super) fn position_of(item: &Item) -> Option<u64> {
    item.opt_number("position")
        .and_then(|p| u64::try_from(p).ok())
}

/// The stream an item of it (the stream item or a position copy) holds.
pub(super) fn stream_of(item: &Item) -> Result<Stream, StoreError> {
    {
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
            // On its own item, read only by the launch (`script_item`).
            script: None,
            // A value this version does not know reads as none recorded.
            end_reason: item
                .opt_string("end_reason")
                .and_then(|reason| EndReason::parse(&reason)),
            dispatches: item
                .opt_number("dispatches")
                .and_then(|d| u32::try_from(d).ok())
                .unwrap_or(0),
            next_dispatch_at: item.opt_time("next_dispatch_at")?,
            agents: item.strings("agents").unwrap_or_default(),
            host_check_at: item.opt_time("host_check_at")?,
            host_lost_at: item.opt_time("host_lost_at")?,
            reconnect_until: item.opt_time("reconnect_until")?,
            revision: item
                .opt_number("revision")
                .and_then(|r| u64::try_from(r).ok())
                .unwrap_or(0),
            deadline: item.opt_time("deadline")?,
            destinations: match item.opt_string("destinations") {
                Some(raw) => serde_json::from_str(&raw).map_err(|_| corrupt("destinations"))?,
                None => Vec::new(),
            },
            egress: match item.opt_string("egress") {
                Some(raw) => serde_json::from_str(&raw).map_err(|_| corrupt("egress"))?,
                None => Default::default(),
            },
            stream_keys: Default::default(),
        })
    }
}

/// How long relayed events stay readable before they expire (pending ones never expire).
pub(super) const EVENT_TTL: chrono::Duration = chrono::Duration::days(30);

/// An event as written with its transition: pending in the due index until relayed.
pub(super) fn event_item(event: &StreamEvent) -> Item {
    let mut item = keys::event_key(&event.id);
    item.insert("id".into(), s(&event.id));
    item.insert("type".into(), s(event.event_type.as_str()));
    item.insert("brand_id".into(), s(&event.brand_id));
    if let Some(stream_id) = event.stream_id {
        item.insert("stream_id".into(), s(stream_id.to_string()));
    }
    item.insert("created_at".into(), s(sortable(event.created_at)));
    item.insert("body".into(), s(&event.body));
    item.insert(keys::DUE_PK.into(), s(keys::outbox_pk(&event.id)));
    item.insert(
        keys::DUE_SK.into(),
        s(keys::due_sk(event.created_at, &event.id)),
    );
    item
}

/// Reads an event item (also the new image of a DynamoDB stream record).
pub fn event_from_item(item: &Item) -> Result<StreamEvent, StoreError> {
    Ok(StreamEvent {
        id: item.string("id")?,
        event_type: EventType::parse(&item.string("type")?).ok_or_else(|| corrupt("event type"))?,
        brand_id: item.string("brand_id")?,
        stream_id: item
            .opt_string("stream_id")
            .map(|id| Uuid::parse_str(&id).map_err(|_| corrupt("event stream id")))
            .transpose()?,
        created_at: item.time("created_at")?,
        body: item.string("body")?,
    })
}

/// Reads an event from the new image of a DynamoDB stream record (DynamoDB JSON, as Lambda
/// hands it over): only its string attributes are needed.
pub fn event_from_stream_image(image: &serde_json::Value) -> Result<StreamEvent, StoreError> {
    let item: Item = image
        .as_object()
        .ok_or_else(|| corrupt("stream record image"))?
        .iter()
        .filter_map(|(name, value)| Some((name.clone(), s(value.get("S")?.as_str()?))))
        .collect();
    event_from_item(&item)
}

pub(super) fn webhook_item(webhook: &Webhook) -> Item {
    let mut item = keys::webhook_key(&webhook.brand_id, webhook.id);
    item.insert("id".into(), s(webhook.id.to_string()));
    item.insert("brand_id".into(), s(&webhook.brand_id));
    item.insert("url".into(), s(&webhook.url));
    item.insert(
        "events".into(),
        AttributeValue::L(webhook.events.iter().map(|e| s(e.as_str())).collect()),
    );
    item.insert("secret".into(), secret_value(&webhook.secret));
    item.insert("active".into(), AttributeValue::Bool(webhook.active));
    item.insert("created_at".into(), s(sortable(webhook.created_at)));
    for (name, value) in [
        ("previous_secret", &webhook.previous_secret),
        ("signing_key", &webhook.signing_key),
        ("previous_signing_key", &webhook.previous_signing_key),
    ] {
        if let Some(value) = value {
            item.insert(name.into(), secret_value(value));
        }
    }
    if let Some(public_key) = &webhook.public_key {
        item.insert("public_key".into(), s(public_key));
    }
    if let Some(reason) = webhook.disabled_reason {
        item.insert("disabled_reason".into(), s(reason.as_str()));
    }
    for (name, at) in [
        (
            "previous_secret_expires_at",
            webhook.previous_secret_expires_at,
        ),
        ("secret_rotated_at", webhook.secret_rotated_at),
        ("failing_since", webhook.failing_since),
    ] {
        if let Some(at) = at {
            item.insert(name.into(), s(sortable(at)));
        }
    }
    item
}

pub(super) fn webhook_from_item(item: &Item) -> Result<Webhook, StoreError> {
    let events = item
        .strings("events")
        .ok_or_else(|| corrupt("webhook events"))?
        .iter()
        .filter_map(|e| EventType::parse(e))
        .collect();
    Ok(Webhook {
        id: Uuid::parse_str(&item.string("id")?).map_err(|_| corrupt("webhook id"))?,
        brand_id: item.string("brand_id")?,
        url: item.string("url")?,
        events,
        secret: item
            .opt_secret("secret")
            .ok_or_else(|| corrupt("missing webhook secret"))?,
        active: item.boolean("active"),
        created_at: item.time("created_at")?,
        previous_secret: item.opt_secret("previous_secret"),
        previous_secret_expires_at: item.opt_time("previous_secret_expires_at")?,
        secret_rotated_at: item.opt_time("secret_rotated_at")?,
        signing_key: item.opt_secret("signing_key"),
        previous_signing_key: item.opt_secret("previous_signing_key"),
        public_key: item.opt_string("public_key"),
        failing_since: item.opt_time("failing_since")?,
        disabled_reason: item
            .opt_string("disabled_reason")
            .map(|reason| DisabledReason::parse(&reason).ok_or_else(|| corrupt("disabled reason")))
            .transpose()?,
    })
}

pub(super) fn creator_item(creator: &Creator) -> Item {
    let mut item = keys::creator_key(&creator.id);
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

pub(super) fn creator_from_item(item: &Item) -> Result<Creator, StoreError> {
    Ok(Creator {
        id: item.string("id")?,
        name: item.string("name")?,
        status: item.opt_string("status"),
        languages: item.strings("languages").unwrap_or_default(),
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

pub(super) fn api_key_item(api_key: &ApiKey) -> Item {
    let mut item = keys::api_key_key(&api_key.key_hash);
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
    item
}

pub(super) fn api_key_from_item(item: &Item) -> Result<ApiKey, StoreError> {
    Ok(ApiKey {
        key_hash: item.string("key_hash")?,
        brand_id: item.string("brand_id")?,
        environment: parse::<KeyEnvironment>(item.string("environment")?, "key environment")?,
        scopes: item
            .strings("scopes")
            .unwrap_or_default()
            .iter()
            .filter_map(|scope| scope.parse::<Scope>().ok())
            .collect(),
        revoked: item.boolean("revoked"),
        expires_at: item.opt_time("expires_at")?,
    })
}
