//! Webhook registration, listing and deletion (decisions.md section 7).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::clock::timestamp;
use crate::domain::Webhook;
use crate::domain::event::EventType;
use crate::domain::webhook::{MAX_WEBHOOKS_PER_BRAND, generate_secret};
use crate::error::{ApiError, ApiResult};
use crate::http::pipeline::Caller;
use crate::webhook_url;

/// Response of `POST /webhooks`: the only time the secret is shown.
#[derive(Debug, Clone, Serialize)]
pub struct WebhookRegistered {
    pub webhook_id: Uuid,
    pub url: String,
    pub events: Vec<EventType>,
    pub secret: String,
    pub active: bool,
}

/// Item of `GET /webhooks`: never the secret.
#[derive(Debug, Clone, Serialize)]
pub struct WebhookListItem {
    pub webhook_id: Uuid,
    pub url: String,
    pub events: Vec<EventType>,
    pub active: bool,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WebhookDeleted {
    pub webhook_id: String,
    pub deleted: bool,
}

/// `POST /webhooks`, checked in the order of decisions.md section 7.
pub async fn register(
    app: &App,
    caller: &Caller,
    body: &Map<String, Value>,
) -> ApiResult<WebhookRegistered> {
    let missing: Vec<&str> = ["url", "events"]
        .into_iter()
        .filter(|field| body.get(*field).is_none_or(Value::is_null))
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::MissingFields(format!(
            "Missing required fields: {}.",
            missing.join(", ")
        )));
    }
    let url = match &body["url"] {
        Value::String(url) => url,
        _ => return Err(ApiError::InvalidUrl("url must be a string.".into())),
    };
    webhook_url::validate(url, app.config.webhook_allow_private_urls)
        .map_err(|rejection| ApiError::InvalidUrl(rejection.to_string()))?;
    let events = parse_events(&body["events"])?;

    let webhook = Webhook {
        id: Uuid::new_v4(),
        brand_id: caller.brand.id.clone(),
        url: url.clone(),
        events,
        secret: generate_secret(),
        active: true,
        created_at: app.clock.now(),
    };
    if !app
        .store
        .create_webhook(&webhook, MAX_WEBHOOKS_PER_BRAND)
        .await?
    {
        return Err(ApiError::InvalidFields(format!(
            "A brand can hold at most {MAX_WEBHOOKS_PER_BRAND} webhooks."
        )));
    }
    Ok(WebhookRegistered {
        webhook_id: webhook.id,
        url: webhook.url,
        events: webhook.events,
        secret: webhook.secret,
        active: webhook.active,
    })
}

/// A non-empty array of known event types; duplicates dropped, order kept.
fn parse_events(value: &Value) -> ApiResult<Vec<EventType>> {
    let invalid = || {
        ApiError::InvalidEvents(
            "events must be a non-empty array of stream.started, stream.ended, stream.error."
                .into(),
        )
    };
    let items = value
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(invalid)?;
    let mut events = Vec::with_capacity(items.len());
    for item in items {
        let event = item
            .as_str()
            .and_then(EventType::parse)
            .ok_or_else(invalid)?;
        if !events.contains(&event) {
            events.push(event);
        }
    }
    Ok(events)
}

/// `GET /webhooks`, newest first.
pub async fn list(app: &App, caller: &Caller) -> ApiResult<Vec<WebhookListItem>> {
    Ok(app
        .store
        .list_webhooks(&caller.brand.id)
        .await?
        .into_iter()
        .map(|w| WebhookListItem {
            webhook_id: w.id,
            url: w.url,
            events: w.events,
            active: w.active,
            created_at: w.created_at,
        })
        .collect())
}

/// `DELETE /webhooks?id=`: idempotent, never 404.
pub async fn delete(app: &App, caller: &Caller, id: Option<&str>) -> ApiResult<WebhookDeleted> {
    let id = id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::MissingFields("Missing required query parameter: id.".into()))?;
    if let Ok(uuid) = Uuid::parse_str(id) {
        app.store.delete_webhook(&caller.brand.id, uuid).await?;
    }
    Ok(WebhookDeleted {
        webhook_id: id.to_owned(),
        deleted: true,
    })
}
