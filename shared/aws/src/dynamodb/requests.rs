//! Requests to DynamoDB and how their failures are read.
//!
//! Every request goes through [`retrying`]: throttling (`ThrottlingException`,
//! `ProvisionedThroughputExceededException`, a `TransactionCanceledException` whose reasons are
//! throttling or conflicts), `TransactionConflictException` on single-item writes, internal
//! errors and lost connections are retried with exponential backoff and full jitter, on top of
//! the SDK's own few quick retries. A transaction keeps one `ClientRequestToken` across its
//! retries, so one whose answer was lost is not applied twice. The rate-limit count's `ADD`,
//! which no token protects, goes through [`retrying_unapplied`] instead: resent only when
//! DynamoDB refused it unapplied. What still fails is a
//! [`StoreError`], which the API answers as `500 db_error`; a failed transaction wrote nothing.

use chrono::{DateTime, Utc};
use std::any::Any;
use std::time::Duration;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, DeleteRequest, KeysAndAttributes, PutRequest, TransactWriteItem, WriteRequest,
};

// The items of a transaction, built where the store's files have always found them.
pub(super) use super::transact_items::{UpdateSpec, add_update, delete, put, update};
use super::{DynamoStore, Item, keys};
use crate::describe;
use hosting_domain::error::StoreError;
use hosting_domain::ports::StoreResult;

/// Attempts of one request in this layer (each is up to 3 SDK attempts).
const ATTEMPTS: u32 = 6;
const BACKOFF_BASE: Duration = Duration::from_millis(25);
const BACKOFF_CAP: Duration = Duration::from_secs(1);
/// Rounds of resending what a batch request left unprocessed.
const BATCH_ROUNDS: u32 = 10;
/// Keys per `BatchGetItem`, and such requests in flight at once.
const BATCH_GET_KEYS: usize = 100;
const BATCH_GETS_IN_FLIGHT: usize = 8;
/// Items per `BatchWriteItem`.
const BATCH_WRITE_ITEMS: usize = 25;

pub(super) type TransactError =
    SdkError<TransactWriteItemsError, aws_sdk_dynamodb::config::http::HttpResponse>;

pub(super) fn backend<E: std::error::Error>(err: E) -> StoreError {
    StoreError::Backend(describe(&err))
}

/// Full jitter: a random wait up to `BACKOFF_BASE * 2^attempt`, capped.
pub(super) fn backoff(attempt: u32) -> Duration {
    let ceiling = BACKOFF_BASE
        .saturating_mul(2u32.saturating_pow(attempt))
        .min(BACKOFF_CAP);
    ceiling.mul_f64(rand::random_range(0.0..=1.0))
}

