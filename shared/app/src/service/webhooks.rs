//! Webhooks: registration, listing and deletion, and the operations on one webhook
//! (docs/webhooks.md, "Registration", "Listing and deleting" and "Webhook operations"): reading,
//! changing and rotating its secret.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::delivery::client::AttemptOutcome;
use crate::delivery::{Deliverer, worker};
use crate::service::idempotency::{self, Answer, Begin, Held};
use hosting_domain::Caller;
use hosting_domain::Webhook;
use hosting_domain::clock::format_timestamp;
use hosting_domain::delivery_log::{
    self, AttemptFilter, AttemptStatus, DeliveryAttempt, DeliveryLog, DeliveryLogEntry, LogCursor,
    MAX_REDELIVERIES_PER_CALL, Redelivered, TestDelivery,
};
use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::event::{EventType, new_event_id};
use hosting_domain::idempotency::{Endpoint, StoredAnswer};
use hosting_domain::ports::{CreateWebhookOutcome, Delivery, WebhookUpdate};
use hosting_domain::sealed::SecretScope;
use hosting_domain::validation::present;
use hosting_domain::webhook::{
    MAX_SECRET_OVERLAP_SECS, MAX_WEBHOOKS_PER_BRAND, RegisterWebhookRequest, SecretRotated,
    SecretRotation, WebhookChanges, WebhookDeleted, WebhookDetail, WebhookList, WebhookListItem,
    WebhookRegistered, generate_secret, public_key,
};
use hosting_domain::webhook_url;

use crate::delivery::signing::generate_signing_key;

