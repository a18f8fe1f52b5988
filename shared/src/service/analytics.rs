//! `GET /analytics` (decisions.md section 5): the window's streams, aggregated by the rules of
//! [`crate::domain::analytics`]. Reads only the brand's streams created inside the window,
//! never its whole history.

use uuid::Uuid;

use crate::app::App;
use crate::domain::Caller;
use crate::domain::analytics::{Analytics, Period, aggregate};
use crate::error::ApiResult;

/// `GET /analytics`.
pub async fn get(
    app: &App,
    caller: &Caller,
    period: Option<&str>,
    stream_id: Option<&str>,
) -> ApiResult<Analytics> {
    let period = Period::parse(period)?;
    let since = app.clock.now() - period.length();
    let brand_id = caller.brand.id.as_str();
    let streams = match stream_id {
        None => app.store.streams_created_since(brand_id, since).await?,
        // One stream: an unknown, foreign, malformed or out-of-window id gives zeros.
        Some(raw) => match Uuid::parse_str(raw) {
            Err(_) => Vec::new(),
            Ok(id) => app
                .store
                .get_stream(id)
                .await?
                .filter(|s| s.brand_id == brand_id && s.created_at >= since)
                .into_iter()
                .collect(),
        },
    };
    Ok(aggregate(period, brand_id, &streams))
}
