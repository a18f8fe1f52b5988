//! The SQS delivery queue. SQS delays a message by at most 15 minutes, so a longer retry delay
//! travels in the message as `not_before`: a message received early is sent back with the
//! time that remains, hop after hop, until it is due.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, SendMessageBatchRequestEntry};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::describe;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{DeadLetter, Delivery, DeliveryQueue, StoreResult};

/// SQS's longest `DelaySeconds`.
pub const MAX_DELAY: Duration = Duration::from_secs(900);

/// The body of a delivery message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedDelivery {
    pub delivery: Delivery,
    /// Not to be attempted before this time.
    pub not_before: DateTime<Utc>,
}

/// A message body SQS accepts: JSON with every non-ASCII character escaped (`\uXXXX`, as
/// surrogate pairs above U+FFFF). SQS refuses bodies holding characters outside `#x9 #xA #xD
/// #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF` (a `U+FFFF` in a product name, say), and the
/// escapes read back as exactly the string that was sent, so the delivered body is the
/// signed one, byte for byte.
pub fn message_body<T: Serialize>(message: &T) -> StoreResult<String> {
    let json = serde_json::to_string(message).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(ascii_json(&json))
}

/// Escapes every non-ASCII character of a JSON text. Outside strings JSON is ASCII, so this
/// only rewrites string contents, as escapes that decode to the same characters.
fn ascii_json(json: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out
}

#[derive(Clone)]
pub struct SqsQueue {
    client: crate::LazyClient<Client>,
    queue_url: String,
    dlq_url: String,
}

/// SQS's most messages in one `SendMessageBatch`; and a batch's bytes, kept well below its
/// payload limit.
const SEND_BATCH_MESSAGES: usize = 10;
const SEND_BATCH_BYTES: usize = 200 * 1024;
const SEND_BATCH_ROUNDS: u32 = 4;

/// An entry a batch call failed: its id, SQS's code, and whether the entry itself is at fault
/// (sending it again cannot succeed).
struct FailedEntry {
    id: String,
    code: String,
    sender_fault: bool,
}

impl From<aws_sdk_sqs::types::BatchResultErrorEntry> for FailedEntry {
    fn from(entry: aws_sdk_sqs::types::BatchResultErrorEntry) -> Self {
        Self {
            id: entry.id,
            code: entry.code,
            sender_fault: entry.sender_fault,
        }
    }
}

/// Runs one batch request over `entries` (`(id, entry)`), whose answer names the entries that
/// failed, and runs it again over those, a few times, before giving up: SQS's batch calls
/// succeed while failing some of their entries. An entry at fault (SQS refused its contents)
/// is not sent again: the error names its code at once.
async fn retry_failed_entries<T, F, Fut>(
    what: &str,
    mut entries: Vec<(String, T)>,
    request: F,
) -> StoreResult<()>
where
    F: Fn(Vec<(String, T)>) -> Fut,
    Fut: std::future::Future<Output = StoreResult<Vec<FailedEntry>>>,
    T: Clone,
{
    let mut codes = Vec::new();
    for round in 0..SEND_BATCH_ROUNDS {
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(100 << round)).await;
        }
        let failed = request(entries.clone()).await?;
        if failed.is_empty() {
            return Ok(());
        }
        if let Some(refused) = failed.iter().find(|entry| entry.sender_fault) {
            return Err(StoreError::Backend(format!(
                "{what} refused an entry: {}",
                refused.code
            )));
        }
        codes = failed.iter().map(|entry| entry.code.clone()).collect();
        entries.retain(|(id, _)| failed.iter().any(|entry| entry.id == *id));
    }
    codes.sort();
    codes.dedup();
    Err(StoreError::Backend(format!(
        "{what} failed {} entries after every retry ({})",
        entries.len(),
        codes.join(", ")
    )))
}

