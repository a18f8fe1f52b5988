//! Webhook deliveries from SQS: each batch runs through the batch runner the local worker uses
//! too ([`run_batch`]), and only the messages it keeps (a store failure) are reported as batch
//! item failures, for SQS to redeliver.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use hosting_app::App;
use hosting_app::delivery::Deliverer;
use hosting_aws::sqs::SqsQueue;
use hosting_runtime::sqs_worker::{Received, run_batch};

pub async fn handle(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
    event: SqsEvent,
) -> SqsBatchResponse {
    let batch = event
        .records
        .into_iter()
        .map(|record| {
            let received = Received {
                id: record.message_id.unwrap_or_default(),
                body: record.body.unwrap_or_default(),
            };
            (received, ())
        })
        .collect();
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = run_batch(app, queue, deliverer, batch)
        .await
        .into_iter()
        .map(|id| {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            failure
        })
        .collect();
    response
}
