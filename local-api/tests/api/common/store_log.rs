//! The store requests the app makes, on either backend: on DynamoDB each request the SDK
//! sends, recorded by an interceptor with its operation, the sort keys it names and when it
//! was sent and answered; on the embedded store each call of a port method.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use aws_sdk_dynamodb::config::interceptors::{
    AfterDeserializationInterceptorContextRef, BeforeDeserializationInterceptorContextRef,
    BeforeTransmitInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use hosting_embedded::EmbeddedStore;
use serde_json::Value;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Clone)]
pub struct Call {
    /// `GetItem`, `BatchGetItem`, `UpdateItem`, ...
    pub operation: String,
    /// The `sk` of every key the request names (`POS` for a stream's position copy, `DAY`
    /// for a day's first position, `RATE` for the rate-limit count, ...).
    pub sort_keys: Vec<String>,
    /// The partition key of every key the request names, and a query's (`pk = :v`).
    pub partition_keys: Vec<String>,
    pub start: Instant,
    pub end: Option<Instant>,
    /// What IAM must allow for it, as a role's policy names it: `dynamodb:GetItem`, one per
    /// part of a transaction (`dynamodb:PutItem`, `dynamodb:ConditionCheckItem`, ...), and
    /// `dynamodb:Query@index/<name>` for a query of an index.
    pub iam_actions: Vec<String>,
    /// The answer carried nothing: an SQS receive that found no message.
    pub empty_answer: bool,
    /// A query's `Limit`: the most items it may read.
    pub limit: Option<u64>,
}

/// The IAM actions a DynamoDB request needs: a transaction has no action of its own, each of
/// its parts needs its item action.
fn iam_actions(operation: &str, body: &Value) -> Vec<String> {
    let action = |name: &str| format!("dynamodb:{name}");
    match operation {
        "TransactWriteItems" => body["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part.as_object()?.keys().next().cloned())
            .map(|kind| match kind.as_str() {
                "Put" => action("PutItem"),
                "Update" => action("UpdateItem"),
                "Delete" => action("DeleteItem"),
                "ConditionCheck" => action("ConditionCheckItem"),
                other => action(other),
            })
            .collect(),
        "TransactGetItems" => vec![action("GetItem")],
        "Query" | "Scan" => match body["IndexName"].as_str() {
            Some(index) => vec![format!("{}@index/{index}", action(operation))],
            None => vec![action(operation)],
        },
        other => vec![action(other)],
    }
}

/// Records every request of the client it is installed on (DynamoDB's, SQS's or KMS's).
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Calls>>);

/// The calls since the last [`Recorder::take`], which starts a new generation: an answer to a
/// request of an earlier one is not recorded.
#[derive(Debug, Default)]
struct Calls {
    generation: u64,
    calls: Vec<Call>,
}

#[derive(Debug, Clone)]
struct CallIndex(u64, usize);

impl Storable for CallIndex {
    type Storer = StoreReplace<Self>;
}

/// The `sk` of every key named in a request body: `Key`, or each of `RequestItems`' `Keys`.
fn sort_keys(body: &Value) -> Vec<String> {
    let sk = |key: &Value| key["sk"]["S"].as_str().map(str::to_owned);
    let mut found: Vec<String> = body.get("Key").and_then(sk).into_iter().collect();
    if let Some(tables) = body["RequestItems"].as_object() {
        for table in tables.values() {
            for key in table["Keys"].as_array().into_iter().flatten() {
                found.extend(sk(key));
            }
        }
    }
    found
}

/// The `pk` of every key named in a request body, and the `pk` a query's condition names.
fn partition_keys(body: &Value) -> Vec<String> {
    let pk = |key: &Value| key["pk"]["S"].as_str().map(str::to_owned);
    let mut found: Vec<String> = body.get("Key").and_then(pk).into_iter().collect();
    if let Some(tables) = body["RequestItems"].as_object() {
        for table in tables.values() {
            for key in table["Keys"].as_array().into_iter().flatten() {
                found.extend(pk(key));
            }
        }
    }
    if let Some(condition) = body["KeyConditionExpression"].as_str()
        && let Some(rest) = condition.strip_prefix("pk = ")
    {
        let name = rest.split_whitespace().next().unwrap_or_default();
        found.extend(
            body["ExpressionAttributeValues"][name]["S"]
                .as_str()
                .map(str::to_owned),
        );
    }
    found
}

/// The operation a DynamoDB request names (`GetItem`, `Query`, ...) and its JSON body.
pub fn operation_and_body(context: &BeforeTransmitInterceptorContextRef<'_>) -> (String, Value) {
    let request = context.request();
    let operation = request
        .headers()
        .get("x-amz-target")
        .and_then(|t| t.split('.').nth(1))
        .unwrap_or("?")
        .to_owned();
    let body = request
        .body()
        .bytes()
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .unwrap_or(Value::Null);
    (operation, body)
}

