//! The machine-readable description of the API: an OpenAPI 3.1 document, served at
//! `{base_url}/openapi.json`. Its operations come from the endpoint declarations
//! ([`hosting_http::endpoints`]) and its schemas are derived from the Rust types the handlers
//! answer with, carrying the limits the validation enforces. The test suite validates every
//! response it receives against it.

mod builders;
mod show_events;

use schemars::Schema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use self::builders::{Generators, operation};
use chrono::{TimeZone, Utc};
use hosting_app::delivery::retry::JITTER;
use hosting_support::config::DEFAULT_RETRY_DELAYS_SECS;
use uuid::Uuid;

use hosting_domain::destination::{Destination, DestinationStatus, EGRESS_UNAVAILABLE};
use hosting_domain::event::{
    EventType, WebhookDisabledData, WebhookDisabledEvent, WebhookEvent, WebhookEventData,
};
use hosting_domain::recording::{Recording, RecordingFile, RecordingStatus};
use hosting_domain::stream::{EndReason, SOURCE_API, Stream, StreamDetail, StreamStatus};
use hosting_domain::{Plan, Scope};
use hosting_http::endpoints::ENDPOINTS;

fn generators() -> Generators {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.definitions_path = "/components/schemas".into();
        s.meta_schema = None;
    });
    Generators {
        responses: settings
            .clone()
            .for_serialize()
            .with_transform(drop_defaults_of_required as fn(&mut Schema))
            .into_generator(),
        requests: settings
            .for_deserialize()
            .with_transform(optional_means_omitted as fn(&mut Schema))
            .into_generator(),
    }
}

/// The properties of an object schema, with whether each is required.
fn properties(schema: &mut Schema) -> Vec<(bool, &mut Value)> {
    let Some(object) = schema.as_object_mut() else {
        return Vec::new();
    };
    let required: Vec<Value> = object
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match object.get_mut("properties").and_then(Value::as_object_mut) {
        Some(properties) => properties
            .iter_mut()
            .map(|(name, property)| (required.contains(&Value::from(name.as_str())), property))
            .collect(),
        None => Vec::new(),
    }
}

/// A field that is always sent has no default to speak of (serde's `default` on reading
/// stored records is no promise to clients); generators read a default as "may be absent".
fn drop_defaults_of_required(schema: &mut Schema) {
    for (required, property) in properties(schema) {
        if let (true, Some(property)) = (required, property.as_object_mut()) {
            property.remove("default");
        }
    }
}

/// An optional request field is documented as "omit it" rather than "omit it or send null"
/// (both are accepted): generators keep the constraints of a plain type, and drop them from a
/// nullable one.
fn optional_means_omitted(schema: &mut Schema) {
    for (required, property) in properties(schema) {
        if required {
            continue;
        }
        if let Some(types) = property.get_mut("type").and_then(Value::as_array_mut) {
            types.retain(|t| t != "null");
            if let [only] = types.as_slice() {
                property["type"] = only.clone();
            }
        }
    }
}