/// `POST /webhooks`, checked in this order: missing fields, `url`, `events`
/// (docs/request-pipeline.md, "POST /webhooks"), with its `Idempotency-Key` when one was sent
/// (docs/idempotency.md): checked with the body, then looked up before the webhook is created. The
/// answer is bound with the webhook in one step, so a replay shows the same secret.
pub async fn register(
    app: &App,
    caller: &Caller,
    body: &Map<String, Value>,
    key: Option<&[u8]>,
) -> ApiResult<Answer> {
    let missing: Vec<&str> = ["url", "events"]
        .into_iter()
        .filter(|field| present(body, field).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::MissingFields(format!(
            "Missing required fields: {}.",
            missing.join(", ")
        )));
    }
    let request = RegisterWebhookRequest {
        url: parse_url(app, &body["url"])?,
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
    let id = Uuid::new_v4();
    let secret = generate_secret();
    let signing_key = generate_signing_key();
    let public_key = public_key(&signing_key).unwrap_or_default();
    let secrets = app.secrets();
    let webhook = Webhook {
        id,
        brand_id: caller.brand.id.clone(),
        url: request.url,
        events: request.events,
        secret: secrets
            .seal(&SecretScope::WebhookSecret(&id), &secret)
            .await?,
        active: true,
        created_at: app.clock.now(),
        previous_secret: None,
        previous_secret_expires_at: None,
        secret_rotated_at: None,
        signing_key: Some(
            secrets
                .seal(&SecretScope::WebhookSigningKey(&id), &signing_key)
                .await?,
        ),
        previous_signing_key: None,
        public_key: Some(public_key.clone()),
        failing_since: None,
        disabled_reason: None,
    };
    let registered = WebhookRegistered {
        webhook_id: webhook.id,
        url: webhook.url.clone(),
        events: webhook.events.clone(),
        secret,
        active: webhook.active,
        public_key,
    };
    let answer = StoredAnswer {
        status: 201,
        body: serde_json::to_string(&registered).unwrap_or_default(),
        location: None,
        sealed_body: None,
    };
    // The answer shows the secret: its key's record keeps it sealed.
    let binding = match held {
        Some(held) => Some(held.binding(app, Some(held.sealed(app, &answer).await?))),
        None => None,
    };
    match app
        .webhooks()
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

/// A URL by the registration rules.
fn parse_url(app: &App, value: &Value) -> ApiResult<String> {
    let Value::String(url) = value else {
        return Err(ApiError::InvalidUrl("url must be a string.".into()));
    };
    webhook_url::validate(url, app.config.webhook_allow_private_urls)
        .map_err(|rejection| ApiError::InvalidUrl(rejection.to_string()))?;
    Ok(url.clone())
}

/// A non-empty array of known event types; duplicates dropped, order kept.
fn parse_events(value: &Value) -> ApiResult<Vec<EventType>> {
    // The message names the list that decides, so the two cannot drift apart.
    let invalid = || {
        let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        ApiError::InvalidEvents(format!(
            "events must be a non-empty array of {}.",
            known.join(", ")
        ))
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
    let webhooks = app.webhooks().list_webhooks(&caller.brand.id).await?;
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
        app.webhooks()
            .delete_webhook(&caller.brand.id, uuid)
            .await?;
    }
    Ok(WebhookDeleted {
        webhook_id: id.to_owned(),
        deleted: true,
    })
}

/// `GET /webhooks/{id}`.
pub async fn get(app: &App, caller: &Caller, id: Uuid) -> ApiResult<WebhookDetail> {
    match app.webhooks().get_webhook(&caller.brand.id, id).await? {
        Some(webhook) => Ok(webhook.into()),
        None => Err(ApiError::NotFound),
    }
}

/// `PATCH /webhooks/{id}`: any of `url`, `events`, `active`, each checked as at registration,
/// in that order; unknown fields ignored. `active: true` re-enables a webhook a `410` turned
/// off.
pub async fn update(
    app: &App,
    caller: &Caller,
    id: Uuid,
    body: &Map<String, Value>,
) -> ApiResult<WebhookDetail> {
    let (url, events, active) = (
        present(body, "url"),
        present(body, "events"),
        present(body, "active"),
    );
    if url.is_none() && events.is_none() && active.is_none() {
        return Err(ApiError::MissingFields(
            "Send at least one of: url, events, active.".into(),
        ));
    }
    let changes = WebhookChanges {
        url: url.map(|url| parse_url(app, url)).transpose()?,
        events: events.map(parse_events).transpose()?,
        active: active
            .map(|active| {
                active
                    .as_bool()
                    .ok_or_else(|| ApiError::InvalidFields("active must be a boolean.".into()))
            })
            .transpose()?,
        rotation: None,
    };
    match app
        .webhooks()
        .update_webhook(&caller.brand.id, id, &changes)
        .await?
    {
        WebhookUpdate::Updated(webhook) => Ok((*webhook).into()),
        WebhookUpdate::Absent | WebhookUpdate::SecretChanged => Err(ApiError::NotFound),
    }
}

/// `POST /webhooks/{id}/rotate-secret`: a new secret; the replaced one keeps signing for
/// `expire_previous_in_seconds` (default and most: a day), and an older one stops.
pub async fn rotate_secret(
    app: &App,
    caller: &Caller,
    id: Uuid,
    body: Option<&Map<String, Value>>,
) -> ApiResult<SecretRotated> {
    let overlap = match body.and_then(|b| b.get("expire_previous_in_seconds")) {
        None => MAX_SECRET_OVERLAP_SECS,
        Some(value) => value
            .as_u64()
            .and_then(|secs| u32::try_from(secs).ok())
            .filter(|secs| *secs <= MAX_SECRET_OVERLAP_SECS)
            .ok_or_else(|| {
                ApiError::InvalidFields(format!(
                    "expire_previous_in_seconds must be a whole number from 0 to {MAX_SECRET_OVERLAP_SECS}."
                ))
            })?,
    };
    let overlap = TimeDelta::seconds(i64::from(overlap));
    // A rotation applies only to the secret it read; one racing it wins, and this one
    // rotates again from the secret that one left.
    for _ in 0..5 {
        let Some(webhook) = app.webhooks().get_webhook(&caller.brand.id, id).await? else {
            return Err(ApiError::NotFound);
        };
        let secret = generate_secret();
        let signing_key = generate_signing_key();
        let now = app.clock.now();
        let secrets = app.secrets();
        let secret_scope = SecretScope::WebhookSecret(&id);
        let key_scope = SecretScope::WebhookSigningKey(&id);
        // A secret or key stored plain before sealing is sealed as it moves to `previous`.
        let previous_signing_key = match &webhook.signing_key {
            Some(key) => Some(secrets.sealed(&key_scope, key).await?),
            None => None,
        };
        let rotation = SecretRotation {
            secret: secrets.seal(&secret_scope, &secret).await?,
            signing_key: secrets.seal(&key_scope, &signing_key).await?,
            public_key: public_key(&signing_key).unwrap_or_default(),
            previous: secrets.sealed(&secret_scope, &webhook.secret).await?,
            replaced: webhook.secret,
            previous_signing_key,
            replaced_expires_at: now + overlap,
            rotated_at: now,
        };
        let changes = WebhookChanges {
            rotation: Some(rotation.clone()),
            ..WebhookChanges::default()
        };
        match app
            .webhooks()
            .update_webhook(&caller.brand.id, id, &changes)
            .await?
        {
            WebhookUpdate::Updated(_) => {
                return Ok(SecretRotated {
                    public_key: rotation.public_key,
                    webhook_id: id,
                    secret,
                    previous_secret_expires_at: rotation.replaced_expires_at,
                });
            }
            WebhookUpdate::Absent => return Err(ApiError::NotFound),
            WebhookUpdate::SecretChanged => continue,
        }
    }
    Err(ApiError::Db(StoreError::Backend(
        "secret rotations kept racing".into(),
    )))
}

/// `POST /webhooks/{id}/test`: one signed `webhook.test` event sent now, whatever the
/// webhook's state and events, without retry (a `410` here deactivates nothing: it is a
/// probe); recorded in the delivery log.
pub async fn send_test(app: &App, caller: &Caller, id: Uuid) -> ApiResult<TestDelivery> {
    let Some(webhook) = app.webhooks().get_webhook(&caller.brand.id, id).await? else {
        return Err(ApiError::NotFound);
    };
    let event_id = new_event_id();
    let body = serde_json::json!({
        "id": event_id,
        "type": EventType::WebhookTest.as_str(),
        "created_at": format_timestamp(app.clock.now()),
        "api_version": "v1",
        "test": true,
        "data": { "webhook_id": webhook.id },
    });
    let delivery = Delivery {
        event_id: event_id.clone(),
        event_type: EventType::WebhookTest,
        brand_id: webhook.brand_id.clone(),
        webhook_id: webhook.id,
        attempt: 1,
        body: body.to_string(),
    };
    let deliverer = Deliverer::new(
        app.config.webhook_timeout,
        app.config.webhook_allow_private_urls,
    )
    .map_err(|err| ApiError::Db(StoreError::Backend(err.to_string())))?;
    let (outcome, attempted_at, duration_ms) =
        worker::attempt(app, &deliverer, &webhook, &delivery).await?;
    worker::record(app, &delivery, &outcome, attempted_at, duration_ms, None).await;
    Ok(TestDelivery {
        event_id,
        delivered: matches!(outcome, AttemptOutcome::Delivered { .. }),
        status_code: outcome.response_status(),
        duration_ms,
        error: outcome.error(),
    })
}

/// `GET /webhooks/{id}/deliveries`: a page of the log, newest first, by cursor; `status` and
/// `event_id` filter, and an unknown `status` matches nothing. A page reads about `limit`
/// records of the log whatever its size (docs/webhooks.md, "Delivery log").
pub async fn deliveries(
    app: &App,
    caller: &Caller,
    id: Uuid,
    query: DeliveriesQuery<'_>,
) -> ApiResult<DeliveryLog> {
    let limit = query.limit;
    // The key that signs cursors is read once per instance, alongside the webhook.
    let (webhook, cursor_key) = tokio::join!(
        app.webhooks().get_webhook(&caller.brand.id, id),
        app.cursor_key()
    );
    if webhook?.is_none() {
        return Err(ApiError::NotFound);
    }
    let cursor_key = || -> ApiResult<&[u8]> {
        match &cursor_key {
            Ok(key) => Ok(key),
            Err(err) => Err(ApiError::Db(StoreError::Backend(format!(
                "the cursor key is unreadable: {err}"
            )))),
        }
    };
    let cursor = query
        .cursor
        .map(|raw| {
            LogCursor::decode(
                raw,
                cursor_key()?,
                id,
                query.status.unwrap_or_default(),
                query.event_id.unwrap_or_default(),
            )
        })
        .transpose()?;
    let matches_nothing = query
        .event_id
        .is_some_and(|event_id| !delivery_log::is_event_id_shape(event_id));
    let status = match query.status.map(AttemptStatus::parse) {
        _ if matches_nothing => {
            return Ok(DeliveryLog {
                deliveries: Vec::new(),
                limit,
                next_cursor: None,
            });
        }
        Some(None) => {
            return Ok(DeliveryLog {
                deliveries: Vec::new(),
                limit,
                next_cursor: None,
            });
        }
        Some(status) => status,
        None => None,
    };
    let filter = AttemptFilter {
        status,
        event_id: query.event_id.map(str::to_owned),
    };
    let since = app.clock.now() - delivery_log::RETENTION;
    let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
    // One more than the page, so the last page says it is the last.
    let page = app.delivery_log().delivery_attempts(
        &caller.brand.id,
        id,
        &filter,
        since,
        cursor.as_ref().map(|c| c.after.as_str()),
        wanted + 1,
    );
    // One event's attempts share its body: on a page filtered by event, one more read, beside
    // the page's (no further round trip).
    let body = async {
        match &filter.event_id {
            Some(event_id) => {
                app.delivery_log()
                    .delivered_event(&caller.brand.id, id, event_id, since)
                    .await
            }
            None => Ok(None),
        }
    };
    let (attempts, body) = tokio::join!(page, body);
    let mut attempts = attempts?;
    let body = body?.and_then(|event| serde_json::value::RawValue::from_string(event.body).ok());
    let next_cursor = if attempts.len() > wanted {
        attempts.truncate(wanted);
        let cursor = LogCursor {
            webhook_id: id,
            status: query.status.unwrap_or_default().to_owned(),
            event_id: query.event_id.unwrap_or_default().to_owned(),
            after: attempts
                .last()
                .map(DeliveryAttempt::position)
                .unwrap_or_default(),
        };
        Some(cursor.encode(cursor_key()?))
    } else {
        None
    };
    let mut deliveries: Vec<DeliveryLogEntry> =
        attempts.iter().map(DeliveryLogEntry::from).collect();
    for entry in &mut deliveries {
        entry.body.clone_from(&body);
    }
    Ok(DeliveryLog {
        deliveries,
        limit,
        next_cursor,
    })
}

/// The query of `GET /webhooks/{id}/deliveries`.
#[derive(Debug, Clone, Copy)]
pub struct DeliveriesQuery<'a> {
    /// Already clamped to 1-100.
    pub limit: u64,
    pub cursor: Option<&'a str>,
    pub status: Option<&'a str>,
    pub event_id: Option<&'a str>,
}

