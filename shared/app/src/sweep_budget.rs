//! How long a sweep may go on (ARCHITECTURE.md, "Reliability on AWS", sweeps). A sweep takes the backlog a batch at a time
//! and stops taking batches once its budget is spent, leaving the rest to its next run: in
//! Lambda an invocation that ran into its timeout would count as an error, be retried and end
//! in the dead-letter queue while its work was progressing.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a sweep leaves of its invocation's time for the batch in hand to finish.
pub const MARGIN: Duration = Duration::from_secs(15);
/// A sweep's budget where no invocation deadline bounds it (the local server's sweeps).
pub const DEFAULT: Duration = Duration::from_secs(30);

/// When a sweep stops taking batches.
#[derive(Debug, Clone, Copy)]
pub struct SweepBudget {
    until: Instant,
}

impl SweepBudget {
    /// A budget of `length` from now.
    pub fn of(length: Duration) -> Self {
        Self {
            until: Instant::now() + length,
        }
    }

    /// [`MARGIN`] before an invocation's deadline (milliseconds since the Unix epoch, as
    /// Lambda gives it), and never more than [`DEFAULT`] when the deadline cannot be read.
    pub fn before_deadline(deadline_epoch_ms: u64) -> Self {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_millis());
        let left = Duration::from_millis(
            u64::try_from(u128::from(deadline_epoch_ms).saturating_sub(now_ms)).unwrap_or(0),
        );
        match left.checked_sub(MARGIN) {
            Some(budget) if deadline_epoch_ms > 0 => Self::of(budget),
            Some(_) => Self::of(DEFAULT),
            // Under the margin already: one batch, then stop.
            None => Self::of(Duration::ZERO),
        }
    }

    /// Whether another batch may be taken.
    pub fn allows_another(&self) -> bool {
        Instant::now() < self.until
    }
}

impl Default for SweepBudget {
    fn default() -> Self {
        Self::of(DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_leaves_the_margin() {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert!(SweepBudget::before_deadline(now_ms + 60_000).allows_another());
        // Less time left than the margin: no further batch.
        assert!(!SweepBudget::before_deadline(now_ms + 10_000).allows_another());
        assert!(!SweepBudget::before_deadline(now_ms.saturating_sub(5_000)).allows_another());
        assert!(!SweepBudget::of(Duration::ZERO).allows_another());
        assert!(SweepBudget::default().allows_another());
    }
}