impl SqsQueue {
    pub fn new(
        client: impl Into<crate::LazyClient<Client>>,
        queue_url: impl Into<String>,
        dlq_url: impl Into<String>,
    ) -> Self {
        Self {
            client: client.into(),
            queue_url: queue_url.into(),
            dlq_url: dlq_url.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn queue_url(&self) -> &str {
        &self.queue_url
    }

    pub fn dlq_url(&self) -> &str {
        &self.dlq_url
    }

    /// Sends `message` to become visible after `delay` (at most [`MAX_DELAY`]).
    pub async fn send(&self, message: &QueuedDelivery, delay: Duration) -> StoreResult<()> {
        let body = message_body(message)?;
        // Round up, so a message never arrives before it is due.
        let delay_secs = delay.min(MAX_DELAY).as_secs_f64().ceil() as i32;
        self.client
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .delay_seconds(delay_secs)
            .send()
            .await
            .map_err(|e| StoreError::Backend(describe(&e)))?;
        Ok(())
    }

    /// One `SendMessageBatch` of `(id, body)` entries; entries SQS reports failed are sent
    /// again, a few times, before giving up.
    async fn send_batch(&self, entries: Vec<(String, String)>) -> StoreResult<()> {
        retry_failed_entries("SendMessageBatch", entries, |entries| async move {
            let requests = entries
                .iter()
                .map(|(id, body)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(id)
                        .message_body(body)
                        .build()
                        .map_err(|e| StoreError::Backend(e.to_string()))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let out = self
                .client
                .send_message_batch()
                .queue_url(&self.queue_url)
                .set_entries(Some(requests))
                .send()
                .await
                .map_err(|e| StoreError::Backend(describe(&e)))?;
            Ok(out.failed.into_iter().map(FailedEntry::from).collect())
        })
        .await
    }

    /// Puts a message that cannot be read on the dead-letter queue as it came (it came from SQS,
    /// so SQS accepts its characters).
    pub async fn dead_letter_raw(&self, body: &str) -> StoreResult<()> {
        self.client
            .send_message()
            .queue_url(&self.dlq_url)
            .message_body(body)
            .send()
            .await
            .map_err(|e| StoreError::Backend(describe(&e)))?;
        Ok(())
    }

    /// Deletes received messages by receipt handle, `DeleteMessageBatch`es of up to 10,
    /// deleting again the entries SQS reports failed.
    pub async fn delete_received(
        &self,
        receipts: impl IntoIterator<Item = String>,
    ) -> StoreResult<()> {
        let receipts: Vec<String> = receipts.into_iter().collect();
        for chunk in receipts.chunks(SEND_BATCH_MESSAGES) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(n, receipt)| (format!("r{n}"), receipt.clone()))
                .collect();
            retry_failed_entries("DeleteMessageBatch", entries, |entries| async move {
                let requests = entries
                    .iter()
                    .map(|(id, receipt)| {
                        DeleteMessageBatchRequestEntry::builder()
                            .id(id)
                            .receipt_handle(receipt)
                            .build()
                            .map_err(|e| StoreError::Backend(e.to_string()))
                    })
                    .collect::<StoreResult<Vec<_>>>()?;
                let out = self
                    .client
                    .delete_message_batch()
                    .queue_url(&self.queue_url)
                    .set_entries(Some(requests))
                    .send()
                    .await
                    .map_err(|e| StoreError::Backend(describe(&e)))?;
                Ok(out.failed.into_iter().map(FailedEntry::from).collect())
            })
            .await?;
        }
        Ok(())
    }

    /// What to do with a received message: `None` when it is due now; otherwise it has been
    /// sent back for the time that remains.
    pub async fn defer_if_early(
        &self,
        message: &QueuedDelivery,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Duration>> {
        match (message.not_before - now).to_std() {
            Ok(remaining) if remaining > Duration::from_millis(500) => {
                self.send(message, remaining).await?;
                Ok(Some(remaining))
            }
            _ => Ok(None),
        }
    }
}

/// What [`SqsQueue::replay_dead_letters`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Replayed {
    /// Sent back to the delivery queue, each as a new delivery (attempt 1).
    pub replayed: u64,
    /// Left in the dead-letter queue: failed before `since`.
    pub kept: u64,
    /// Left in the dead-letter queue: not a delivery this version can read.
    pub unreadable: u64,
}

impl SqsQueue {
    /// Moves the dead-letter queue's deliveries that failed at or after `since` (all when
    /// `None`) back to the delivery queue, each as a new delivery. A message is deleted from
    /// the dead-letter queue only once its copy was sent, so an interrupted replay repeats a
    /// delivery at worst (receivers deduplicate on the event id) and never loses one. Messages
    /// SQS moved there itself after too many receives hold a queued delivery, and count as
    /// failed when SQS received them first.
    pub async fn replay_dead_letters(&self, since: Option<DateTime<Utc>>) -> StoreResult<Replayed> {
        // Kept messages stay invisible for the rest of the run, so each is read once, then
        // are made visible again.
        const HOLD_SECS: i32 = 300;
        let mut summary = Replayed::default();
        let mut held: Vec<String> = Vec::new();
        loop {
            let received = self
                .client
                .receive_message()
                .queue_url(&self.dlq_url)
                .max_number_of_messages(10)
                .visibility_timeout(HOLD_SECS)
                .wait_time_seconds(1)
                .message_system_attribute_names(
                    aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp,
                )
                .send()
                .await
                .map_err(|e| StoreError::Backend(describe(&e)))?;
            let messages = received.messages.unwrap_or_default();
            if messages.is_empty() {
                for receipt in held {
                    self.client
                        .change_message_visibility()
                        .queue_url(&self.dlq_url)
                        .receipt_handle(receipt)
                        .visibility_timeout(0)
                        .send()
                        .await
                        .map_err(|e| StoreError::Backend(describe(&e)))?;
                }
                return Ok(summary);
            }
            for message in messages {
                let body = message.body().unwrap_or_default();
                let sent_at = message
                    .attributes()
                    .and_then(|a| {
                        a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp)
                    })
                    .and_then(|millis| millis.parse::<i64>().ok())
                    .and_then(DateTime::from_timestamp_millis);
                let found = match serde_json::from_str::<DeadLetter>(body) {
                    Ok(dead) => Some((dead.delivery, Some(dead.failed_at))),
                    Err(_) => serde_json::from_str::<QueuedDelivery>(body)
                        .ok()
                        .map(|queued| (queued.delivery, sent_at)),
                };
                let receipt = message.receipt_handle().unwrap_or_default().to_owned();
                let Some((delivery, failed_at)) = found else {
                    summary.unreadable += 1;
                    held.push(receipt);
                    continue;
                };
                if let (Some(since), Some(failed_at)) = (since, failed_at)
                    && failed_at < since
                {
                    summary.kept += 1;
                    held.push(receipt);
                    continue;
                }
                let fresh = Delivery {
                    attempt: 1,
                    ..delivery
                };
                self.enqueue(fresh, Duration::ZERO).await?;
                self.client
                    .delete_message()
                    .queue_url(&self.dlq_url)
                    .receipt_handle(receipt)
                    .send()
                    .await
                    .map_err(|e| StoreError::Backend(describe(&e)))?;
                summary.replayed += 1;
            }
        }
    }
}

