//! Idempotency keys (docs/idempotency.md): held by one request with a conditional write,
//! bound to what it creates inside the creation's own transaction ([`binding_item`]), and kept
//! with the answer to replay.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{ReturnValue, TransactWriteItem};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::DynamoStore;
use super::Item;
use super::items::{ItemExt, n, s, secret_value};
use super::keys::{self, sortable};
use super::requests::{UpdateSpec, applied, backend, condition_failed, retrying, update};
use super::table::TTL_ATTRIBUTE;
use hosting_domain::idempotency::{RETENTION, StoredAnswer};
use hosting_domain::ports::{IdempotencyBinding, IdempotencyStore, KeyHold, StoreResult};
use hosting_domain::sealed::StoredSecret;

/// A sealed body is a binary `answer_body`, a plain one a string.
fn answer_of(item: &Item) -> Option<StoredAnswer> {
    let (body, sealed_body) = match item.opt_secret("answer_body")? {
        StoredSecret::Plain(body) => (body, None),
        sealed => (String::new(), Some(sealed)),
    };
    Some(StoredAnswer {
        status: u16::try_from(item.opt_number("answer_status")?).ok()?,
        body,
        location: item.opt_string("answer_location"),
        sealed_body,
    })
}

fn answer_values(
    answer: &StoredAnswer,
) -> Vec<(&'static str, aws_sdk_dynamodb::types::AttributeValue)> {
    let body = match &answer.sealed_body {
        Some(sealed) => secret_value(sealed),
        None => s(&answer.body),
    };
    let mut values = vec![(":status", n(answer.status)), (":body", body)];
    if let Some(location) = &answer.location {
        values.push((":location", s(location)));
    }
    values
}

fn answer_sets(answer: &StoredAnswer) -> &'static str {
    if answer.location.is_some() {
        ", answer_status = :status, answer_body = :body, answer_location = :location"
    } else {
        ", answer_status = :status, answer_body = :body"
    }
}

/// Binds `binding`'s key to `resource_id` in a creation's transaction: refused (and with it the
/// creation) unless the key is still held by this request and bound to nothing.
pub(super) fn binding_item(
    table: &str,
    binding: &IdempotencyBinding,
    resource_id: &str,
) -> StoreResult<TransactWriteItem> {
    let expression = format!(
        "SET resource_id = :resource, #ttl = :ttl{}",
        binding.answer.as_ref().map(answer_sets).unwrap_or_default()
    );
    let mut values = vec![
        (":resource", s(resource_id)),
        (":ttl", n((binding.at + RETENTION).timestamp())),
        (":token", s(&binding.token)),
    ];
    if let Some(answer) = &binding.answer {
        values.extend(answer_values(answer));
    }
    update(
        table,
        UpdateSpec {
            key: keys::idempotency_key(&binding.key_id),
            expression: &expression,
            condition: Some("hold_token = :token AND attribute_not_exists(resource_id)"),
            names: vec![("#ttl", TTL_ATTRIBUTE.to_owned())],
            values,
        },
    )
}

#[async_trait]
impl IdempotencyStore for DynamoStore {
    async fn hold_idempotency_key(
        &self,
        key_id: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
        hold_until: DateTime<Utc>,
    ) -> StoreResult<KeyHold> {
        let token = Uuid::new_v4().to_string();
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::idempotency_key(key_id)))
                // Taking over an expired key forgets what it was bound to.
                .update_expression(
                    "SET fingerprint = :fingerprint, hold_token = :token, held_until = :until, \
                     #ttl = :ttl \
                     REMOVE resource_id, answer_status, answer_body, answer_location",
                )
                // Free: absent, expired (TTL deletes up to two days late, so its time is
                // checked here, not its presence), or its holder lapsed with nothing created.
                .condition_expression(
                    "attribute_not_exists(pk) OR #ttl <= :now_epoch OR \
                     (attribute_not_exists(resource_id) AND held_until <= :now)",
                )
                .expression_attribute_names("#ttl", TTL_ATTRIBUTE)
                .expression_attribute_values(":now_epoch", n(now.timestamp()))
                .expression_attribute_values(":fingerprint", s(fingerprint))
                .expression_attribute_values(":token", s(&token))
                .expression_attribute_values(":until", s(sortable(hold_until)))
                .expression_attribute_values(":now", s(sortable(now)))
                .expression_attribute_values(":ttl", n((hold_until + RETENTION).timestamp()))
                .return_values(ReturnValue::None)
                .send()
        })
        .await;
        match result {
            Ok(_) => return Ok(KeyHold::Acquired { token }),
            Err(err) if condition_failed(&err) => {}
            Err(err) => return Err(backend(err)),
        }
        let Some(item) = self.get(keys::idempotency_key(key_id)).await? else {
            // Expired between the two requests: as good as free next time.
            return Ok(KeyHold::Held {
                fingerprint: fingerprint.to_owned(),
            });
        };
        let held_by = item.opt_string("hold_token");
        let fingerprint = item.string("fingerprint")?;
        Ok(match item.opt_string("resource_id") {
            Some(resource_id) => KeyHold::Bound {
                fingerprint,
                resource_id,
                answer: answer_of(&item),
            },
            // Our own hold, whose answer was lost and whose retry met its own condition.
            None if held_by.as_deref() == Some(&token) => KeyHold::Acquired { token },
            None => KeyHold::Held { fingerprint },
        })
    }

    async fn release_idempotency_key(&self, key_id: &str, token: &str) -> StoreResult<()> {
        let result = retrying(|| {
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(keys::idempotency_key(key_id)))
                .condition_expression("hold_token = :token AND attribute_not_exists(resource_id)")
                .expression_attribute_values(":token", s(token))
                .send()
        })
        .await;
        applied(result).map(drop)
    }

    async fn record_idempotent_answer(
        &self,
        key_id: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<()> {
        let expression = format!("SET {}", answer_sets(answer).trim_start_matches(", "));
        let result = retrying(|| {
            let mut request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::idempotency_key(key_id)))
                .update_expression(&expression)
                // The first answer stays: replays are byte-identical.
                .condition_expression(
                    "attribute_exists(resource_id) AND attribute_not_exists(answer_status)",
                );
            for (name, value) in answer_values(answer) {
                request = request.expression_attribute_values(name, value);
            }
            request.send()
        })
        .await;
        applied(result).map(drop)
    }
}
