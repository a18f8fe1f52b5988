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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

tokio::task_local! {
    static GATE: Gate;
}

/// The gate's state: whether it is open, and who waits for it (one small allocation per
/// request, and one more for the wakers once a read waits).
#[derive(Default)]
struct Opened(Mutex<Waiting>);

#[derive(Default)]
struct Waiting {
    open: bool,
    /// The waits' wakers, each once.
    wakers: Vec<Waker>,
}

impl Opened {
    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn poll_open(&self, cx: &Context<'_>) -> Poll<()> {
        let mut waiting = self.waiting();
        if waiting.open {
            return Poll::Ready(());
        }
        if !waiting.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            waiting.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
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
    /// Opens the gate. `polling` is the waker of the task that polls the gated work next, at
    /// once: the waits registered under it are not woken. Waking them would only queue that
    /// task to run once more after this poll, and wake an idle worker thread for it, which
    /// slows a read on the local server (BENCHMARKS.md, "Throughput"). Waits under any other
    /// waker are woken.
    pub fn admit(&self, polling: &Waker) {
        let wakers = {
            let mut waiting = self.0.waiting();
            waiting.open = true;
            std::mem::take(&mut waiting.wakers)
        };
        for waker in wakers {
            if !waker.will_wake(polling) {
                waker.wake();
            }
        }
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
    std::future::poll_fn(|cx| opened.poll_open(cx)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl std::task::Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Wakes {
        fn waker() -> (Arc<Self>, Waker) {
            let wakes = Arc::new(Self::default());
            (wakes.clone(), Waker::from(wakes))
        }

        fn count(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

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
        admission.admit(Waker::noop());
        assert_eq!(work.await, "read");
        // Once admitted, later reads of the request do not wait.
        behind(gate, admitted()).await;
    }

    #[test]
    fn admitting_wakes_the_waits_of_other_tasks() {
        let (admission, gate) = gate();
        let (wakes, waker) = Wakes::waker();
        let mut cx = Context::from_waker(&waker);
        let mut work = std::pin::pin!(behind(gate, async {
            // Two waits under one waker are woken once.
            tokio::join!(admitted(), admitted());
        }));
        assert!(work.as_mut().poll(&mut cx).is_pending());
        admission.admit(Waker::noop());
        assert_eq!(wakes.count(), 1);
        assert!(work.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn admitting_from_the_polling_task_wakes_nothing() {
        let (admission, gate) = gate();
        let (wakes, waker) = Wakes::waker();
        let mut cx = Context::from_waker(&waker);
        let mut work = std::pin::pin!(behind(gate, admitted()));
        assert!(work.as_mut().poll(&mut cx).is_pending());
        admission.admit(&waker);
        assert_eq!(wakes.count(), 0, "the task polls its work next itself");
        assert!(work.as_mut().poll(&mut cx).is_ready());
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
