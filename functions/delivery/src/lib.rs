//! Webhook deliveries from SQS: each batch's messages are handled concurrently, and only the
//! ones that must come back (a store failure) are reported as batch item failures.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use hosting_app::App;
use hosting_app::delivery::Deliverer;
use hosting_aws::sqs::SqsQueue;
use hosting_runtime::sqs_worker::handle_message;

pub async fn handle(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
    event: SqsEvent,
) -> SqsBatchResponse {
    let handles: Vec<_> = event
        .records
        .into_iter()
        .map(|record| {
            let (app, queue, deliverer) = (app.clone(), queue.clone(), deliverer.clone());
            tokio::spawn(async move {
                let body = record.body.unwrap_or_default();
                let result = handle_message(&app, &queue, &deliverer, &body).await;
                (record.message_id.unwrap_or_default(), result)
            })
        })
        .collect();
    let mut failures = Vec::new();
    for handle in handles {
        match handle.await {
            Ok((_, Ok(()))) => {}
            Ok((message_id, Err(err))) => {
                tracing::error!(message_id = %message_id, error = %err, "delivery will be retried by SQS");
                let mut failure = BatchItemFailure::default();
                failure.item_identifier = message_id;
                failures.push(failure);
            }
            Err(join) => tracing::error!(error = %join, "delivery task failed"),
        }
    }
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failures;
    response
}
