//! The rate limit (docs/rate-limits.md, "The limit"): 100 requests per brand per fixed
//! UTC calendar minute, across all of the brand's keys, counted in the store so it holds across
//! instances. Every answer to a request that was counted carries the standing it was counted at
//! (docs/rate-limits.md, "Headers": `RateLimit-Policy` and `RateLimit`).
//!
//! The window is a fixed calendar minute, so a brand refused once stays refused until the
//! minute ends: each instance remembers its refusals ([`Refusals`]) and answers the brand's
//! further requests of that minute without counting them or reading anything for them.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use http::{HeaderMap, HeaderName, HeaderValue};

use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::ports::RateLimitStore;

pub const REQUESTS_PER_MINUTE: u64 = 100;
pub const WINDOW_SECS: u64 = 60;

pub const POLICY_HEADER: HeaderName = HeaderName::from_static("ratelimit-policy");
pub const STANDING_HEADER: HeaderName = HeaderName::from_static("ratelimit");

/// `RateLimit-Policy`: the one policy every keyed request is counted under.
pub fn policy() -> String {
    format!("\"default\";q={REQUESTS_PER_MINUTE};w={WINDOW_SECS}")
}

/// Start of the calendar minute holding `now`.
pub fn window_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now)
}

/// Whole seconds from `now` until its minute ends, 1 to 60.
pub fn reset_in(now: DateTime<Utc>) -> u64 {
    let end = window_start(now) + TimeDelta::seconds(WINDOW_SECS as i64);
    let left_ms = (end - now).num_milliseconds();
    u64::try_from(left_ms)
        .unwrap_or(0)
        .div_ceil(1000)
        .clamp(1, WINDOW_SECS)
}

/// Where a brand stands in the current minute once a request was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// Requests counted in the minute, this one included.
    pub count: u64,
    /// Whole seconds until the minute ends, 1 to 60.
    pub reset_in: u64,
}

impl Standing {
    /// Requests left in the minute after this one; never negative.
    pub fn remaining(&self) -> u64 {
        REQUESTS_PER_MINUTE.saturating_sub(self.count)
    }

    /// The standing of a request of a brand already refused in its minute: nothing left.
    pub fn refused(now: DateTime<Utc>) -> Self {
        Self {
            count: REQUESTS_PER_MINUTE + 1,
            reset_in: reset_in(now),
        }
    }

    /// The request itself was over the budget.
    pub fn refuses(&self) -> bool {
        self.count > REQUESTS_PER_MINUTE
    }

    /// [`Standing::refuses`] as the request's answer. Each request is admitted once, so this
    /// is where refusals are counted.
    pub fn admit(&self) -> ApiResult<()> {
        if self.refuses() {
            crate::metrics::count(crate::metrics::Metric::RateLimitRefusals);
            return Err(ApiError::RateLimited);
        }
        Ok(())
    }

    /// `RateLimit`: requests left and seconds until the window resets.
    pub fn header(&self) -> String {
        // Written piece by piece: a header of every counted request, without the formatter.
        let mut header = String::with_capacity(24);
        header.push_str("\"default\";r=");
        header.push_str(itoa::Buffer::new().format(self.remaining()));
        header.push_str(";t=");
        header.push_str(itoa::Buffer::new().format(self.reset_in));
        header
    }

    pub fn write(&self, headers: &mut HeaderMap) {
        // The policy never changes: its value is built once.
        static POLICY: LazyLock<HeaderValue> = LazyLock::new(|| {
            HeaderValue::try_from(policy()).expect("the policy is a valid header value")
        });
        headers.insert(POLICY_HEADER, POLICY.clone());
        // Taken as it is, without copying: digits and ASCII only.
        if let Ok(value) = HeaderValue::try_from(self.header()) {
            headers.insert(STANDING_HEADER, value);
        }
    }
}

/// Counts one request of `brand_id` at `now`; the caller decides with [`Standing::admit`].
pub async fn count(
    store: &dyn RateLimitStore,
    brand_id: &str,
    now: DateTime<Utc>,
) -> Result<Standing, StoreError> {
    let count = store.count_request(brand_id, window_start(now)).await?;
    Ok(Standing {
        count,
        reset_in: reset_in(now),
    })
}

