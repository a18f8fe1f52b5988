//! Deliveries from SQS, the same in the delivery function and in a local process: a message
//! that is not yet due goes back to the queue for the time that remains; a due one is
//! processed; only a store failure leaves the message for SQS to redeliver.

use chrono::Utc;

use crate::app::App;
use crate::aws::sqs::{QueuedDelivery, SqsQueue};
use crate::error::StoreError;

use super::client::Deliverer;
use super::worker;

/// Handles one message body. `Err` means: keep the message, it will be received again.
pub async fn handle_message(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
    body: &str,
) -> Result<(), StoreError> {
    let message: QueuedDelivery = match serde_json::from_str(body) {
        Ok(message) => message,
        Err(err) => {
            // A message that can never be read would only come back forever.
            tracing::error!(error = %err, "unreadable delivery message dropped");
            return Ok(());
        }
    };
    if queue.defer_if_early(&message, Utc::now()).await?.is_some() {
        return Ok(());
    }
    worker::process(app, deliverer, message.delivery)
        .await
        .map(drop)
}

/// Receives one batch (long polling) and handles its messages concurrently.
pub async fn poll_once(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
) -> Result<usize, StoreError> {
    let out = queue
        .client()
        .receive_message()
        .queue_url(queue.queue_url())
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .send()
        .await
        .map_err(|e| StoreError::Backend(crate::aws::describe(&e)))?;
    let messages = out.messages.unwrap_or_default();
    let count = messages.len();
    let handles: Vec<_> = messages
        .into_iter()
        .map(|message| {
            let (app, queue, deliverer) = (app.clone(), queue.clone(), deliverer.clone());
            tokio::spawn(async move {
                let body = message.body().unwrap_or_default();
                match handle_message(&app, &queue, &deliverer, body).await {
                    Ok(()) => {
                        if let Some(receipt) = message.receipt_handle() {
                            let _ = queue
                                .client()
                                .delete_message()
                                .queue_url(queue.queue_url())
                                .receipt_handle(receipt)
                                .send()
                                .await;
                        }
                    }
                    Err(err) => tracing::error!(error = %err, "delivery left for redelivery"),
                }
            })
        })
        .collect();
    for handle in handles {
        let _ = handle.await;
    }
    Ok(count)
}