impl Intercept for Recorder {
    fn name(&self) -> &'static str {
        "StoreRequestRecorder"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let (operation, body) = operation_and_body(context);
        let kms = context
            .request()
            .headers()
            .get("x-amz-target")
            .is_some_and(|target| target.starts_with("TrentService."));
        let mut recorded = self.0.lock().unwrap();
        let generation = recorded.generation;
        let calls = &mut recorded.calls;
        calls.push(Call {
            iam_actions: if kms {
                vec![format!("kms:{operation}")]
            } else {
                iam_actions(&operation, &body)
            },
            operation,
            sort_keys: sort_keys(&body),
            partition_keys: partition_keys(&body),
            limit: body["Limit"].as_u64(),
            start: Instant::now(),
            end: None,
            empty_answer: false,
        });
        let index = calls.len() - 1;
        cfg.interceptor_state()
            .store_put(CallIndex(generation, index));
        Ok(())
    }

    fn read_before_deserialization(
        &self,
        _: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(CallIndex(generation, i)) = cfg.load::<CallIndex>() {
            let mut recorded = self.0.lock().unwrap();
            if recorded.generation == *generation
                && let Some(call) = recorded.calls.get_mut(*i)
            {
                call.end = Some(Instant::now());
            }
        }
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        // An SQS receive that found no message.
        let empty = context.output_or_error().is_ok_and(|output| {
            output
                .downcast_ref::<aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput>()
                .is_some_and(|received| received.messages().is_empty())
        });
        if let Some(CallIndex(generation, i)) = cfg.load::<CallIndex>() {
            let mut recorded = self.0.lock().unwrap();
            if recorded.generation == *generation
                && let Some(call) = recorded.calls.get_mut(*i)
            {
                call.empty_answer = empty;
            }
        }
        Ok(())
    }
}

impl Recorder {
    /// The requests recorded since the last call.
    pub fn take(&self) -> Vec<Call> {
        let mut recorded = self.0.lock().unwrap();
        recorded.generation += 1;
        std::mem::take(&mut recorded.calls)
    }
}

/// Requests that could not overlap: each starts after the previous one in the chain ended.
pub fn sequential(calls: &[Call]) -> usize {
    let mut calls = calls.to_vec();
    calls.sort_by_key(|c| c.start);
    let mut chain = 0;
    let mut last_end: Option<Instant> = None;
    for call in calls {
        if last_end.is_none_or(|end| call.start >= end) {
            chain += 1;
            last_end = call.end;
        } else if let (Some(end), Some(last)) = (call.end, last_end) {
            last_end = Some(last.min(end));
        }
    }
    chain
}

/// The store requests of a test's app.
pub enum StoreLog {
    Embedded {
        store: EmbeddedStore,
        seen: AtomicU64,
    },
    Dynamo(Recorder),
}

/// Store requests made since the last look.
#[derive(Debug)]
pub struct StoreRequests {
    pub total: usize,
    /// DynamoDB's requests one by one; empty on the embedded store.
    pub calls: Vec<Call>,
}

impl StoreRequests {
    /// The operation of each DynamoDB request, in order, for assertion messages.
    pub fn operations(&self) -> Vec<&str> {
        self.calls.iter().map(|c| c.operation.as_str()).collect()
    }

    /// DynamoDB requests of `operation` naming a key with sort key `sk`.
    pub fn naming(&self, operation: &str, sk: &str) -> usize {
        self.calls
            .iter()
            .filter(|c| c.operation == operation && c.sort_keys.iter().any(|k| k == sk))
            .count()
    }

    pub fn of(&self, operation: &str) -> usize {
        self.calls
            .iter()
            .filter(|c| c.operation == operation)
            .count()
    }
}

impl StoreLog {
    pub fn take(&self) -> StoreRequests {
        match self {
            StoreLog::Embedded { store, seen } => {
                let now = store.requests();
                let before = seen.swap(now, Ordering::SeqCst);
                StoreRequests {
                    total: (now - before) as usize,
                    calls: Vec::new(),
                }
            }
            StoreLog::Dynamo(recorder) => {
                let calls = recorder.take();
                StoreRequests {
                    total: calls.len(),
                    calls,
                }
            }
        }
    }
}

/// The requests a test's app makes to its delivery queue.
pub enum QueueLog {
    /// The embedded queue: each message sent counts one (receiving it is a channel read).
    Embedded(hosting_embedded::EmbeddedQueue),
    /// Every SQS request of the app's client.
    Sqs(Recorder),
}

impl QueueLog {
    /// Requests that carried work since the last call: on SQS every request but a receive
    /// that found nothing (a long poll's idle answer); on the embedded queue, messages sent.
    pub fn take_work(&self) -> u64 {
        match self {
            QueueLog::Embedded(queue) => queue.take_sent(),
            QueueLog::Sqs(recorder) => recorder
                .take()
                .iter()
                .filter(|call| !(call.operation == "ReceiveMessage" && call.empty_answer))
                .count() as u64,
        }
    }
}
