//! What acts on an active stream when something it has stored falls due: its deadline (the
//! preparing timeout or the duration end, docs/lifecycle.md, "Deadlines"), a dispatch retry or the
//! end of a reconnect window (docs/lifecycle.md, "The show goes on"). Its timers are the precise
//! path; the sweep is the safety net for a timer that was lost (a process that died with its
//! in-process timers, a schedule that was never created, an invocation that was dropped). Both make
//! the same conditional change, so running both changes a stream once.

use futures_util::StreamExt;

use super::destinations::ActiveEgresses;
use crate::app::App;
use crate::service::{rooms, shows, streams};
use crate::sweep_budget::SweepBudget;
use hosting_domain::error::StoreError;
use hosting_domain::host::Due;
use hosting_domain::ports::Timer;
use hosting_domain::{Stream, TimerKind, Transition};

/// Overdue streams handled per sweep pass.
const SWEEP_BATCH: usize = 100;
/// Overdue streams of a pass acted on at once: each is its own items and its own LiveKit
/// calls, so a pass waits on the store and LiveKit for up to 8 streams together rather than
/// one after another (BENCHMARKS.md, "Egress read-back").
const SWEEP_CONCURRENCY: usize = 8;

/// Host read-backs a sweep makes at most (docs/livekit.md, "Read-backs"): the rest wait for the
/// next sweep, so a sweep's LiveKit calls stay bounded whatever the number of live streams.
pub const HOST_READBACKS_PER_SWEEP: usize = 500;

/// What the streams of one sweep share: LiveKit's active egresses, read once for all, and the
/// host read-backs still allowed.
struct SweepReads {
    egresses: ActiveEgresses,
    host_reads_left: std::sync::atomic::AtomicUsize,
}

impl SweepReads {
    fn new(host_reads: usize) -> Self {
        Self {
            egresses: ActiveEgresses::new(),
            host_reads_left: std::sync::atomic::AtomicUsize::new(host_reads),
        }
    }

    /// Takes one host read-back; `false` when the sweep has made its last.
    fn take_host_read(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.host_reads_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }
}

/// How early a timer handed over by the timer queue may arrive: its delay is the whole seconds
/// that remained, rounded down (docs/lifecycle.md, "Timers on AWS").
pub const HANDED_EARLY: std::time::Duration = std::time::Duration::from_secs(1);

/// Fires a timer the timer queue handed over: one that arrived less than [`HANDED_EARLY`]
/// before its moment waits for it on the app's clock, then fires; one earlier than that is
/// armed again, as [`fire`] does.
pub async fn fire_handed(app: &App, timer: &Timer) -> Result<bool, StoreError> {
    if let Ok(wait) = (timer.due_at - app.clock.now()).to_std()
        && wait <= HANDED_EARLY
    {
        tokio::time::sleep(wait).await;
    }
    fire(app, timer).await
}

/// Applies a timer; `true` when it changed the stream. A timer that fires before its due
/// time changes nothing and is armed again for its due time: on AWS that is every Scheduler
/// run, which hands the timer to the timer queue for its last seconds (docs/lifecycle.md,
/// "Timers on AWS").
pub async fn fire(app: &App, timer: &Timer) -> Result<bool, StoreError> {
    if app.clock.now() < timer.due_at {
        tracing::debug!(stream_id = %timer.stream_id, timer = timer.kind.as_str(), due_at = %timer.due_at, "timer before its moment; armed again");
        app.timers.schedule(*timer).await?;
        return Ok(false);
    }
    // A show's timer: its id is the show's (docs/shows.md).
    if matches!(timer.kind, TimerKind::ShowStart | TimerKind::ShowReminder) {
        return shows::act_on_due(app, timer.stream_id).await;
    }
    let Some(current) = app.streams().get_stream(timer.stream_id).await? else {
        return Ok(false);
    };
    // The stream may have moved on (a preparing timeout is moot once live, a window closed
    // when the agent came back): whatever is due now acts, whichever timer fired. A read-back
    // that found the room as recorded changed nothing but its own next time.
    let acted = act_on_due_with(app, &current, &SweepReads::new(1)).await?;
    Ok(acted == Acted::Changed)
}

/// Acts on every active stream with something due, then attempts the room cleanups that are
/// due ([`rooms::sweep`]); returns how many streams it changed. Within the default budget.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    sweep_within(app, SweepBudget::default()).await
}

/// [`sweep`], taking no further batch of overdue streams once `budget` is spent: the rest is
/// the next run's.
pub async fn sweep_within(app: &App, budget: SweepBudget) -> Result<usize, StoreError> {
    if let Err(err) = shows::sweep(app).await {
        tracing::error!(error = %err, "show sweep failed; retried by the next sweep");
    }
    let changed = end_overdue(app, budget).await;
    if let Err(err) = rooms::sweep(app).await {
        tracing::error!(error = %err, "room cleanup sweep failed; retried by the next sweep");
    }
    if let Err(err) = super::clips::sweep(app).await {
        tracing::error!(error = %err, "clip sweep failed; retried by the next sweep");
    }
    changed
}