/// Brands remembered at most; past it, further refusals of the minute are not remembered
/// (those brands' requests are counted and refused by the store as before).
const MAX_REFUSED_BRANDS: usize = 10_000;

/// The brands this instance saw refused in the current minute. Entries last until the
/// minute ends: the first refusal remembered in a later minute forgets every earlier one.
#[derive(Default)]
pub struct Refusals(Mutex<RefusedIn>);

#[derive(Default)]
struct RefusedIn {
    window: Option<DateTime<Utc>>,
    brands: HashSet<String>,
}

impl Refusals {
    /// Remembers that a request of `brand_id` counted at `counted_at` was refused.
    pub fn remember(&self, brand_id: &str, counted_at: DateTime<Utc>) {
        let window = window_start(counted_at);
        let mut refused = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match refused.window {
            // A count that started before the current minute says nothing about it.
            Some(current) if current > window => return,
            Some(current) if current == window => {}
            _ => {
                refused.window = Some(window);
                refused.brands.clear();
            }
        }
        if refused.brands.len() < MAX_REFUSED_BRANDS {
            refused.brands.insert(brand_id.to_owned());
        }
    }

    /// The standing of a request of `brand_id` at `now` if the brand was refused earlier in
    /// the same minute.
    pub fn standing(&self, brand_id: &str, now: DateTime<Utc>) -> Option<Standing> {
        let refused = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (refused.window == Some(window_start(now)) && refused.brands.contains(brand_id))
            .then(|| Standing::refused(now))
    }

    /// Brands remembered, for tests of the bound.
    pub fn len(&self) -> usize {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .brands
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standing_headers() {
        let standing = Standing {
            count: 1,
            reset_in: 60,
        };
        assert_eq!(standing.header(), "\"default\";r=99;t=60");
        assert_eq!(policy(), "\"default\";q=100;w=60");
        let over = Standing {
            count: 150,
            reset_in: 1,
        };
        assert_eq!(over.remaining(), 0);
        assert!(over.admit().is_err());
        assert!(
            Standing {
                count: 100,
                reset_in: 1
            }
            .admit()
            .is_ok()
        );
    }

    fn at(h: u32, m: u32, s: u32, ms: i64) -> DateTime<Utc> {
        use chrono::TimeZone;
        Utc.with_ymd_and_hms(2026, 3, 2, h, m, s).unwrap() + TimeDelta::milliseconds(ms)
    }

    #[test]
    fn reset_in_rounds_up_to_whole_seconds() {
        assert_eq!(reset_in(at(12, 0, 0, 0)), 60);
        assert_eq!(reset_in(at(12, 0, 30, 0)), 30);
        assert_eq!(reset_in(at(12, 0, 59, 500)), 1);
        assert_eq!(reset_in(at(12, 0, 29, 1)), 31);
    }

    #[test]
    fn refusals_last_until_the_minute_ends() {
        let refusals = Refusals::default();
        refusals.remember("a", at(12, 0, 30, 0));
        let standing = refusals.standing("a", at(12, 0, 59, 999)).unwrap();
        assert_eq!(standing.header(), "\"default\";r=0;t=1");
        assert!(standing.admit().is_err());
        assert_eq!(refusals.standing("b", at(12, 0, 31, 0)), None);
        assert_eq!(refusals.standing("a", at(12, 1, 0, 0)), None);
        // A refusal of a new minute forgets the old minute's; a late one of the old minute
        // is not remembered.
        refusals.remember("b", at(12, 1, 0, 0));
        refusals.remember("a", at(12, 0, 59, 0));
        assert_eq!(refusals.len(), 1);
        assert!(refusals.standing("b", at(12, 1, 10, 0)).is_some());
        assert_eq!(refusals.standing("a", at(12, 1, 10, 0)), None);
    }

    #[test]
    fn refusals_are_bounded() {
        let refusals = Refusals::default();
        let now = at(12, 0, 0, 0);
        for i in 0..MAX_REFUSED_BRANDS + 10 {
            refusals.remember(&format!("brand_{i}"), now);
        }
        assert_eq!(refusals.len(), MAX_REFUSED_BRANDS);
        assert!(refusals.standing("brand_0", now).is_some());
        assert_eq!(
            refusals.standing(&format!("brand_{MAX_REFUSED_BRANDS}"), now),
            None
        );
    }
}