/// The codes of a cancelled transaction's reasons, one per item (`None` for an item not at
/// fault); empty for any other error.
fn cancellation_codes<E: Any, R>(err: &SdkError<E, R>) -> Vec<String> {
    let Some(service) = err.as_service_error() else {
        return Vec::new();
    };
    match (service as &dyn Any).downcast_ref::<TransactWriteItemsError>() {
        Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => cancelled
            .cancellation_reasons()
            .iter()
            .map(|reason| reason.code().unwrap_or("None").to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether DynamoDB asks for the request to be sent again.
pub(super) fn is_retryable<E: ProvideErrorMetadata + Any, R>(err: &SdkError<E, R>) -> bool {
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            let codes = cancellation_codes(err);
            if !codes.is_empty() {
                const TRANSIENT: [&str; 3] = [
                    "TransactionConflict",
                    "ThrottlingError",
                    "ProvisionedThroughputExceeded",
                ];
                return codes.iter().any(|c| TRANSIENT.contains(&c.as_str()))
                    && codes
                        .iter()
                        .all(|c| c == "None" || TRANSIENT.contains(&c.as_str()));
            }
            matches!(
                service.err().code(),
                Some(
                    "TransactionConflictException"
                        | "TransactionInProgressException"
                        | "ThrottlingException"
                        | "ProvisionedThroughputExceededException"
                        | "RequestLimitExceeded"
                        | "InternalServerError"
                        | "ServiceUnavailable"
                )
            )
        }
        _ => false,
    }
}

/// Whether a transaction was cancelled because another one held one of its items.
pub(super) fn is_conflict<E: Any, R>(err: &SdkError<E, R>) -> bool {
    cancellation_codes(err)
        .iter()
        .any(|code| code == "TransactionConflict")
}

/// Whether a transaction was cancelled because one of its items' partitions was over its
/// throughput.
pub(super) fn is_throttled<E: Any, R>(err: &SdkError<E, R>) -> bool {
    cancellation_codes(err)
        .iter()
        .any(|code| code == "ThrottlingError" || code == "ProvisionedThroughputExceeded")
}

/// [`is_retryable`], but neither a conflict nor a throttled item: the caller changes the
/// request instead (another item, another partition).
fn is_retryable_but_no_conflict<E: ProvideErrorMetadata + Any, R>(err: &SdkError<E, R>) -> bool {
    is_retryable(err) && !is_conflict(err) && !is_throttled(err)
}

/// Sends `request()` until it succeeds, fails for good, or runs out of attempts.
pub(super) async fn retrying<T, E, R, F, Fut>(request: F) -> Result<T, SdkError<E, R>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, R>>>,
    E: ProvideErrorMetadata + Any,
{
    retrying_when(is_retryable, request).await
}

/// Sends `request()` again, after a backoff, while it fails with an error `again` accepts.
async fn retrying_when<T, E, R, F, Fut>(
    again: fn(&SdkError<E, R>) -> bool,
    mut request: F,
) -> Result<T, SdkError<E, R>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, R>>>,
    E: ProvideErrorMetadata,
{
    let mut attempt = 0;
    loop {
        match request().await {
            Err(err) if attempt + 1 < ATTEMPTS && again(&err) => {
                attempt += 1;
                tracing::debug!(attempt, code = ?err.code(), "DynamoDB request retried");
                tokio::time::sleep(backoff(attempt)).await;
            }
            other => return other,
        }
    }
}

/// Whether DynamoDB refused the request without applying it: throttling, capacity, or a
/// transaction holding the item.
fn refused_unapplied<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool {
    matches!(
        err.as_service_error().and_then(ProvideErrorMetadata::code),
        Some(
            "ThrottlingException"
                | "ProvisionedThroughputExceededException"
                | "RequestLimitExceeded"
                | "TransactionConflictException"
        )
    )
}

/// [`retrying`] for a write that two applications would change twice (an `ADD`): sent again
/// only when DynamoDB refused it unapplied. A lost connection, a lost answer or an internal
/// error may follow an applied write, so they fail the request instead. The request must be
/// sent with the SDK's own retries off ([`no_sdk_retries`]).
pub(super) async fn retrying_unapplied<T, E, R, F, Fut>(request: F) -> Result<T, SdkError<E, R>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, R>>>,
    E: ProvideErrorMetadata + Any,
{
    retrying_when(refused_unapplied, request).await
}

/// A client configuration that sends each request once: the SDK retries lost connections,
/// timeouts and internal errors, after which a write may have been applied.
pub(super) fn no_sdk_retries() -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::config::Builder::default()
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
}

/// Whether a single-item write was refused by its condition.
pub(super) fn condition_failed<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool {
    err.as_service_error().and_then(ProvideErrorMetadata::code)
        == Some("ConditionalCheckFailedException")
}

/// A conditional write's result: `true` when it applied, `false` when its condition refused it.
pub(super) fn applied<T, E, R>(result: Result<T, SdkError<E, R>>) -> StoreResult<bool>
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    match result {
        Ok(_) => Ok(true),
        Err(err) if condition_failed(&err) => Ok(false),
        Err(err) => Err(backend(err)),
    }
}

/// Whether a failed transaction was cancelled by the condition of item `index`.
pub(super) fn condition_failed_at(err: &TransactError, index: usize) -> bool {
    cancellation_codes(err)
        .get(index)
        .is_some_and(|code| code == "ConditionalCheckFailed")
}

