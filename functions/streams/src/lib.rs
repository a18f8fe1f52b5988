//! `POST /streams`, `GET /streams`, `GET /streams/{id}`, `DELETE /streams/{id}`, a stream's
//! destinations (`POST /streams/{id}/destinations`, `DELETE
//! /streams/{id}/destinations/{destination_id}`), its clips (`POST` and `GET
//! /streams/{id}/clips`, `GET` and `DELETE /streams/{id}/clips/{clip_id}`), scheduled shows (`POST` and `GET /shows`,
//! `GET`, `PATCH` and `DELETE /shows/{id}`), and the test helpers under
//! `/test_helpers/streams/{id}/` and `/test_helpers/shows/{id}/start`.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::service::{clips, destinations, shows, streams, test_helpers};
use hosting_domain::clip::{ClipList, ClipView};
use hosting_domain::destination::Destination;
use hosting_domain::show::{ShowList, ShowView};
use hosting_domain::stream::ListQuery;
use hosting_domain::stream::{StreamDetail, StreamEnded, StreamList};
use hosting_http::body::{JsonObject, OptionalJsonObject};
use hosting_http::endpoints::{
    ADD_DESTINATION, CANCEL_SHOW, CHANGE_SHOW, CUT_CLIP, DELETE_CLIP, END_STREAM,
    FAIL_TEST_DESTINATION, FAIL_TEST_STREAM, FINISH_TEST_STREAM, Function, GET_CLIP, GET_SHOW,
    GET_STREAM, LIST_CLIPS, LIST_SHOWS, LIST_STREAMS, ListShowsParams, ListStreamsParams,
    REMOVE_DESTINATION, SCHEDULE_SHOW, SET_TEST_STREAM_VIEWERS, START_STREAM, START_TEST_SHOW,
};
use hosting_http::query::Query;
use hosting_http::routes::{Admitted, Routes};
use hosting_http::{
    ClipPath, CreateAnswer, DestinationPath, HandlerResult, PathId, idempotency_key,
};

pub fn router(app: App) -> Router {
    routes(Routes::new(app, Function::Streams)).into_router()
}

/// This function's endpoints, added to `routes` (its own router, or the gateway's of every
/// function).
pub fn routes(routes: Routes) -> Routes {
    routes
        .serve(&START_STREAM, start)
        .serve(&LIST_STREAMS, list)
        .serve(&GET_STREAM, get_one)
        .serve(&END_STREAM, end)
        .serve(&SET_TEST_STREAM_VIEWERS, set_viewers)
        .serve(&FINISH_TEST_STREAM, finish)
        .serve(&FAIL_TEST_STREAM, fail)
        .serve(&ADD_DESTINATION, add_destination)
        .serve(&REMOVE_DESTINATION, remove_destination)
        .serve(&FAIL_TEST_DESTINATION, fail_destination)
        .serve(&CUT_CLIP, cut_clip)
        .serve(&LIST_CLIPS, list_clips)
        .serve(&GET_CLIP, get_clip)
        .serve(&DELETE_CLIP, delete_clip)
        .serve(&SCHEDULE_SHOW, schedule_show)
        .serve(&LIST_SHOWS, list_shows)
        .serve(&GET_SHOW, get_show)
        .serve(&CHANGE_SHOW, change_show)
        .serve(&CANCEL_SHOW, cancel_show)
        .serve(&START_TEST_SHOW, start_test_show)
}

async fn start_test_show(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Path(id): Path<String>,
) -> HandlerResult<Json<ShowView>> {
    Ok(Json(shows::start_test_show(&app, &caller, &id).await?))
}

fn min_lead(app: &App) -> chrono::TimeDelta {
    chrono::TimeDelta::from_std(app.config.show_min_lead).unwrap_or(chrono::TimeDelta::MAX)
}

