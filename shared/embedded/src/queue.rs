use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;

use hosting_domain::ports::{DeadLetter, Delivery, DeliveryQueue, StoreResult};

/// An in-process delivery queue: delays are honoured with timers of the async runtime, so
/// pending deliveries live only as long as the process.
#[derive(Clone)]
pub struct EmbeddedQueue {
    ready: mpsc::UnboundedSender<Delivery>,
    receiver: Arc<Mutex<Option<mpsc::UnboundedReceiver<Delivery>>>>,
    dead_letters: Arc<Mutex<Vec<DeadLetter>>>,
    /// Bodies containing this are refused, as SQS refuses a message it cannot take (tests of
    /// the relay's handling of one event that can never be queued).
    refused: Arc<Mutex<Option<String>>>,
    /// Messages sent since [`EmbeddedQueue::take_sent`] last looked: the queue's work, which
    /// tests compare with SQS's requests.
    sent: Arc<std::sync::atomic::AtomicU64>,
}

impl Default for EmbeddedQueue {
    fn default() -> Self {
        let (ready, receiver) = mpsc::unbounded_channel();
        Self {
            ready,
            receiver: Arc::new(Mutex::new(Some(receiver))),
            dead_letters: Arc::default(),
            refused: Arc::default(),
            sent: Arc::default(),
        }
    }
}

impl EmbeddedQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// The consuming end; there is one, taken once by the delivery loop.
    pub fn take_receiver(&self) -> Option<mpsc::UnboundedReceiver<Delivery>> {
        self.receiver
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Refuses deliveries whose body contains `needle` (`None`: accepts all again).
    pub fn refuse_bodies_containing(&self, needle: Option<&str>) {
        *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = needle.map(str::to_owned);
    }

    /// Messages sent since the last call.
    pub fn take_sent(&self) -> u64 {
        self.sent.swap(0, std::sync::atomic::Ordering::Relaxed)
    }

    pub fn dead_letters(&self) -> Vec<DeadLetter> {
        self.dead_letters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[async_trait]
impl DeliveryQueue for EmbeddedQueue {
    async fn enqueue(&self, delivery: Delivery, delay: Duration) -> StoreResult<()> {
        if let Some(needle) = &*self.refused.lock().unwrap_or_else(|p| p.into_inner())
            && delivery.body.contains(needle.as_str())
        {
            return Err(hosting_domain::error::StoreError::Backend(
                "the embedded queue refused the message".into(),
            ));
        }
        self.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if delay.is_zero() {
            let _ = self.ready.send(delivery);
        } else {
            let ready = self.ready.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = ready.send(delivery);
            });
        }
        Ok(())
    }

    async fn dead_letter(&self, dead: DeadLetter) -> StoreResult<()> {
        tracing::warn!(
            event_id = %dead.delivery.event_id,
            webhook_id = %dead.delivery.webhook_id,
            attempts = dead.delivery.attempt,
            error = %dead.last_error,
            "delivery dead-lettered"
        );
        self.dead_letters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(dead);
        Ok(())
    }
}