/// Whether a failed transaction was cancelled by the condition of an item at `index` or after.
pub(super) fn condition_failed_from(err: &TransactError, index: usize) -> bool {
    cancellation_codes(err)
        .iter()
        .skip(index)
        .any(|code| code == "ConditionalCheckFailed")
}

/// Whether a failed transaction was cancelled by any condition.
pub(super) fn any_condition_failed(err: &TransactError) -> bool {
    cancellation_codes(err)
        .iter()
        .any(|code| code == "ConditionalCheckFailed")
}

impl DynamoStore {
    /// One item, consistently read.
    pub(super) async fn get(&self, key: Item) -> StoreResult<Option<Item>> {
        let out = retrying(|| {
            self.client
                .get_item()
                .table_name(&self.table)
                .set_key(Some(key.clone()))
                .consistent_read(true)
                .send()
        })
        .await
        .map_err(backend)?;
        Ok(out.item)
    }

    /// An unconditional write of a whole item.
    /// Deletes one item (absent or not).
    pub(super) async fn delete_item(&self, key: Item) -> StoreResult<()> {
        retrying(|| {
            self.client
                .delete_item()
                .table_name(&self.table)
                .set_key(Some(key.clone()))
                .send()
        })
        .await
        .map(drop)
        .map_err(backend)
    }