/// `POST /webhooks/{id}/redeliver`: one event again (`event_id`), or the failed deliveries of
/// events since a time (`since`), at most [`MAX_REDELIVERIES_PER_CALL`] a call, each as a new
/// delivery with its own retries. A failed delivery is taken from the store before it is
/// queued, so a repeated call never queues it twice.
pub async fn redeliver(
    app: &App,
    caller: &Caller,
    id: Uuid,
    body: &Map<String, Value>,
) -> ApiResult<Redelivered> {
    let now = app.clock.now();
    let horizon = now - delivery_log::RETENTION;
    enum Which {
        Event(String),
        Since(DateTime<Utc>),
    }
    let which = match (present(body, "event_id"), present(body, "since")) {
        (None, None) => {
            return Err(ApiError::MissingFields(
                "Send one of: event_id, since.".into(),
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidFields(
                "Send event_id or since, not both.".into(),
            ));
        }
        (Some(event_id), None) => Which::Event(
            event_id
                .as_str()
                .ok_or_else(|| ApiError::InvalidFields("event_id must be a string.".into()))?
                .to_owned(),
        ),
        (None, Some(since)) => {
            let since = since
                .as_str()
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                .map(|t| t.with_timezone(&Utc))
                .filter(|since| *since >= horizon)
                .ok_or_else(|| {
                    ApiError::InvalidFields(
                        "since must be a date-time within the last 30 days.".into(),
                    )
                })?;
            Which::Since(since)
        }
    };
    // An id no event can have is not found without a read: it never reaches the store as a
    // key (DynamoDB refuses keys over 2,048 bytes).
    if matches!(&which, Which::Event(event_id) if !delivery_log::is_event_id_shape(event_id)) {
        return Err(ApiError::NotFound);
    }
    if app
        .webhooks()
        .get_webhook(&caller.brand.id, id)
        .await?
        .is_none()
    {
        return Err(ApiError::NotFound);
    }
    let (events, has_more) = match which {
        Which::Event(event_id) => {
            let event = app
                .delivery_log()
                .delivered_event(&caller.brand.id, id, &event_id, horizon)
                .await?
                .ok_or(ApiError::NotFound)?;
            (vec![event], false)
        }
        Which::Since(since) => {
            app.delivery_log()
                .take_failed_deliveries(&caller.brand.id, id, since, now, MAX_REDELIVERIES_PER_CALL)
                .await?
        }
    };
    let deliveries = events
        .iter()
        .map(|event| Delivery {
            event_id: event.event_id.clone(),
            event_type: event.event_type,
            brand_id: event.brand_id.clone(),
            webhook_id: event.webhook_id,
            attempt: 1,
            body: event.body.clone(),
        })
        .collect();
    // Through the brand's fair share: parked when it holds every delivery slot.
    if let Err(err) =
        crate::delivery::parking::queue_or_park(app, &caller.brand.id, deliveries).await
    {
        // Some may have been queued: a later call may send those twice, but none is lost.
        if let Err(restore) = app.delivery_log().restore_failed_deliveries(&events).await {
            tracing::error!(error = %restore, "failed deliveries not put back after a queue error");
        }
        return Err(err.into());
    }
    // Queued: pending redeliveries, no longer failed deliveries (an event redelivered by id
    // included).
    app.delivery_log().settle_failed_deliveries(&events).await?;
    Ok(Redelivered {
        webhook_id: id,
        queued: events.len() as u64,
        has_more,
    })
}