async fn end_overdue(app: &App, budget: SweepBudget) -> Result<usize, StoreError> {
    let mut changed = 0;
    // LiveKit's active egresses, read once for every stream this run reads back.
    let reads = SweepReads::new(HOST_READBACKS_PER_SWEEP);
    loop {
        let overdue = app
            .stream_lists()
            .overdue_streams(app.clock.now(), SWEEP_BATCH)
            .await?;
        let count = overdue.len();
        let shared_reads = &reads;
        let results: Vec<_> = futures_util::stream::iter(overdue)
            .map(|stream| async move {
                let result = act_on_due_with(app, &stream, shared_reads).await;
                if let Err(err) = &result {
                    tracing::error!(stream_id = %stream.id, error = %err, "sweep could not act on a stream");
                }
                result
            })
            .buffer_unordered(SWEEP_CONCURRENCY)
            .collect()
            .await;
        // A read-back claimed moves its stream off the due page too: the sweep goes on.
        let changed_now = results
            .iter()
            .filter(|r| matches!(r, Ok(Acted::Changed | Acted::ReadBack)))
            .count();
        changed += changed_now;
        if count < SWEEP_BATCH || changed_now == 0 {
            return Ok(changed);
        }
        if !budget.allows_another() {
            tracing::info!(changed, "sweep budget spent; the next run goes on");
            return Ok(changed);
        }
    }
}

/// The egress read-backs due now and nothing else (a process that drains before it stops, and
/// the tests' drop check): a finished stream's `processing` recording settled from LiveKit.
/// Reads at most `limit` due streams; how many it read back.
pub async fn read_back_egresses(app: &App, limit: usize) -> Result<usize, StoreError> {
    let now = app.clock.now();
    let active = ActiveEgresses::new();
    let mut read = 0;
    for stream in app.stream_lists().overdue_streams(now, limit).await? {
        if stream.due(now) == Some(Due::EgressCheck)
            && super::destinations::check(app, &stream, &active).await?
        {
            read += 1;
        }
    }
    Ok(read)
}

/// Whatever `stream` has due now; `true` when it changed the stream (a read-back that found
/// the room as recorded counts: its next time is claimed).
pub(crate) async fn act_on_due(app: &App, stream: &Stream) -> Result<bool, StoreError> {
    let acted = act_on_due_with(app, stream, &SweepReads::new(1)).await?;
    Ok(acted != Acted::Nothing)
}

/// What acting on a stream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Acted {
    /// Nothing was due, or another run had it.
    Nothing,
    /// A host read-back, claimed, found the room as recorded: only its next time changed.
    ReadBack,
    /// The stream changed.
    Changed,
}

impl From<bool> for Acted {
    fn from(changed: bool) -> Self {
        if changed {
            Acted::Changed
        } else {
            Acted::Nothing
        }
    }
}

/// [`act_on_due`] within a sweep's `reads`.
async fn act_on_due_with(
    app: &App,
    stream: &Stream,
    reads: &SweepReads,
) -> Result<Acted, StoreError> {
    let changed = match stream.due(app.clock.now()) {
        Some(Due::Deadline(transition)) => end_at_deadline(app, stream, transition).await?,
        Some(Due::WindowLapse) => {
            let lapsed = end_at_deadline(app, stream, Transition::HostLost).await?;
            if lapsed {
                crate::metrics::count(crate::metrics::Metric::ReconnectLapses);
            }
            lapsed
        }
        Some(Due::Dispatch) => super::host::dispatch_again(app, stream).await?,
        Some(Due::HostCheck) if !reads.take_host_read() => false,
        Some(Due::HostCheck) => match super::host::read_back(app, stream).await? {
            super::host::ReadBack::NotClaimed => false,
            super::host::ReadBack::Applied => true,
            // A read-back that changed nothing leaves this pass to whatever else is due with
            // it (an egress read-back or start), which would otherwise wait for the next.
            super::host::ReadBack::Unchanged(claimed) => {
                if !matches!(claimed.due(app.clock.now()), None | Some(Due::HostCheck)) {
                    let then = Box::pin(act_on_due_with(app, &claimed, reads)).await?;
                    if then == Acted::Changed {
                        return Ok(then);
                    }
                }
                return Ok(Acted::ReadBack);
            }
        },
        Some(Due::EgressStart) => super::destinations::start_owed(app, stream).await?,
        Some(Due::EgressCheck) => super::destinations::check(app, stream, &reads.egresses).await?,
        None => false,
    };
    Ok(Acted::from(changed))
}

/// `transition` at `stream`'s passed deadline, with its clean-up. It happens as of the
/// deadline itself, however late the timer or the sweep runs (never later than now): a
/// stream's `ended_at`, and the live time analytics count, is its deadline (or, in a reconnect
/// window, the drop that opened it).
async fn end_at_deadline(
    app: &App,
    stream: &Stream,
    transition: Transition,
) -> Result<bool, StoreError> {
    let now = app.clock.now();
    let at = stream.deadline.map_or(now, |deadline| deadline.min(now));
    let Some(applied) = super::apply_transition(app, stream, transition, at, None)
        .await?
        .applied()
    else {
        return Ok(false);
    };
    tracing::info!(stream_id = %applied.stream.id, status = applied.stream.status.as_str(), "deadline reached");
    streams::after_final(app, &applied).await;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::SweepReads;

    #[test]
    fn a_sweep_takes_its_host_read_backs_up_to_its_bound_and_no_more() {
        let reads = SweepReads::new(2);
        assert!(reads.take_host_read());
        assert!(reads.take_host_read());
        assert!(!reads.take_host_read(), "the rest wait for the next sweep");
        assert!(!reads.take_host_read());
    }
}
