//! Cuts from the clips queue (docs/clips.md): each batch runs through the batch runner the
//! local server uses too ([`run_batch`]), and only the messages it keeps (the store failed
//! before the cut was decided) are reported as batch item failures, for SQS to redeliver. A
//! cut that failed on its own (a read, the write) is not one of them: the clip's record keeps
//! its retry, and the job for it is queued again with its delay.

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use hosting_app::App;
use hosting_runtime::clip_worker::run_batch;

pub async fn handle(app: &App, event: SqsEvent) -> SqsBatchResponse {
    let batch = event
        .records
        .into_iter()
        .map(|record| {
            (
                record.message_id.unwrap_or_default(),
                record.body.unwrap_or_default(),
            )
        })
        .collect();
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = run_batch(app, batch)
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