/// One sample body of each event type (fixed ids and times, so the document never changes
/// between requests).
fn event_examples() -> Value {
    let at = |minute: u32| {
        Utc.with_ymd_and_hms(2026, 3, 14, 18, minute, 0)
            .single()
            .unwrap_or_default()
    };
    let mut examples = Map::new();
    for (n, event_type) in EventType::ALL.into_iter().enumerate() {
        let (status, started_at, ended_at, viewers, end_reason, summary) = match event_type {
            EventType::StreamStarted => (
                StreamStatus::Live,
                Some(at(1)),
                None,
                0,
                None,
                "The agent joined the room: the stream is live (for a test key, at once).",
            ),
            EventType::StreamEnded => (
                StreamStatus::Ended,
                Some(at(1)),
                Some(at(31)),
                184,
                Some(EndReason::DurationElapsed),
                "Ended: by `DELETE`, at the end of its duration, by the host, or with the room; `end_reason` says which.",
            ),
            EventType::DestinationActive => (
                StreamStatus::Live,
                Some(at(1)),
                None,
                12,
                None,
                "A destination's output is live on its channel (for a test key, when the stream starts).",
            ),
            EventType::DestinationFailed => (
                StreamStatus::Live,
                Some(at(1)),
                None,
                57,
                None,
                "A destination failed: LiveKit reported its output failed, or the egress could not be started (`egress_unavailable`). The stream goes on.",
            ),
            EventType::RecordingReady => (
                StreamStatus::Ended,
                Some(at(1)),
                Some(at(31)),
                184,
                Some(EndReason::DurationElapsed),
                "The stream's recording is kept and downloadable: read the stream for a fresh `recording.url` (event bodies carry none).",
            ),
            EventType::RecordingFailed => (
                StreamStatus::Ended,
                Some(at(1)),
                Some(at(31)),
                184,
                Some(EndReason::DurationElapsed),
                "The stream was started with `record: true` but no file was written: the egress failed or could not be started; `recording.error` says why.",
            ),
            EventType::ClipReady => (
                StreamStatus::Ended,
                Some(at(1)),
                Some(at(31)),
                184,
                Some(EndReason::DurationElapsed),
                "A clip was cut and stored: read it for a fresh `url` (event bodies carry none).",
            ),
            EventType::ClipFailed => (
                StreamStatus::Ended,
                Some(at(1)),
                Some(at(31)),
                184,
                Some(EndReason::DurationElapsed),
                "A clip could not be cut (the recording is not an MP4 that can be cut, or kept failing to be read or stored); `clip.error` says why.",
            ),
            // Not about a stream: `webhook.disabled` and the shows' events have their own
            // entries.
            EventType::WebhookTest
            | EventType::WebhookDisabled
            | EventType::ShowStarted
            | EventType::ShowFailed
            | EventType::ShowReminder => continue,
            EventType::StreamError => (
                StreamStatus::Error,
                None,
                Some(at(5)),
                0,
                Some(EndReason::PreparingTimeout),
                "Failed: the launch failed, the host never joined within the preparing timeout, or the stream failed while live; `end_reason` says which.",
            ),
        };
        let stream = Stream {
            id: Uuid::from_u128(0x0f8e2a51_7c3b_4d6e_9a10_2b3c4d5e6f70),
            brand_id: "brand_demo".into(),
            status,
            platform: Some("tiktok".into()),
            vertical: "live-commerce".into(),
            creator_id: Some("avt_ava000000001".into()),
            product_name: "Glow Serum".into(),
            source: SOURCE_API.into(),
            room_name: Some("stream-0f8e2a51".into()),
            viewer_count: viewers,
            test: false,
            created_at: at(0),
            started_at,
            ended_at,
            duration_minutes: Some(30),
            script: None,
            end_reason,
            dispatches: 0,
            next_dispatch_at: None,
            agents: Vec::new(),
            host_check_at: None,
            host_lost_at: None,
            reconnect_until: None,
            revision: 0,
            deadline: None,
            destinations: Vec::new(),
            egress: Default::default(),
            stream_keys: Default::default(),
        };
        let destination = match event_type {
            EventType::DestinationActive | EventType::DestinationFailed => {
                let failed = event_type == EventType::DestinationFailed;
                Some(Destination {
                    destination_id: format!("dst_{:032x}", 0x5e1f_u128),
                    platform: "tiktok".into(),
                    ingest_url: "rtmps://push.example-live.com/live".into(),
                    stream_key_last4: "9f3c".into(),
                    status: if failed {
                        DestinationStatus::Failed
                    } else {
                        DestinationStatus::Active
                    },
                    error: failed.then(|| EGRESS_UNAVAILABLE.to_owned()),
                    started_at: (!failed).then(|| at(2)),
                    ended_at: failed.then(|| at(3)),
                })
            }
            _ => None,
        };
        let mut stream = stream;
        stream.destinations.extend(destination.clone());
        if let Some(file) = example_recording_file(event_type, at(32)) {
            stream.egress.recording = Some(Recording { files: vec![file] });
        }
        let event = WebhookEvent {
            id: format!("evt_{:032x}", n + 1),
            event_type,
            created_at: destination
                .as_ref()
                .and_then(|d| d.ended_at.or(d.started_at))
                .or(ended_at)
                .or(started_at)
                .unwrap_or(at(5)),
            api_version: "v1",
            test: false,
            data: WebhookEventData {
                stream: StreamDetail::new(&stream, stream.creator_id.clone()),
                destination,
                clip: example_clip(event_type, stream.id, at(33)),
            },
        };
        examples.insert(
            event_type.as_str().into(),
            json!({ "summary": summary, "value": event }),
        );
    }
    Value::Object(examples)
}