    pub(super) async fn put_item(&self, item: Item) -> StoreResult<()> {
        retrying(|| {
            self.client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item.clone()))
                .send()
        })
        .await
        .map_err(backend)?;
        Ok(())
    }

    /// One transaction, with one idempotency token across its retries.
    pub(super) async fn transact(
        &self,
        items: Vec<TransactWriteItem>,
    ) -> Result<(), TransactError> {
        let token = uuid::Uuid::new_v4().to_string();
        retrying(|| {
            self.client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .client_request_token(&token)
                .send()
        })
        .await
        .map(drop)
    }

    /// [`Self::transact`], returning a conflict or a throttled item at once (for a caller that
    /// can send another transaction instead of this one again).
    pub(super) async fn transact_or_conflict(
        &self,
        items: Vec<TransactWriteItem>,
    ) -> Result<(), TransactError> {
        let token = uuid::Uuid::new_v4().to_string();
        retrying_when(is_retryable_but_no_conflict, || {
            self.client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .client_request_token(&token)
                .send()
        })
        .await
        .map(drop)
    }

    /// Every item of a base-table partition (`begins_with(sk, prefix)` when given), read
    /// consistently.
    pub(super) async fn query_partition(
        &self,
        pk: &str,
        sk_prefix: Option<&str>,
    ) -> StoreResult<Vec<Item>> {
        let condition = match sk_prefix {
            Some(_) => "pk = :pk AND begins_with(sk, :prefix)",
            None => "pk = :pk",
        };
        let mut values = vec![(":pk", AttributeValue::S(pk.to_owned()))];
        if let Some(prefix) = sk_prefix {
            values.push((":prefix", AttributeValue::S(prefix.to_owned())));
        }
        self.query(None, condition, values, true, None).await
    }

    /// The due-index entries of each partition in `pks` due before `now`, at most `limit` from
    /// each. The index lags the table: callers confirm what they act on.
    pub(super) async fn due_before(
        &self,
        pks: impl Iterator<Item = String>,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<Item>> {
        let mut items = Vec::new();
        for pk in pks {
            items.extend(
                self.query(
                    Some(keys::DUE_INDEX),
                    "due_pk = :pk AND due_sk < :now",
                    vec![
                        (":pk", AttributeValue::S(pk)),
                        (":now", AttributeValue::S(keys::sortable(now))),
                    ],
                    false,
                    Some(limit),
                )
                .await?,
            );
        }
        Ok(items)
    }

    /// Every page of a query, up to `max` items (`None`: all), oldest (lowest sort key) first.
    /// Index queries cannot be consistent; callers confirm what they act on.
    pub(super) async fn query(
        &self,
        index: Option<&str>,
        condition: &str,
        values: Vec<(&str, AttributeValue)>,
        consistent: bool,
        max: Option<usize>,
    ) -> StoreResult<Vec<Item>> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let limit = max.map(|max| max.saturating_sub(items.len()).clamp(1, 1000) as i32);
            let out = retrying(|| {
                let mut query = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .set_index_name(index.map(str::to_owned))
                    .key_condition_expression(condition)
                    .set_exclusive_start_key(start.clone())
                    .set_limit(limit)
                    .set_consistent_read(consistent.then_some(true));
                for (name, value) in &values {
                    query = query.expression_attribute_values(*name, value.clone());
                }
                query.send()
            })
            .await
            .map_err(backend)?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() || max.is_some_and(|max| items.len() >= max) {
                return Ok(items);
            }
        }
    }

    /// Items by key, consistently read: `BatchGetItem`s of 100 keys, a few in flight at once.
    /// Order is not kept.
    pub(super) async fn batch_get(&self, keys: Vec<Item>) -> StoreResult<Vec<Item>> {
        if keys.len() <= BATCH_GET_KEYS {
            return self.batch_get_chunk(keys).await;
        }
        let mut in_flight = tokio::task::JoinSet::new();
        let mut items = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(BATCH_GET_KEYS).map(<[Item]>::to_vec) {
            if in_flight.len() >= BATCH_GETS_IN_FLIGHT
                && let Some(done) = in_flight.join_next().await
            {
                items.extend(done.map_err(backend)??);
            }
            let store = self.clone();
            in_flight.spawn(async move { store.batch_get_chunk(chunk).await });
        }
        while let Some(done) = in_flight.join_next().await {
            items.extend(done.map_err(backend)??);
        }
        Ok(items)
    }

    /// One `BatchGetItem`, resending the keys DynamoDB left unprocessed after a backoff.
    async fn batch_get_chunk(&self, keys: Vec<Item>) -> StoreResult<Vec<Item>> {
        let mut items = Vec::with_capacity(keys.len());
        if keys.is_empty() {
            return Ok(items);
        }
        let mut pending = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .build()
            .map_err(backend)?;
        for round in 0..BATCH_ROUNDS {
            if round > 0 {
                tokio::time::sleep(backoff(round)).await;
            }
            let out = retrying(|| {
                self.client
                    .batch_get_item()
                    .request_items(&self.table, pending.clone())
                    .send()
            })
            .await
            .map_err(backend)?;
            items.extend(
                out.responses
                    .unwrap_or_default()
                    .remove(&self.table)
                    .unwrap_or_default(),
            );
            match out
                .unprocessed_keys
                .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                .filter(|left| !left.keys().is_empty())
            {
                Some(left) => pending = left,
                None => return Ok(items),
            }
        }
        Err(StoreError::Backend(
            "BatchGetItem left keys unprocessed after every retry".into(),
        ))
    }

    /// `puts` and `deletes` in `BatchWriteItem`s of 25, resending what DynamoDB left
    /// unprocessed after a backoff.
    pub(super) async fn batch_write(&self, puts: Vec<Item>, deletes: Vec<Item>) -> StoreResult<()> {
        let mut requests = Vec::with_capacity(puts.len() + deletes.len());
        for item in puts {
            let put = PutRequest::builder()
                .set_item(Some(item))
                .build()
                .map_err(backend)?;
            requests.push(WriteRequest::builder().put_request(put).build());
        }
        for key in deletes {
            let delete = DeleteRequest::builder()
                .set_key(Some(key))
                .build()
                .map_err(backend)?;
            requests.push(WriteRequest::builder().delete_request(delete).build());
        }
        for chunk in requests.chunks(BATCH_WRITE_ITEMS) {
            let mut pending = chunk.to_vec();
            let mut round = 0;
            while !pending.is_empty() {
                if round == BATCH_ROUNDS {
                    return Err(StoreError::Backend(
                        "BatchWriteItem left items unprocessed after every retry".into(),
                    ));
                }
                if round > 0 {
                    tokio::time::sleep(backoff(round)).await;
                }
                round += 1;
                let out = retrying(|| {
                    self.client
                        .batch_write_item()
                        .request_items(&self.table, pending.clone())
                        .send()
                })
                .await
                .map_err(backend)?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                    .unwrap_or_default();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