#[async_trait]
impl DeliveryQueue for SqsQueue {
    async fn enqueue(&self, delivery: Delivery, delay: Duration) -> StoreResult<()> {
        let not_before =
            Utc::now() + chrono::TimeDelta::from_std(delay).unwrap_or(chrono::TimeDelta::zero());
        self.send(
            &QueuedDelivery {
                delivery,
                not_before,
            },
            delay,
        )
        .await
    }

    /// `SendMessageBatch`es of up to 10 messages (and 200 KB), resending the entries SQS
    /// reports failed.
    async fn enqueue_now(&self, deliveries: Vec<Delivery>) -> StoreResult<()> {
        let not_before = Utc::now();
        let mut batch: Vec<(String, String)> = Vec::with_capacity(SEND_BATCH_MESSAGES);
        let mut bytes = 0;
        for (n, delivery) in deliveries.into_iter().enumerate() {
            let body = message_body(&QueuedDelivery {
                delivery,
                not_before,
            })?;
            if batch.len() == SEND_BATCH_MESSAGES || bytes + body.len() > SEND_BATCH_BYTES {
                self.send_batch(std::mem::take(&mut batch)).await?;
                bytes = 0;
            }
            bytes += body.len();
            batch.push((format!("m{n}"), body));
        }
        if !batch.is_empty() {
            self.send_batch(batch).await?;
        }
        Ok(())
    }

    async fn dead_letter(&self, dead: DeadLetter) -> StoreResult<()> {
        self.dead_letter_raw(&message_body(&dead)?).await
    }
}

/// The queue of cuts (docs/clips.md): one message per job, read by the clips function. A
/// message only names its clip; the clip's record is what makes the cut durable.
#[derive(Clone)]
pub struct SqsClipQueue {
    client: crate::LazyClient<Client>,
    queue_url: String,
}

impl SqsClipQueue {
    pub fn new(client: impl Into<crate::LazyClient<Client>>, queue_url: impl Into<String>) -> Self {
        Self {
            client: client.into(),
            queue_url: queue_url.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn queue_url(&self) -> &str {
        &self.queue_url
    }
}

#[async_trait]
impl hosting_domain::ports::ClipQueue for SqsClipQueue {
    async fn enqueue_cut(
        &self,
        job: hosting_domain::ports::ClipJob,
        delay: Duration,
    ) -> StoreResult<()> {
        let body = message_body(&job)?;
        // A longer wait is the sweep's: it sends the job again once the clip is due.
        let delay = i32::try_from(delay.min(MAX_DELAY).as_secs()).unwrap_or(0);
        self.client
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .map_err(|e| StoreError::Backend(describe(&e)))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_ascii_and_read_back_exactly() {
        let text = "Glow \u{FFFF} Serum \u{1F600} caf\u{e9} \u{0} \u{7}";
        let body = message_body(&serde_json::json!({ "body": text })).unwrap();
        assert!(body.is_ascii(), "{body}");
        assert!(
            body.contains("\\uffff") && body.contains("\\ud83d\\ude00"),
            "{body}"
        );
        let back: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(back["body"], text);
    }
}
