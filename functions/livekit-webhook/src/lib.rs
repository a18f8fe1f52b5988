//! `POST /livekit/webhook` (outside `/api/v1`): LiveKit's room and participant events.

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::routing::post;
use axum::{Json, Router};
use hosting_app::App;
use hosting_app::metrics::{self, Metric};
use hosting_app::service::provider_events;
use hosting_domain::ApiError;
use hosting_http::HandlerResult;
use hosting_http::routes::Routes;
use hosting_livekit::{LiveKitWebhooks, WebhookRefusal};

pub const PATH: &str = "/livekit/webhook";

/// LiveKit's answer: the event is taken (LiveKit reads only the status).
#[derive(serde::Serialize)]
pub struct Received {
    received: bool,
}

pub fn router(app: App) -> Router {
    Router::new().route(PATH, post(receive)).with_state(app)
}

/// The receiver, added to the gateway's router of every function.
pub fn routes(routes: Routes) -> Routes {
    routes.route_outside_the_api(PATH, post(receive))
}

async fn receive(
    State(app): State<App>,
    headers: HeaderMap,
    body: Body,
) -> HandlerResult<Json<Received>> {
    // Without LiveKit credentials nothing can be verified, so nothing is accepted.
    let livekit = app.config.livekit.as_ref().ok_or(ApiError::Unauthorized)?;
    let authorization = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or(ApiError::Unauthorized)?;
    // Nor without the secret: it never comes only when its read gave up, and the instance
    // stops then. The event may be LiveKit's own, so the answer is one LiveKit sends again
    // (a `5xx`; a `4xx` is final to it), never `401` (docs/livekit.md, "LiveKit webhooks").
    let webhooks = LiveKitWebhooks::new(livekit).await.map_err(|err| {
        tracing::error!(error = %err, "LiveKit webhook not verified: no secret to check it with");
        ApiError::SecretUnavailable
    })?;
    // The token first: a request LiveKit did not sign is refused before its body is read.
    let signed = webhooks.check_token(authorization).map_err(refused)?;
    let body = hosting_http::body::read_limited(body).await?;
    let event = signed.read(&body).map_err(refused)?;
    let handled = provider_events::handle(&app, &event).await?;
    tracing::info!(event_id = %event.id, room = %event.room_name, kind = ?event.kind, handled = ?handled, "LiveKit event");
    Ok(Json(Received { received: true }))
}

/// A forged or unsigned request is `401`; a signed body that is no event `400`, counted: LiveKit
/// sent something this build cannot read.
fn refused(refusal: WebhookRefusal) -> ApiError {
    match refusal {
        WebhookRefusal::Unsigned(reason) => {
            tracing::warn!(error = %reason, "LiveKit webhook refused");
            ApiError::Unauthorized
        }
        WebhookRefusal::Undecodable(err) => {
            tracing::error!(error = %err, "LiveKit webhook signed but undecodable");
            metrics::count(Metric::UndecodableLiveKitEvents);
            ApiError::InvalidFields("The body is not a LiveKit webhook event.".into())
        }
    }
}