/// The clip a clip's event shows.
fn example_clip(
    event_type: EventType,
    stream_id: Uuid,
    at: chrono::DateTime<Utc>,
) -> Option<hosting_domain::clip::ClipView> {
    use hosting_domain::clip::{ClipStatus, ClipView};
    let ready = match event_type {
        EventType::ClipReady => true,
        EventType::ClipFailed => false,
        _ => return None,
    };
    Some(ClipView {
        clip_id: format!("clp_{:032x}", 0xc11b_u128),
        stream_id,
        title: Some("The serum on camera".into()),
        start_seconds: 600.0,
        end_seconds: 630.0,
        status: if ready {
            ClipStatus::Ready
        } else {
            ClipStatus::Failed
        },
        duration_seconds: ready.then_some(31.2),
        size_bytes: ready.then_some(7_340_032),
        url: None,
        url_expires_at: None,
        error: (!ready)
            .then(|| "the recording has no video keyframe at or before the clip's start".into()),
        created_at: at,
    })
}

/// The recording's file an event about it shows.
fn example_recording_file(
    event_type: EventType,
    at: chrono::DateTime<Utc>,
) -> Option<RecordingFile> {
    let ready = match event_type {
        EventType::RecordingReady | EventType::ClipReady | EventType::ClipFailed => true,
        EventType::RecordingFailed => false,
        _ => return None,
    };
    Some(RecordingFile {
        key: String::new(),
        status: if ready {
            RecordingStatus::Ready
        } else {
            RecordingStatus::Failed
        },
        egress_id: None,
        duration_seconds: ready.then_some(1_800),
        size_bytes: ready.then_some(412_318_720),
        error: (!ready).then(|| EGRESS_UNAVAILABLE.to_owned()),
        ready_at: ready.then_some(at),
        lost_reads: 0,
    })
}

