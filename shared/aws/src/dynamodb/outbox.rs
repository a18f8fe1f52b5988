//! The outbox: events written with their transitions, pending in the due index until a relay
//! hands them to the delivery queue. A relay claims one event with a conditional write (a
//! token and a lease), so concurrent relays and the sweep never send it twice; a failed relay
//! moves the event's due time to its retry, or sets it aside under [`SET_ASIDE_PK`].

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValue;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::DynamoStore;
use super::items::{EVENT_TTL, ItemExt, event_from_item, n, s};
use super::keys::{self, DUE_INDEX, SET_ASIDE_PK, due_sk, sortable};
use super::requests::{applied, backend, condition_failed, retrying};
use super::table::TTL_ATTRIBUTE;
use hosting_domain::ports::{Outbox, RelayClaim, SetAsideEvent, StoreResult};

#[async_trait]
impl Outbox for DynamoStore {
    async fn pending_events(
        &self,
        due_by: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<hosting_domain::StreamEvent>> {
        // `~` sorts after every id character, so events due exactly at `due_by` are in.
        let bound = format!("{}#~", sortable(due_by));
        let mut items = Vec::new();
        for pk in keys::outbox_pks() {
            items.extend(
                self.query(
                    Some(DUE_INDEX),
                    "due_pk = :pk AND due_sk <= :due",
                    vec![(":pk", s(pk)), (":due", s(&bound))],
                    false,
                    Some(limit),
                )
                .await?,
            );
        }
        items.sort_by_key(|item| item.opt_string(keys::DUE_SK));
        items.iter().take(limit).map(event_from_item).collect()
    }

    async fn claim_event(
        &self,
        event_id: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> StoreResult<Option<RelayClaim>> {
        let token = Uuid::new_v4().to_string();
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::event_key(event_id)))
                .update_expression(
                    "SET claim_token = :token, claim_until = :lease ADD relay_attempts :one",
                )
                .condition_expression(
                    "begins_with(due_pk, :outbox) AND due_pk <> :set_aside \
                     AND (attribute_not_exists(claim_until) OR claim_until <= :now)",
                )
                .expression_attribute_values(":token", s(&token))
                .expression_attribute_values(":lease", s(sortable(lease_until)))
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":outbox", s("OUTBOX#"))
                .expression_attribute_values(":set_aside", s(SET_ASIDE_PK))
                .expression_attribute_values(":now", s(sortable(now)))
                .return_values(ReturnValue::AllNew)
                .send()
        })
        .await;
        let item = match result {
            Ok(out) => out.attributes.unwrap_or_default(),
            // Taken, relayed or waiting; or ours, when the answer to our claim was lost and
            // its retry met our own condition.
            Err(err) if condition_failed(&err) => {
                match self.get(keys::event_key(event_id)).await? {
                    Some(item) if item.opt_string("claim_token").as_deref() == Some(&token) => item,
                    _ => return Ok(None),
                }
            }
            Err(err) => return Err(backend(err)),
        };
        Ok(Some(RelayClaim {
            token,
            attempt: u32::try_from(item.number("relay_attempts")?).unwrap_or(u32::MAX),
        }))
    }

    async fn mark_relayed(&self, event_id: &str, claim: &RelayClaim) -> StoreResult<()> {
        // Relayed events expire; pending ones never do.
        let expires = (Utc::now() + EVENT_TTL).timestamp();
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::event_key(event_id)))
                .update_expression(
                    "SET #ttl = :ttl REMOVE due_pk, due_sk, claim_token, claim_until",
                )
                .condition_expression("claim_token = :token")
                .expression_attribute_names("#ttl", TTL_ATTRIBUTE)
                .expression_attribute_values(":ttl", n(expires))
                .expression_attribute_values(":token", s(&claim.token))
                .send()
        })
        .await;
        // Refused: the lease ran out and another relay has it (it sends it again; receivers
        // deduplicate on the event id), or our own retried write already applied.
        applied(result).map(drop)
    }

    async fn relay_failed(
        &self,
        event_id: &str,
        claim: &RelayClaim,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
    ) -> StoreResult<()> {
        let now = Utc::now();
        let result = retrying(|| {
            let request = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::event_key(event_id)))
                .condition_expression("claim_token = :token")
                .expression_attribute_values(":token", s(&claim.token))
                .expression_attribute_values(":error", s(error));
            match retry_at {
                Some(retry_at) => request
                    .update_expression(
                        "SET due_sk = :due, claim_until = :retry, relay_error = :error \
                         REMOVE claim_token",
                    )
                    .expression_attribute_values(":due", s(due_sk(retry_at, event_id)))
                    .expression_attribute_values(":retry", s(sortable(retry_at))),
                None => request
                    .update_expression(
                        "SET due_pk = :set_aside, due_sk = :due, relay_error = :error, \
                         set_aside_at = :now REMOVE claim_token, claim_until",
                    )
                    .expression_attribute_values(":set_aside", s(SET_ASIDE_PK))
                    .expression_attribute_values(":due", s(due_sk(now, event_id)))
                    .expression_attribute_values(":now", s(sortable(now))),
            }
            .send()
        })
        .await;
        applied(result).map(drop)
    }

    async fn set_aside_events(&self, limit: usize) -> StoreResult<Vec<SetAsideEvent>> {
        self.query(
            Some(DUE_INDEX),
            "due_pk = :pk",
            vec![(":pk", s(SET_ASIDE_PK))],
            false,
            Some(limit),
        )
        .await?
        .iter()
        .map(|item| {
            Ok(SetAsideEvent {
                event: event_from_item(item)?,
                attempts: u32::try_from(item.opt_number("relay_attempts").unwrap_or(0))
                    .unwrap_or(0),
                error: item.opt_string("relay_error").unwrap_or_default(),
                set_aside_at: item.time("set_aside_at")?,
            })
        })
        .collect()
    }

    async fn requeue_event(&self, event_id: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let result = retrying(|| {
            self.client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(keys::event_key(event_id)))
                .update_expression(
                    "SET due_pk = :pk, due_sk = :due, relay_attempts = :zero \
                     REMOVE relay_error, set_aside_at, claim_until",
                )
                .condition_expression("due_pk = :set_aside")
                .expression_attribute_values(":pk", s(keys::outbox_pk(event_id)))
                .expression_attribute_values(":due", s(due_sk(now, event_id)))
                .expression_attribute_values(":zero", n(0))
                .expression_attribute_values(":set_aside", s(SET_ASIDE_PK))
                .send()
        })
        .await;
        applied(result)
    }
}
