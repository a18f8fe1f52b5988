//! The stream a start makes, shared by `POST /streams` and a scheduled show's start
//! (docs/shows.md): the vertical's checks, and the new stream in its first status.

use uuid::Uuid;

use super::streams::platform_permitted;
use crate::app::App;
use hosting_domain::account::LIVE_COMMERCE;
use hosting_domain::error::{ApiError, ApiResult};
use hosting_domain::recording::Recording;
use hosting_domain::stream::Egress;
use hosting_domain::stream::SOURCE_API;
use hosting_domain::validation::StartStreamRequest;
use hosting_domain::{Stream, StreamStatus};

/// The brand's vertical when it, the request's `vertical` and its platform agree
/// (`403 vertical_mismatch` otherwise, in that order).
pub(crate) fn check_vertical<'a>(
    brand_vertical: &'a str,
    request: &StartStreamRequest,
) -> ApiResult<&'a str> {
    if brand_vertical != LIVE_COMMERCE {
        return Err(ApiError::VerticalMismatch(
            "The brand's vertical is not served by this API.".into(),
        ));
    }
    if request
        .vertical
        .as_deref()
        .is_some_and(|v| v != brand_vertical)
    {
        return Err(ApiError::VerticalMismatch(format!(
            "vertical must match the brand's vertical, {brand_vertical}."
        )));
    }
    if !platform_permitted(brand_vertical, &request.platform) {
        return Err(ApiError::VerticalMismatch(format!(
            "platform is not permitted for the {brand_vertical} vertical."
        )));
    }
    Ok(brand_vertical)
}

/// What a new stream is made of, its checks passed.
pub(crate) struct NewStream {
    pub brand_id: String,
    pub vertical: String,
    pub test: bool,
    pub request: StartStreamRequest,
    pub destinations: Vec<hosting_domain::destination::Destination>,
    pub stream_keys: hosting_domain::destination::SealedStreamKeys,
    pub record: bool,
}

/// The stream a start creates now: a test key's live at once, a live key's `preparing` with
/// its launch's dispatch due.
pub(crate) fn new_stream(app: &App, new: NewStream) -> Stream {
    let NewStream {
        brand_id,
        vertical,
        test,
        request,
        destinations,
        stream_keys,
        record,
    } = new;
    let now = app.clock.now();
    let id = Uuid::new_v4();
    let stream = Stream {
        id,
        brand_id: brand_id.clone(),
        status: if test {
            StreamStatus::Live
        } else {
            StreamStatus::Preparing
        },
        platform: Some(request.platform),
        vertical,
        creator_id: Some(request.creator_id),
        product_name: request.product_name,
        source: SOURCE_API.to_owned(),
        room_name: Some(Stream::room_name_for(id)),
        viewer_count: 0,
        test,
        created_at: now,
        started_at: test.then_some(now),
        ended_at: None,
        duration_minutes: request.duration_minutes,
        script: request.script,
        end_reason: None,
        dispatches: 0,
        next_dispatch_at: None,
        agents: Vec::new(),
        host_check_at: None,
        host_lost_at: None,
        reconnect_until: None,
        revision: 0,
        deadline: None,
        destinations,
        egress: Egress {
            recording: record.then(|| Recording::new(&brand_id, id)),
            ..Egress::default()
        },
        stream_keys,
    };
    // Durable with the record: whatever dies after this, the sweep ends the stream on time,
    // and dispatches the agent again if it has not joined in time.
    let stream = Stream {
        deadline: stream.deadline_in_status(app.config.preparing_timeout),
        ..stream
    };
    if test {
        // Live at once: its destinations are `active` with it.
        let mut stream = stream;
        stream.destinations_follow_status(now);
        stream
    } else {
        stream.with_launch_dispatch(app.config.dispatch_retry, app.config.host_readback)
    }
}