/// `90` -> `90 s`, `300` -> `5 min`, `7200` -> `2 h`.
fn human_delay(secs: u64) -> String {
    match secs {
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// `webhook-signature`, as every delivery carries it.
const SIGNATURE_HEADER: &str = "Standard Webhooks: `v1,<base64 HMAC-SHA256 of \"<id>.<t>.<raw body>\" keyed with the base64-decoded secret after whsec_>`, then `v1a,<base64 Ed25519 signature of \"<id>.<t>.<raw body>\">` verified with the webhook's `public_key` (the 32 bytes after whpk_), space separated. During a rotation's overlap, one of each per secret and key pair.";

/// The headers every delivery carries, as the webhook entries list them: the event type's and
/// Stripe's signature's descriptions vary.
fn delivery_headers(event_type: &str, service_signature: &str) -> Value {
    let header = |name: &str, description: &str| json!({ "name": name, "in": "header", "required": true, "description": description, "schema": { "type": "string" } });
    json!([
        header(
            "X-Service-Event-Id",
            "The event id (same on every attempt)."
        ),
        header("X-Service-Event-Type", event_type),
        header("X-Service-Signature", service_signature),
        header("webhook-id", "Standard Webhooks: the event id."),
        header(
            "webhook-timestamp",
            "Standard Webhooks: `t`, the time of this attempt."
        ),
        header("webhook-signature", SIGNATURE_HEADER),
    ])
}

/// A sample `webhook.disabled` body (fixed ids and times).
fn webhook_disabled_example() -> Value {
    let at = |day: u32, hour: u32| {
        Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0)
            .single()
            .unwrap_or_default()
    };
    let webhook = hosting_domain::webhook::WebhookDetail {
        webhook_id: Uuid::from_u128(0x4b1d_2c3e_4f50_6172_8394_a5b6_c7d8_e9f0),
        url: "https://hooks.example.com/live".into(),
        events: vec![EventType::StreamStarted, EventType::StreamEnded],
        active: false,
        created_at: at(1, 9),
        secret_rotated_at: None,
        public_key: Some("whpk_KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=".into()),
        failing_since: Some(at(9, 18)),
        disabled_reason: Some(hosting_domain::webhook::DisabledReason::Failing),
    };
    let event = WebhookDisabledEvent {
        id: format!("evt_{:032x}", 0xd15a_b1ed_u128),
        event_type: EventType::WebhookDisabled,
        created_at: at(14, 18),
        api_version: "v1",
        test: false,
        data: WebhookDisabledData { webhook },
    };
    serde_json::to_value(event).unwrap_or_default()
}

fn webhooks(generators: &mut Generators) -> Value {
    let retries: Vec<String> = DEFAULT_RETRY_DELAYS_SECS
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .map(human_delay)
        .collect();
    let event = generators
        .responses
        .subschema_for::<WebhookEvent>()
        .to_value();
    let disabled_event = generators
        .responses
        .subschema_for::<WebhookDisabledEvent>()
        .to_value();
    let show_event = generators
        .responses
        .subschema_for::<hosting_domain::event::ShowEvent>()
        .to_value();
    json!({
        "streamEvent": { "post": {
            "summary": "A stream lifecycle event",
            "description": format!("POSTed to each active webhook that lists the event type. At-least-once: up to {} retries by default ({}, each +-{}%), then dead-lettered. Any 2xx within 10 s is success; redirects are failures; 410 Gone deactivates the webhook. Reject signatures older than 5 minutes.", retries.len(), retries.join(", "), (JITTER * 100.0).round()),
            "parameters": delivery_headers("The event type.", "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the whole whsec_ secret>` (Stripe's scheme)."),
            "requestBody": { "required": true, "content": { "application/json": { "schema": event, "examples": event_examples() } } },
            "responses": { "2XX": { "description": "Received." }, "410": { "description": "Gone: the webhook is disabled (`disabled_reason: gone`)." } },
        }},
        "webhookDisabled": { "post": {
            "summary": "One of the brand's webhooks was disabled",
            "description": "`webhook.disabled`: the service disabled another of the brand's webhooks, because every attempt failed for `WEBHOOK_DISABLE_AFTER_SECS` (default 5 days; `disabled_reason: failing`) or its receiver answered `410 Gone` (`gone`). Sent to the brand's other active webhooks that list it, with the same headers, signatures and retries as every event. `data.webhook` is the webhook's detail: never a secret or a private key. Enable it again with `PATCH /webhooks/{id}` and `active: true`, then recover what it missed with `redeliver` and `since`.",
            "parameters": delivery_headers("`webhook.disabled`.", "As for stream events."),
            "requestBody": { "required": true, "content": { "application/json": { "schema": disabled_event, "examples": { "webhook.disabled": { "summary": "Disabled after 5 days of failures.", "value": webhook_disabled_example() } } } } },
            "responses": { "2XX": { "description": "Received." } },
        }},
        "showEvent": { "post": {
            "summary": "A scheduled show's event",
            "description": "`show.reminder`, `show.started` and `show.failed` (docs/shows.md), to each active webhook that lists the type, with the same headers, signatures and retries as every event. `data.show` is the show right after the change; `show.started` also carries `data.stream`.",
            "parameters": delivery_headers("`show.reminder`, `show.started` or `show.failed`.", "As for stream events."),
            "requestBody": { "required": true, "content": { "application/json": { "schema": show_event, "examples": show_events::show_event_examples() } } },
            "responses": { "2XX": { "description": "Received." } },
        }},
    })
}

/// The OpenAPI document for an API served at `base_url` (ending in `/api/v1`).
pub fn document(base_url: &str) -> Value {
    let mut generators = generators();
    let mut paths = Map::new();
    for endpoint in ENDPOINTS.iter() {
        let entry = paths
            .entry(endpoint.path.to_owned())
            .or_insert_with(|| json!({}));
        entry[endpoint.method.as_str().to_lowercase()] = operation(endpoint, &mut generators);
    }
    let webhooks = webhooks(&mut generators);
    let mut tags: Vec<Value> = Vec::new();
    for endpoint in ENDPOINTS.iter() {
        if !tags.iter().any(|t| t["name"] == endpoint.tag) {
            tags.push(json!({ "name": endpoint.tag }));
        }
    }
    // Request and response types share only enumerations, which read the same both ways.
    let mut schemas = generators.requests.take_definitions(true);
    schemas.extend(generators.responses.take_definitions(true));
    let plans: Vec<&str> = [
        Plan::Free,
        Plan::Starter,
        Plan::Growth,
        Plan::Scale,
        Plan::Enterprise,
    ]
    .iter()
    .map(|p| p.as_str())
    .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Live Stream Hosting API",
            "version": "v1",
            "description": format!("AI-hosted live streams for live-commerce brands. Keys: `svc_live_` (real dispatch and billing; plan {} or above) and `svc_test_` (simulated, free). Every error is `{{\"error\": {{\"code\", \"message\"}}}}`; an unknown path or method answers 404 `not_found`. Plans in order: {}.", plans[2], plans.join(", ")),
        },
        "servers": [{ "url": base_url }],
        "tags": tags,
        "paths": paths,
        "webhooks": webhooks,
        "components": {
            "securitySchemes": { "bearerAuth": {
                "type": "http", "scheme": "bearer",
                "description": format!("`Authorization: Bearer <key>`. Each operation lists the scope it needs: {}.",
                    Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
            }},
            "schemas": schemas,
        },
    })
}
