//! Safe retries of creates (docs/idempotency.md): what a request that brings an
//! `Idempotency-Key` may do, and what its answer binds. The creates call [`begin`] after their
//! body checks, bind the key in the same atomic step as what they create, and call [`finish`].

use std::time::Duration;

use chrono::TimeDelta;
use serde_json::{Map, Value};

use crate::app::App;
use hosting_domain::Caller;
use hosting_domain::error::{ApiError, ApiResult};
use hosting_domain::idempotency::{self, Endpoint, StoredAnswer};
use hosting_domain::ports::{IdempotencyBinding, KeyHold};
use hosting_domain::sealed::SecretScope;
use hosting_support::admission;

/// How long a request holds its key before another may take it over, when it created nothing:
/// longer than any create takes (a live start's launch is bounded by `LAUNCH_TIMEOUT_SECS`).
fn hold_for(app: &App) -> Duration {
    app.config.launch_timeout + Duration::from_secs(40)
}

/// An answer of a create, as sent and as replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stored: StoredAnswer,
    /// `Idempotent-Replayed: true`.
    pub replayed: bool,
}

impl Answer {
    pub fn fresh(stored: StoredAnswer) -> Self {
        Self {
            stored,
            replayed: false,
        }
    }
}

/// A key this request holds.
#[derive(Debug, Clone)]
pub struct Held {
    key_id: String,
    token: String,
}

impl Held {
    /// The binding the create writes with what it creates; `answer` when already known.
    pub fn binding(&self, app: &App, answer: Option<StoredAnswer>) -> IdempotencyBinding {
        IdempotencyBinding {
            key_id: self.key_id.clone(),
            token: self.token.clone(),
            answer,
            at: app.clock.now(),
        }
    }

    /// `answer` with its body sealed to this key (docs/security.md, "Secrets at rest"): for an
    /// answer that shows a secret.
    pub async fn sealed(&self, app: &App, answer: &StoredAnswer) -> ApiResult<StoredAnswer> {
        let scope = SecretScope::IdempotentAnswer(&self.key_id);
        Ok(StoredAnswer {
            body: String::new(),
            sealed_body: Some(app.secrets().seal(&scope, &answer.body).await?),
            ..answer.clone()
        })
    }
}

/// What a request may do about its key.
pub enum Begin {
    /// No key, or a fresh one now held: run the create.
    Run(Option<Held>),
    /// The first answer again.
    Replay(Answer),
    /// Bound to `resource_id` with no answer recorded: the endpoint rebuilds it.
    Rebuild { key_id: String, resource_id: String },
}

/// The header's value, checked with the body: 1 to 255 visible ASCII characters.
pub fn parse_key(raw: Option<&[u8]>) -> ApiResult<Option<&str>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if !idempotency::is_valid_key(raw) {
        return Err(ApiError::InvalidFields(format!(
            "Idempotency-Key must be 1 to {} visible ASCII characters.",
            idempotency::MAX_KEY_CHARS
        )));
    }
    Ok(std::str::from_utf8(raw).ok())
}

/// Looks the key up for this request: held now, or in use, or bound (replay, or mismatch).
pub async fn begin(
    app: &App,
    caller: &Caller,
    endpoint: Endpoint,
    key: Option<&str>,
    body: &Map<String, Value>,
) -> ApiResult<Begin> {
    let Some(key) = key else {
        return Ok(Begin::Run(None));
    };
    // Holding the key is a write: not before the request is admitted.
    admission::admitted().await;
    let key_id = idempotency::key_id(&caller.brand.id, caller.environment, endpoint, key);
    let fingerprint = idempotency::fingerprint(body);
    let now = app.clock.now();
    let hold_until = now + TimeDelta::from_std(hold_for(app)).unwrap_or(TimeDelta::MAX);
    match app
        .idempotency()
        .hold_idempotency_key(&key_id, &fingerprint, now, hold_until)
        .await?
    {
        KeyHold::Acquired { token } => Ok(Begin::Run(Some(Held { key_id, token }))),
        KeyHold::Held { fingerprint: held } if held == fingerprint => {
            Err(ApiError::IdempotencyKeyInUse)
        }
        KeyHold::Bound {
            fingerprint: bound,
            resource_id,
            answer,
        } if bound == fingerprint => Ok(match answer {
            Some(stored) => Begin::Replay(Answer {
                stored: opened(app, &key_id, stored).await?,
                replayed: true,
            }),
            None => Begin::Rebuild {
                key_id,
                resource_id,
            },
        }),
        KeyHold::Held { .. } | KeyHold::Bound { .. } => Err(ApiError::IdempotencyKeyMismatch),
    }
}

/// A recorded answer as sent: its body opened when it was sealed.
async fn opened(app: &App, key_id: &str, stored: StoredAnswer) -> ApiResult<StoredAnswer> {
    let Some(sealed) = &stored.sealed_body else {
        return Ok(stored);
    };
    let body = app
        .secrets()
        .open(&SecretScope::IdempotentAnswer(key_id), sealed)
        .await?;
    Ok(StoredAnswer {
        body,
        sealed_body: None,
        ..stored
    })
}

/// After the create: an answer that created something is recorded for replays (a binding that
/// carried it keeps it); anything else lets the key go, so a retry runs again.
pub async fn finish(app: &App, held: Option<Held>, outcome: &ApiResult<Answer>) {
    let Some(held) = held else {
        return;
    };
    let result = match outcome {
        Ok(answer) => {
            app.idempotency()
                .record_idempotent_answer(&held.key_id, &answer.stored)
                .await
        }
        Err(err @ ApiError::LaunchFailed(_)) => {
            app.idempotency()
                .record_idempotent_answer(&held.key_id, &error_answer(err))
                .await
        }
        Err(_) => {
            app.idempotency()
                .release_idempotency_key(&held.key_id, &held.token)
                .await
        }
    };
    // A failure here costs a retry its replay only: an unreleased key lapses with its hold, an
    // unrecorded answer is rebuilt from what was created.
    if let Err(err) = result {
        tracing::warn!(error = %err, "idempotency key not settled");
    }
}

/// An error answer as sent (the `502 launch_failed` a start binds).
pub fn error_answer(err: &ApiError) -> StoredAnswer {
    StoredAnswer {
        status: err.status(),
        body: err.body(),
        location: None,
        sealed_body: None,
    }
}

/// Records a rebuilt answer so later replays are identical, and returns it as a replay.
pub async fn replay_rebuilt(app: &App, key_id: &str, stored: StoredAnswer) -> Answer {
    if let Err(err) = app
        .idempotency()
        .record_idempotent_answer(key_id, &stored)
        .await
    {
        tracing::warn!(error = %err, "rebuilt idempotent answer not recorded");
    }
    Answer {
        stored,
        replayed: true,
    }
}
