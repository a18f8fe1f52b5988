//! Test helpers (docs/test-helpers.md): a test key drives its live test stream through what
//! only the room provider does to a live stream: viewers, the host leaving, a failure. Each is
//! the same conditional change the provider's events make, so it races a `DELETE`, a timer or
//! another helper like they do: exactly one wins, with one event.

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::service::streams;
use hosting_domain::destination::{Destination, parse_test_failure};
use hosting_domain::error::{ApiError, ApiResult};
use hosting_domain::ports::ViewerChange;
use hosting_domain::stream::{StreamDetail, Transition};
use hosting_domain::validation::SetViewersRequest;
use hosting_domain::{Caller, Stream, StreamStatus};

/// The caller's live test stream with this path id (`None`: the path named nothing). A live
/// key, a live key's stream, an absent, foreign or malformed id and a stream that is not `live`
/// are all not found, as for `DELETE`.
async fn live_test_stream(app: &App, caller: &Caller, id: Option<Uuid>) -> ApiResult<Stream> {
    if !caller.is_test() {
        return Err(ApiError::NotFound);
    }
    let id = id.ok_or(ApiError::NotFound)?;
    streams::find_own(app, caller, id)
        .await
        .filter(|stream| stream.test && stream.status == StreamStatus::Live)
        .ok_or(ApiError::NotFound)
}

/// `POST /test_helpers/streams/{id}/viewers`: the body is checked before the stream.
pub async fn set_viewers(
    app: &App,
    caller: &Caller,
    id: Option<Uuid>,
    body: &Map<String, Value>,
) -> ApiResult<StreamDetail> {
    let request = SetViewersRequest::parse(body)?;
    let stream = live_test_stream(app, caller, id).await?;
    app.streams()
        .adjust_viewer_count(
            &stream,
            ViewerChange::To(request.count),
            app.clock.now(),
            None,
        )
        .await?
        .applied()
        // It finished between the read and the write.
        .ok_or(ApiError::NotFound)?;
    let updated = Stream {
        viewer_count: request.count,
        ..stream
    };
    streams::detail(app, &updated).await
}

/// `POST /test_helpers/streams/{id}/finish`: as if the host had left.
pub async fn finish(app: &App, caller: &Caller, id: Option<Uuid>) -> ApiResult<StreamDetail> {
    end(app, caller, id, Transition::HostLeft).await
}

/// `POST /test_helpers/streams/{id}/fail`: as if the room provider had failed while live.
pub async fn fail(app: &App, caller: &Caller, id: Option<Uuid>) -> ApiResult<StreamDetail> {
    end(app, caller, id, Transition::ProviderFailed).await
}

async fn end(
    app: &App,
    caller: &Caller,
    id: Option<Uuid>,
    transition: Transition,
) -> ApiResult<StreamDetail> {
    let stream = live_test_stream(app, caller, id).await?;
    let applied = super::apply_transition(app, &stream, transition, app.clock.now(), None)
        .await?
        .applied()
        // Someone else ended it between the read and the write.
        .ok_or(ApiError::NotFound)?;
    streams::after_final(app, &applied).await;
    streams::detail(app, &applied.stream).await
}

/// `POST /test_helpers/streams/{id}/destinations/{destination_id}/fail`: the body (its optional
/// `error`) is checked before the stream; an unknown or final destination is not found.
pub async fn fail_destination(
    app: &App,
    caller: &Caller,
    id: Option<Uuid>,
    destination_id: &str,
    body: Option<&Map<String, Value>>,
) -> ApiResult<Destination> {
    let error = parse_test_failure(body)?;
    let stream = live_test_stream(app, caller, id).await?;
    super::destinations::fail_for_test(app, &stream, destination_id, &error).await
}
