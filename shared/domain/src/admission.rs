//! Admission of the request a task is serving. A read is counted against the rate limit
//! while its handler runs (`hosting_http::pipeline`); the store reads whose cost grows with
//! what they return (a page of streams, an analytics window, a webhook list, a delivery log)
//! first wait here for the count to admit the request. A refused request is dropped while it
//! waits, so it never makes them. The cheap reads before them (a brand's counters, a
//! webhook's item) still run alongside the count, which keeps a read's round trips in
//! sequence as few as before.
//!
//! A start (`POST /streams`) is counted the same way: its first read, the brand's counters,
//! goes alongside the count, and its writes (the idempotency key's hold, the stream's
//! transaction) wait here. Every other write is counted before its handler runs.
//!
//! Work that runs outside such a request (writes counted before they run,
//! background functions, seeding, tests calling the store) finds the gate open.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

tokio::task_local! {
    static GATE: Gate;
}

/// The gate's state: a flag and whoever waits for it (one small allocation per request).
#[derive(Default)]
struct Opened {
    open: AtomicBool,
    waiters: Notify,
}

/// The waiting side of a request's admission.
#[derive(Clone)]
pub struct Gate(Arc<Opened>);

/// The deciding side: [`Admission::admit`] lets the request's gated reads run. Dropped
/// without admitting, it leaves them waiting for good: the request is then dropped too.
pub struct Admission(Arc<Opened>);

/// A closed gate and what opens it.
pub fn gate() -> (Admission, Gate) {
    let opened = Arc::new(Opened::default());
    (Admission(opened.clone()), Gate(opened))
}

impl Admission {
    pub fn admit(&self) {
        self.0.open.store(true, Ordering::Release);
        self.0.waiters.notify_waiters();
    }
}

/// Runs `work` behind `gate`: every [`admitted`] inside it waits for the gate.
pub async fn behind<F: Future>(gate: Gate, work: F) -> F::Output {
    GATE.scope(gate, work).await
}

/// Waits until the request this task serves is admitted; at once outside a gated request.
/// A refused request's reads wait for good: whoever holds the request drops it.
pub async fn admitted() {
    let Ok(opened) = GATE.try_with(|gate| gate.0.clone()) else {
        return;
    };
    loop {
        // Registered before the flag is read, so that an admission in between is not missed.
        let mut notified = pin!(opened.waiters.notified());
        notified.as_mut().enable();
        if opened.open.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn open_outside_a_request() {
        tokio::time::timeout(Duration::from_secs(1), admitted())
            .await
            .expect("no gate, no wait");
    }

    #[tokio::test]
    async fn waits_until_admitted() {
        let (admission, gate) = gate();
        let work = behind(gate.clone(), async {
            admitted().await;
            "read"
        });
        let mut work = std::pin::pin!(work);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), &mut work)
                .await
                .is_err(),
            "closed until admitted"
        );
        admission.admit();
        assert_eq!(work.await, "read");
        // Once admitted, later reads of the request do not wait.
        behind(gate, admitted()).await;
    }

    #[tokio::test]
    async fn a_refusal_never_opens_it() {
        let (admission, gate) = gate();
        drop(admission);
        let work = behind(gate, admitted());
        assert!(
            tokio::time::timeout(Duration::from_millis(20), work)
                .await
                .is_err()
        );
    }
}
