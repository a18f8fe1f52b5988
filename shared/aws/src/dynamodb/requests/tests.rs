//! Which failures are retried, how long a retry waits, and what a cancelled transaction says.

use super::*;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::types::CancellationReason;
use aws_sdk_dynamodb::types::error::TransactionCanceledException;
use aws_smithy_runtime_api::http::{Response, StatusCode};
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::error::ErrorMetadata;

fn response() -> Response {
    Response::new(StatusCode::try_from(400).unwrap(), SdkBody::empty())
}

fn put_error(code: &str) -> SdkError<PutItemError, Response> {
    let meta = ErrorMetadata::builder().code(code).build();
    SdkError::service_error(PutItemError::generic(meta), response())
}

fn cancelled(codes: &[&str]) -> SdkError<TransactWriteItemsError, Response> {
    let mut builder = TransactionCanceledException::builder();
    for code in codes {
        builder = builder.cancellation_reasons(CancellationReason::builder().code(*code).build());
    }
    SdkError::service_error(
        TransactWriteItemsError::TransactionCanceledException(builder.build()),
        response(),
    )
}

#[test]
fn throttling_conflicts_and_internal_errors_are_retried() {
    for code in [
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "TransactionConflictException",
        "InternalServerError",
    ] {
        assert!(is_retryable(&put_error(code)), "{code}");
    }
    for code in ["ConditionalCheckFailedException", "ValidationException"] {
        assert!(!is_retryable(&put_error(code)), "{code}");
    }
}

#[test]
fn cancelled_transactions_are_retried_only_when_nothing_refused_them() {
    assert!(is_retryable(&cancelled(&["None", "ThrottlingError"])));
    assert!(is_retryable(&cancelled(&["TransactionConflict", "None"])));
    assert!(!is_retryable(&cancelled(&[
        "ConditionalCheckFailed",
        "ThrottlingError"
    ])));
    assert!(!is_retryable(&cancelled(&["None", "None"])));
    assert!(condition_failed_at(
        &cancelled(&["None", "ConditionalCheckFailed"]),
        1
    ));
    assert!(any_condition_failed(&cancelled(&[
        "None",
        "ConditionalCheckFailed"
    ])));
    assert!(!condition_failed_at(
        &cancelled(&["None", "ConditionalCheckFailed"]),
        0
    ));
}

#[test]
fn backoff_is_capped_and_jittered() {
    for attempt in 0..20 {
        assert!(backoff(attempt) <= BACKOFF_CAP);
    }
    // Full jitter: waits drawn over the whole of `0..=ceiling`, so retries of requests that
    // failed together spread out. Without it every draw is the ceiling.
    let ceiling = BACKOFF_BASE.saturating_mul(4).min(BACKOFF_CAP);
    let draws: Vec<Duration> = (0..400).map(|_| backoff(2)).collect();
    assert!(draws.iter().all(|d| *d <= ceiling));
    assert!(draws.iter().any(|d| *d < ceiling / 4), "{draws:?}");
    assert!(draws.iter().any(|d| *d > ceiling * 3 / 4), "{draws:?}");
}
