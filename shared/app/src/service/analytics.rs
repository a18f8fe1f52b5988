//! `GET /analytics` (docs/analytics.md): the window's figures,
//! by the rules of [`hosting_domain::analytics`]. The store answers a window from aggregates
//! kept as streams change, so a call costs the same with 200 or 200,000 streams in it.

use uuid::Uuid;

use crate::app::App;
use hosting_domain::Caller;
use hosting_domain::analytics::{Analytics, Period, Window, aggregate, answer};
use hosting_domain::error::ApiResult;

/// `GET /analytics`.
pub async fn get(
    app: &App,
    caller: &Caller,
    period: Option<&str>,
    stream_id: Option<&str>,
) -> ApiResult<Analytics> {
    let period = Period::parse(period)?;
    let now = app.clock.now();
    let since = now - period.length();
    let brand_id = caller.brand.id.as_str();
    let window: Window = match stream_id {
        None => {
            app.stream_lists()
                .analytics_window(brand_id, since, now)
                .await?
        }
        // One stream: an unknown, foreign, malformed or out-of-window id gives zeros.
        Some(raw) => match Uuid::parse_str(raw) {
            Err(_) => Window::default(),
            Ok(id) => {
                let stream = app
                    .streams()
                    .get_stream(id)
                    .await?
                    .filter(|s| s.brand_id == brand_id && s.created_at >= since);
                return Ok(aggregate(period, brand_id, &Vec::from_iter(stream)));
            }
        },
    };
    Ok(answer(period, brand_id, window))
}
