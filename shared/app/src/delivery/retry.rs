//! When to try again (docs/webhooks.md, "Retries"): after 30 s, 5 min, 30 min, 2 h and 8 h by
//! default (`WEBHOOK_RETRY_DELAYS_SECS`), each +-20% jitter, then dead-letter.

use std::time::Duration;

use rand::Rng;

/// Relative jitter applied to every scheduled delay.
pub const JITTER: f64 = 0.2;

/// The delay before the attempt after failed attempt `attempt` (1-based), or `None` when the
/// retries are used up. A receiver's `Retry-After` can lengthen the delay, up to the longest
/// configured one, but never shorten it.
pub fn next_delay(
    delays: &[Duration],
    attempt: u32,
    retry_after: Option<Duration>,
) -> Option<Duration> {
    let scheduled = *delays.get(usize::try_from(attempt).ok()?.checked_sub(1)?)?;
    let factor = 1.0 + rand::rng().random_range(-JITTER..=JITTER);
    let jittered = scheduled.mul_f64(factor);
    let ceiling = delays.iter().max().copied().unwrap_or_default();
    Some(match retry_after {
        Some(asked) if asked > jittered => asked.min(ceiling.max(jittered)),
        _ => jittered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &[u64]) -> Vec<Duration> {
        s.iter().copied().map(Duration::from_secs).collect()
    }

    #[test]
    fn five_retries_with_jitter_then_none() {
        let delays = secs(&[30, 300, 1800, 7200, 28800]);
        for (attempt, base) in [
            (1, 30.0),
            (2, 300.0),
            (3, 1800.0),
            (4, 7200.0),
            (5, 28800.0),
        ] {
            for _ in 0..200 {
                let d = next_delay(&delays, attempt, None).unwrap().as_secs_f64();
                assert!(
                    d >= base * 0.8 - 1e-9 && d <= base * 1.2 + 1e-9,
                    "{attempt}: {d}"
                );
            }
        }
        assert_eq!(next_delay(&delays, 6, None), None);
        assert_eq!(next_delay(&delays, 0, None), None);
    }

    /// The delays spread over the jitter's range, so receivers that failed together are not
    /// retried together: without the jitter every draw is the same delay.
    #[test]
    fn the_jitter_spreads_retries() {
        let delays = secs(&[300]);
        let draws: Vec<f64> = (0..400)
            .map(|_| next_delay(&delays, 1, None).unwrap().as_secs_f64())
            .collect();
        let (low, high) = draws
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), d| (lo.min(*d), hi.max(*d)));
        // 400 uniform draws over +-20%: below -10% and above +10% with certainty in practice
        // (each misses with probability 0.75^400).
        assert!(low < 270.0 && high > 330.0, "{low}..{high}");
    }

    #[test]
    fn retry_after_lengthens_within_bounds() {
        let delays = secs(&[30, 300]);
        let d = next_delay(&delays, 1, Some(Duration::from_secs(120))).unwrap();
        assert_eq!(d, Duration::from_secs(120));
        // Capped at the longest configured delay.
        let d = next_delay(&delays, 1, Some(Duration::from_secs(86_400))).unwrap();
        assert_eq!(d, Duration::from_secs(300));
        // Never shorter than scheduled.
        let d = next_delay(&delays, 2, Some(Duration::from_secs(1))).unwrap();
        assert!(d >= Duration::from_secs(240));
    }
}
