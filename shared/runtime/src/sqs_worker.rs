//! Deliveries from SQS, the same in the delivery function and in a local process: one batch
//! runner ([`run_batch`]) takes each message of a batch on its own task and says which to keep.
//! A message that is not yet due goes back to the queue for the time that remains; a due one
//! is processed; a message that cannot be read is dead-lettered as it came and counted; only a
//! store failure (or a handler that died) keeps the message, for SQS to redeliver.

use std::sync::Arc;

use chrono::Utc;
use tokio::sync::Semaphore;

use hosting_app::app::App;
use hosting_app::delivery::{Deliverer, worker};
use hosting_app::metrics::{self, Metric};
use hosting_aws::sqs::{QueuedDelivery, SqsQueue};
use hosting_domain::error::StoreError;

/// A message as received: the id its batch knows it by (the Lambda event's `messageId`, or the
/// receipt handle in a local process) and its body.
#[derive(Debug, Clone)]
pub struct Received {
    pub id: String,
    pub body: String,
}

/// Runs every message of a batch at once, each on its own task, and returns the ids of those to
/// keep: every other message is settled and may be deleted. `guard` is dropped as soon as its
/// own message is settled (a local worker's slot), not when the whole batch is.
pub async fn run_batch<G: Send + 'static>(
    app: &App,
    queue: &SqsQueue,
    deliverer: &Deliverer,
    batch: Vec<(Received, G)>,
) -> Vec<String> {
    let tasks: Vec<_> = batch
        .into_iter()
        .map(|(received, guard)| {
            let (app, queue, deliverer) = (app.clone(), queue.clone(), deliverer.clone());
            let id = received.id.clone();
            let task = tokio::spawn(async move {
                let _guard = guard;
                handle_message(&app, &queue, &deliverer, &received.body).await
            });
            (id, task)
        })
        .collect();
    let mut kept = Vec::new();
    for (id, task) in tasks {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                tracing::error!(message_id = %id, error = %err, "delivery kept for SQS to redeliver");
                kept.push(id);
            }
            Err(join) => {
                tracing::error!(message_id = %id, error = %join, "delivery task died; message kept");
                kept.push(id);
            }
        }
    }
    kept
}

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
            // It can never be read, so it would only come back: it goes to the dead-letter
            // queue as it came, for an operator to look at, and is counted.
            tracing::error!(error = %err, "unreadable delivery message dead-lettered");
            queue.dead_letter_raw(body).await?;
            metrics::count(Metric::UnreadableDeliveryMessages);
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

/// Receives as many messages (long polling, at most 10) as `in_flight` has room for and runs
/// them as a batch ([`run_batch`]) without waiting for it, then deletes the settled ones, as
/// Lambda's SQS event source does. Each message frees its slot when it is settled, so a
/// receiver that never answers holds one slot, not the poller or its batch's others. Returns
/// how many it started.
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
    let batch: Vec<(Received, _)> = messages
        .into_iter()
        .zip(permits)
        .map(|(message, permit)| {
            let received = Received {
                id: message.receipt_handle().unwrap_or_default().to_owned(),
                body: message.body().unwrap_or_default().to_owned(),
            };
            (received, permit)
        })
        .collect();
    let (app, queue, deliverer) = (app.clone(), queue.clone(), deliverer.clone());
    tokio::spawn(async move {
        let receipts: Vec<String> = batch.iter().map(|(r, _)| r.id.clone()).collect();
        let kept = run_batch(&app, &queue, &deliverer, batch).await;
        let settled = receipts.into_iter().filter(|r| !kept.contains(r));
        if let Err(err) = queue.delete_received(settled).await {
            // Left undeleted, they come back after their visibility timeout and are settled
            // again: a duplicate at worst, which receivers deduplicate.
            tracing::error!(error = %err, "settled deliveries not deleted");
        }
    });
    Ok(count)
}
