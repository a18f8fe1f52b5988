//! The rate limit (decisions.md section 6): 100 requests per brand per fixed UTC calendar
//! minute, across all of the brand's keys, counted in the store so it holds across instances.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use crate::error::{ApiError, ApiResult};
use crate::ports::RateLimitStore;

pub const REQUESTS_PER_MINUTE: u64 = 100;

/// Start of the calendar minute holding `now`.
pub fn window_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now)
}

/// Counts the request, and refuses it when it is past the minute's budget.
pub async fn check(
    store: &dyn RateLimitStore,
    brand_id: &str,
    now: DateTime<Utc>,
) -> ApiResult<()> {
    let count = store.count_request(brand_id, window_start(now)).await?;
    if count > REQUESTS_PER_MINUTE {
        return Err(ApiError::RateLimited);
    }
    Ok(())
}
