//! Webhook registration, listing and deletion (decisions.md section 7).

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::domain::Caller;
use crate::domain::Webhook;
use crate::domain::event::EventType;
use crate::domain::idempotency::{Endpoint, StoredAnswer};
use crate::domain::webhook::{
    MAX_WEBHOOKS_PER_BRAND, RegisterWebhookRequest, WebhookDeleted, WebhookList, WebhookListItem,
    WebhookRegistered, generate_secret,
};
use crate::error::{ApiError, ApiResult};
use crate::ports::CreateWebhookOutcome;
use crate::service::idempotency::{self, Answer, Begin, Held};
use crate::webhook_url;

/// `POST /webhooks`, checked in the order of decisions.md section 7, with its
/// `Idempotency-Key` when one was sent (extensions.md E1): checked with the body, then looked
/// up before the webhook is created. The answer is bound with the webhook in one step, so a
/// replay shows the same secret.
pub async fn register(
    app: &App,
    caller: &Caller,
    body: &Map<String, Value>,
    key: Option<&[u8]>,
) -> ApiResult<Answer> {
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
    let request = RegisterWebhookRequest {
        url: url.to_owned(),
        events: parse_events(&body["events"])?,
    };
    let key = idempotency::parse_key(key)?;
    let held = match idempotency::begin(app, caller, Endpoint::RegisterWebhook, key, body).await? {
        Begin::Run(held) => held,
        Begin::Replay(answer) => return Ok(answer),
        // The answer is bound with the webhook: a bound key always has one.
        Begin::Rebuild { .. } => return Err(ApiError::IdempotencyKeyInUse),
    };
    let outcome = create(app, caller, request, held.as_ref()).await;
    idempotency::finish(app, held, &outcome).await;
    outcome
}

async fn create(
    app: &App,
    caller: &Caller,
    request: RegisterWebhookRequest,
    held: Option<&Held>,
) -> ApiResult<Answer> {
    let webhook = Webhook {
        id: Uuid::new_v4(),
        brand_id: caller.brand.id.clone(),
        url: request.url,
        events: request.events,
        secret: generate_secret(),
        active: true,
        created_at: app.clock.now(),
    };
    let registered = WebhookRegistered {
        webhook_id: webhook.id,
        url: webhook.url.clone(),
        events: webhook.events.clone(),
        secret: webhook.secret.clone(),
        active: webhook.active,
    };
    let answer = StoredAnswer {
        status: 201,
        body: serde_json::to_string(&registered).unwrap_or_default(),
        location: None,
    };
    let binding = held.map(|held| held.binding(app, Some(answer.clone())));
    match app
        .store
        .create_webhook(&webhook, MAX_WEBHOOKS_PER_BRAND, binding.as_ref())
        .await?
    {
        CreateWebhookOutcome::Created => Ok(Answer::fresh(answer)),
        CreateWebhookOutcome::Limit => Err(ApiError::InvalidFields(format!(
            "A brand can hold at most {MAX_WEBHOOKS_PER_BRAND} webhooks."
        ))),
        CreateWebhookOutcome::KeyLost => Err(ApiError::IdempotencyKeyInUse),
    }
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
pub async fn list(app: &App, caller: &Caller) -> ApiResult<WebhookList> {
    let webhooks = app.store.list_webhooks(&caller.brand.id).await?;
    Ok(WebhookList {
        webhooks: webhooks.into_iter().map(WebhookListItem::from).collect(),
    })
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
