//! The cuts (docs/clips.md): each job names a clip, and [`hosting_app::service::clips::cut`]
//! does the rest. The clips function runs batches from SQS through [`run_batch`]; the local
//! server runs the same on its queue, in the process or on SQS ([`run_local`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::LocalClipQueue;
use hosting_app::App;
use hosting_app::service::clips;
use hosting_domain::ports::ClipJob;

/// Cuts the local server makes at once; each holds at most one read window (4 MiB) and the
/// source's index.
pub const LOCAL_CUTS_IN_FLIGHT: usize = 2;
/// How long the local SQS poll waits for a message.
const WAIT_SECONDS: i32 = 1;

/// Runs a batch of messages (`(id, body)`), one cut each, at once; returns the ids to receive
/// again (the store failed before the cut was decided). A body that names no clip is dropped:
/// receiving it again would not help.
pub async fn run_batch(app: &App, batch: Vec<(String, String)>) -> Vec<String> {
    let runs = batch.into_iter().map(|(id, body)| async move {
        let Ok(job) = serde_json::from_str::<ClipJob>(&body) else {
            tracing::error!(message_id = %id, "a clips message that names no clip; dropped");
            return None;
        };
        match clips::cut(app, &job).await {
            Ok(outcome) => {
                tracing::debug!(clip_id = %job.clip_id, ?outcome, "cut job done");
                None
            }
            Err(err) => {
                tracing::error!(clip_id = %job.clip_id, error = %err, "cut job failed; received again");
                Some(id)
            }
        }
    });
    futures_util::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The local server's cutting loop, forever.
pub async fn run_local(app: App, queue: LocalClipQueue) {
    let in_flight = Arc::new(Semaphore::new(LOCAL_CUTS_IN_FLIGHT));
    match queue {
        LocalClipQueue::Embedded(queue) => {
            let Some(mut ready) = queue.take_receiver() else {
                tracing::error!("the cutting loop is already running");
                return;
            };
            while let Some(job) = ready.recv().await {
                let Ok(permit) = in_flight.clone().acquire_owned().await else {
                    return;
                };
                let app = app.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    if let Err(err) = clips::cut(&app, &job).await {
                        tracing::error!(clip_id = %job.clip_id, error = %err, "cut job failed; queued again");
                        let _ = app
                            .clip_queue
                            .enqueue_cut(job, Duration::from_secs(1))
                            .await;
                    }
                });
            }
        }
        LocalClipQueue::Sqs(queue) => loop {
            let received = queue
                .client()
                .receive_message()
                .queue_url(queue.queue_url())
                .max_number_of_messages(LOCAL_CUTS_IN_FLIGHT as i32)
                .wait_time_seconds(WAIT_SECONDS)
                .send()
                .await;
            let messages = match received {
                Ok(out) => out.messages.unwrap_or_default(),
                Err(err) => {
                    tracing::error!(error = %hosting_aws::describe(&err), "clips queue poll failed");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                }
            };
            let batch: Vec<(String, String)> = messages
                .iter()
                .map(|m| {
                    (
                        m.receipt_handle().unwrap_or_default().to_owned(),
                        m.body().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            let receipts: Vec<String> = batch.iter().map(|(r, _)| r.clone()).collect();
            let kept = run_batch(&app, batch).await;
            for receipt in receipts.into_iter().filter(|r| !kept.contains(r)) {
                let deleted = queue
                    .client()
                    .delete_message()
                    .queue_url(queue.queue_url())
                    .receipt_handle(receipt)
                    .send()
                    .await;
                if let Err(err) = deleted {
                    // Received again after its visibility timeout: the cut finds its clip done.
                    tracing::warn!(error = %hosting_aws::describe(&err), "cut message not deleted");
                }
            }
        },
    }
}
