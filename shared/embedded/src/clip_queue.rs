use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::mpsc;

use hosting_domain::ports::{ClipJob, ClipQueue, StoreResult};

/// An in-process queue of cuts: delays are honoured with timers of the async runtime, so a job
/// lives only as long as the process (the clip's record outlives it, and the sweep queues its
/// cut again).
#[derive(Clone)]
pub struct EmbeddedClipQueue {
    ready: mpsc::UnboundedSender<ClipJob>,
    receiver: Arc<Mutex<Option<mpsc::UnboundedReceiver<ClipJob>>>>,
}

impl Default for EmbeddedClipQueue {
    fn default() -> Self {
        let (ready, receiver) = mpsc::unbounded_channel();
        Self {
            ready,
            receiver: Arc::new(Mutex::new(Some(receiver))),
        }
    }
}

impl EmbeddedClipQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// The consuming end; there is one, taken once by the cutting loop.
    pub fn take_receiver(&self) -> Option<mpsc::UnboundedReceiver<ClipJob>> {
        self.receiver
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

#[async_trait]
impl ClipQueue for EmbeddedClipQueue {
    async fn enqueue_cut(&self, job: ClipJob, delay: Duration) -> StoreResult<()> {
        if delay.is_zero() {
            let _ = self.ready.send(job);
        } else {
            let ready = self.ready.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = ready.send(job);
            });
        }
        Ok(())
    }
}