async fn schedule_show(
    State(app): State<App>,
    Admitted(caller): Admitted,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> HandlerResult<CreateAnswer> {
    let answer = shows::schedule(
        &app,
        &caller,
        &body,
        idempotency_key(&headers),
        min_lead(&app),
    )
    .await?;
    Ok(CreateAnswer(answer))
}

async fn list_shows(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Query(query): Query<ListShowsParams>,
) -> HandlerResult<Json<ShowList>> {
    Ok(Json(
        shows::list(
            &app,
            &caller,
            query.status.as_deref(),
            query.limit.as_deref(),
            query.offset.as_deref(),
        )
        .await?,
    ))
}

async fn get_show(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Path(id): Path<String>,
) -> HandlerResult<Json<ShowView>> {
    Ok(Json(shows::get(&app, &caller, &id).await?))
}

/// The body is checked after the show is found: only a scheduled show changes.
async fn change_show(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> HandlerResult<Json<ShowView>> {
    Ok(Json(
        shows::change(&app, &caller, &id, &body, min_lead(&app)).await?,
    ))
}

async fn cancel_show(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Path(id): Path<String>,
) -> HandlerResult<Json<ShowView>> {
    Ok(Json(shows::cancel(&app, &caller, &id).await?))
}

async fn start(
    State(app): State<App>,
    Admitted(caller): Admitted,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> HandlerResult<CreateAnswer> {
    let answer = streams::start(&app, &caller, &body, idempotency_key(&headers)).await?;
    Ok(CreateAnswer(answer))
}

async fn list(
    State(app): State<App>,
    Admitted(caller): Admitted,
    Query(query): Query<ListStreamsParams>,
) -> HandlerResult<Json<StreamList>> {
    let query = ListQuery::new(
        query.status.as_deref(),
        query.limit.as_deref(),
        query.offset.as_deref(),
    );
    Ok(Json(streams::list(&app, &caller, query).await?))
}

async fn get_one(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
) -> HandlerResult<Json<StreamDetail>> {
    Ok(Json(streams::get(&app, &caller, id.found()?).await?))
}

async fn end(
    State(app): State<App>,
    Admitted(caller): Admitted,
    id: PathId,
) -> HandlerResult<Json<StreamEnded>> {
    Ok(Json(streams::end(&app, &caller, id.found()?).await?))
}

/// The body is checked before the stream, so the id goes in unresolved.
async fn set_viewers(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
    JsonObject(body): JsonObject,
) -> HandlerResult<Json<StreamDetail>> {
    Ok(Json(
        test_helpers::set_viewers(&app, &caller, id, &body).await?,
    ))
}

async fn finish(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
) -> HandlerResult<Json<StreamDetail>> {
    Ok(Json(test_helpers::finish(&app, &caller, id).await?))
}

async fn fail(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
) -> HandlerResult<Json<StreamDetail>> {
    Ok(Json(test_helpers::fail(&app, &caller, id).await?))
}

/// The body is checked before the stream, so the id goes in unresolved.
async fn add_destination(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
    JsonObject(body): JsonObject,
) -> HandlerResult<(StatusCode, Json<Destination>)> {
    let destination = destinations::add(&app, &caller, id, &body).await?;
    Ok((StatusCode::CREATED, Json(destination)))
}

async fn remove_destination(
    State(app): State<App>,
    Admitted(caller): Admitted,
    path: DestinationPath,
) -> HandlerResult<Json<Destination>> {
    Ok(Json(
        destinations::remove(&app, &caller, path.stream_id, &path.destination_id).await?,
    ))
}

/// The body is checked before the stream.
async fn fail_destination(
    State(app): State<App>,
    Admitted(caller): Admitted,
    path: DestinationPath,
    OptionalJsonObject(body): OptionalJsonObject,
) -> HandlerResult<Json<Destination>> {
    Ok(Json(
        test_helpers::fail_destination(
            &app,
            &caller,
            path.stream_id,
            &path.destination_id,
            body.as_ref(),
        )
        .await?,
    ))
}

/// The body is checked before the stream (docs/clips.md, "Order of checks").
async fn cut_clip(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
    headers: HeaderMap,
    JsonObject(body): JsonObject,
) -> HandlerResult<CreateAnswer> {
    let answer = clips::create(&app, &caller, id, &body, idempotency_key(&headers)).await?;
    Ok(CreateAnswer(answer))
}

async fn list_clips(
    State(app): State<App>,
    Admitted(caller): Admitted,
    PathId(id): PathId,
) -> HandlerResult<Json<ClipList>> {
    Ok(Json(clips::list(&app, &caller, id).await?))
}

async fn get_clip(
    State(app): State<App>,
    Admitted(caller): Admitted,
    path: ClipPath,
) -> HandlerResult<Json<ClipView>> {
    Ok(Json(
        clips::get(&app, &caller, path.stream_id, &path.clip_id).await?,
    ))
}

async fn delete_clip(
    State(app): State<App>,
    Admitted(caller): Admitted,
    path: ClipPath,
) -> HandlerResult<Json<ClipView>> {
    Ok(Json(
        clips::delete(&app, &caller, path.stream_id, &path.clip_id).await?,
    ))
}
