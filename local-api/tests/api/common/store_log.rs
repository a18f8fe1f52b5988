//! The store requests the app makes, on either backend: on DynamoDB each request the SDK
//! sends, recorded by an interceptor with its operation, the sort keys it names and when it
//! was sent and answered; on the embedded store each call of a port method.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
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
    pub start: Instant,
    pub end: Option<Instant>,
    /// What IAM must allow for it, as a role's policy names it: `dynamodb:GetItem`, one per
    /// part of a transaction (`dynamodb:PutItem`, `dynamodb:ConditionCheckItem`, ...), and
    /// `dynamodb:Query@index/<name>` for a query of an index.
    pub iam_actions: Vec<String>,
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

/// Records every DynamoDB request of the client it is installed on.
#[derive(Debug, Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<Call>>>);

#[derive(Debug, Clone)]
struct CallIndex(usize);

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
        let mut calls = self.0.lock().unwrap();
        calls.push(Call {
            iam_actions: iam_actions(&operation, &body),
            operation,
            sort_keys: sort_keys(&body),
            start: Instant::now(),
            end: None,
        });
        cfg.interceptor_state()
            .store_put(CallIndex(calls.len() - 1));
        Ok(())
    }

    fn read_before_deserialization(
        &self,
        _: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(CallIndex(i)) = cfg.load::<CallIndex>() {
            self.0.lock().unwrap()[*i].end = Some(Instant::now());
        }
        Ok(())
    }
}

impl Recorder {
    /// The requests recorded since the last call.
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.0.lock().unwrap())
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
