//! Idempotency keys in the embedded store: held, bound with what they created (in the
//! creation's own locked step, see `store.rs`), kept with their answer.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::EmbeddedStore;
use hosting_domain::idempotency::{RETENTION, StoredAnswer};
use hosting_domain::ports::{IdempotencyStore, KeyHold, StoreResult};

/// An idempotency key: held by a request, then bound to what it created.
pub(super) struct KeyEntry {
    pub(super) fingerprint: String,
    pub(super) token: String,
    pub(super) held_until: DateTime<Utc>,
    pub(super) resource_id: Option<String>,
    pub(super) answer: Option<StoredAnswer>,
    pub(super) expires_at: DateTime<Utc>,
}

#[async_trait]
impl IdempotencyStore for EmbeddedStore {
    async fn hold_idempotency_key(
        &self,
        key_id: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        hold_until: DateTime<Utc>,
    ) -> StoreResult<KeyHold> {
        let mut state = self.lock()?;
        state.idempotency.retain(|_, entry| entry.expires_at > now);
        if let Some(entry) = state.idempotency.get(key_id) {
            match &entry.resource_id {
                Some(resource_id) => {
                    return Ok(KeyHold::Bound {
                        fingerprint: entry.fingerprint.clone(),
                        resource_id: resource_id.clone(),
                        answer: entry.answer.clone(),
                    });
                }
                None if entry.held_until > now => {
                    return Ok(KeyHold::Held {
                        fingerprint: entry.fingerprint.clone(),
                    });
                }
                // Its holder lapsed with nothing created: take it over.
                None => {}
            }
        }
        let token = Uuid::new_v4().to_string();
        state.idempotency.insert(
            key_id.to_owned(),
            KeyEntry {
                fingerprint: fingerprint.to_owned(),
                token: token.clone(),
                held_until: hold_until,
                resource_id: None,
                answer: None,
                expires_at: hold_until + RETENTION,
            },
        );
        Ok(KeyHold::Acquired { token })
    }

    async fn release_idempotency_key(&self, key_id: &str, token: &str) -> StoreResult<()> {
        let mut state = self.lock()?;
        if state
            .idempotency
            .get(key_id)
            .is_some_and(|entry| entry.token == token && entry.resource_id.is_none())
        {
            state.idempotency.remove(key_id);
        }
        Ok(())
    }

    async fn record_idempotent_answer(
        &self,
        key_id: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<()> {
        if let Some(entry) = self
            .lock()?
            .idempotency
            .get_mut(key_id)
            .filter(|entry| entry.resource_id.is_some() && entry.answer.is_none())
        {
            entry.answer = Some(answer.clone());
        }
        Ok(())
    }
}
