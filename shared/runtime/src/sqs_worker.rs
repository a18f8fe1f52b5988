//! Deliveries from SQS, the same in the delivery function and in a local process: a message
//! that is not yet due goes back to the queue for the time that remains; a due one is
//! processed; only a store failure leaves the message for SQS to redeliver.

use std::sync::Arc;

use chrono::Utc;
use tokio::sync::Semaphore;

use hosting_app::app::App;
use hosting_aws::sqs::{QueuedDelivery, SqsQueue};
use hosting_domain::error::StoreError;

use hosting_app::delivery::Deliverer;
use hosting_app::delivery::worker;

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

/// Receives as many messages (long polling, at most 10) as `in_flight` has room for, and starts
/// each on its own task without waiting for them: a batch never waits for its slowest
/// message, so a receiver that never answers holds one worker, not the poller. Returns how
/// many it started.
pub async fn poll_once(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
    in_flight: &Arc<Semaphore>,
) -> Result<usize, StoreError> {
    let Ok(first) = in_flight.clone().acquire_owned().await else {
        return Ok(0);
    };
    let mut permits = vec![first];
    while permits.len() < 10 {
        match in_flight.clone().try_acquire_owned() {
            Ok(permit) => permits.push(permit),
            Err(_) => break,
        }
    }
    let out = queue
        .client()
        .receive_message()
        .queue_url(queue.queue_url())
        .max_number_of_messages(i32::try_from(permits.len()).unwrap_or(10))
        .wait_time_seconds(1)
        .send()
        .await
        .map_err(|e| StoreError::Backend(hosting_aws::describe(&e)))?;
    let messages = out.messages.unwrap_or_default();
    let count = messages.len();
    for (message, permit) in messages.into_iter().zip(permits) {
        let (app, queue, deliverer) = (app.clone(), queue.clone(), deliverer.clone());
        tokio::spawn(async move {
            let _permit = permit;
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
        });
    }
    Ok(count)
}
