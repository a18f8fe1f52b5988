//! The rate limit (decisions.md section 6): 100 requests per brand per fixed UTC calendar
//! minute, across all of the brand's keys, counted in the store so it holds across instances.
//! Every answer to a request that was counted carries the standing it was counted at
//! (extensions.md E2: `RateLimit-Policy` and `RateLimit`).

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use crate::error::{ApiError, ApiResult, StoreError};
use crate::ports::RateLimitStore;

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

    /// The request itself was over the budget. Each request is admitted once, so this is
    /// where refusals are counted.
    pub fn admit(&self) -> ApiResult<()> {
        if self.count > REQUESTS_PER_MINUTE {
            crate::metrics::count(crate::metrics::Metric::RateLimitRefusals);
            return Err(ApiError::RateLimited);
        }
        Ok(())
    }

    /// `RateLimit`: requests left and seconds until the window resets.
    pub fn header(&self) -> String {
        format!("\"default\";r={};t={}", self.remaining(), self.reset_in)
    }

    pub fn write(&self, headers: &mut HeaderMap) {
        for (name, value) in [(POLICY_HEADER, policy()), (STANDING_HEADER, self.header())] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
    }
}

/// Counts one request of `brand_id` at `now`; the caller decides with [`Standing::admit`].
pub async fn count(
    store: &dyn RateLimitStore,
    brand_id: &str,
    now: DateTime<Utc>,
) -> Result<Standing, StoreError> {
    let start = window_start(now);
    let count = store.count_request(brand_id, start).await?;
    let left_ms = (start + TimeDelta::seconds(WINDOW_SECS as i64) - now).num_milliseconds();
    let reset_in = u64::try_from(left_ms)
        .unwrap_or(0)
        .div_ceil(1000)
        .clamp(1, WINDOW_SECS);
    Ok(Standing { count, reset_in })
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
}
