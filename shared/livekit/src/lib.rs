//! The LiveKit adapter (docs/livekit.md): rooms and explicit agent dispatch through
//! LiveKit's server SDK (Twirp, signed admin tokens), subscribe-only viewer tokens, and
//! verification of LiveKit's webhooks.

use std::time::Duration;

use async_trait::async_trait;
use livekit_api::access_token::{AccessToken, TokenVerifier, VideoGrants};
use livekit_api::services::LiveKitApi;
use livekit_api::services::room::CreateRoomOptions;
use livekit_api::services::{ServerError, ServerErrorCode, ServiceError};
use livekit_api::webhooks::{WebhookError, WebhookReceiver};
use livekit_protocol as proto;

use hosting_domain::error::RoomError;
use hosting_domain::ports::{ProviderEvent, ProviderEventKind, RoomProvider, ViewerAccess};
use hosting_support::config::{LiveKitConfig, SecretUnavailable};

/// `ws_url` for viewers: the LiveKit URL as a WebSocket address.
pub fn websocket_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_owned()
    }
}

pub struct LiveKitRooms {
    /// Built on the first call to LiveKit, not at start-up: building its HTTP client loads the
    /// system's root certificates (milliseconds), the secret may still be on its way, and most
    /// requests a function serves never call LiveKit. One client serves rooms and dispatch, so
    /// they share one connection pool.
    api: tokio::sync::OnceCell<LiveKitApi>,
    config: LiveKitConfig,
    ws_url: String,
}

impl LiveKitRooms {
    pub fn new(config: &LiveKitConfig) -> Self {
        Self {
            api: tokio::sync::OnceCell::new(),
            config: config.clone(),
            ws_url: websocket_url(&config.url),
        }
    }

    async fn api(&self) -> Result<&LiveKitApi, RoomError> {
        self.api
            .get_or_try_init(|| async {
                let secret = self.config.api_secret.get().await.map_err(secret_error)?;
                Ok(LiveKitApi::with_api_key(
                    &self.config.url,
                    &self.config.api_key,
                    &secret,
                ))
            })
            .await
    }
}

fn secret_error(err: SecretUnavailable) -> RoomError {
    RoomError(err.to_string())
}

fn room_error(step: &str) -> impl FnOnce(livekit_api::services::ServiceError) -> RoomError + '_ {
    move |err| RoomError(format!("{step}: {err}"))
}

#[async_trait]
impl RoomProvider for LiveKitRooms {
    async fn create_room(&self, room_name: &str, keep_open: Duration) -> Result<(), RoomError> {
        let options = CreateRoomOptions {
            // An empty (or agent-only) room stays open for the whole stream.
            empty_timeout: u32::try_from(keep_open.as_secs()).unwrap_or(u32::MAX),
            departure_timeout: u32::try_from(keep_open.as_secs()).unwrap_or(u32::MAX),
            ..Default::default()
        };
        self.api()
            .await?
            .room()
            .create_room(room_name, options)
            .await
            .map(drop)
            .map_err(room_error("CreateRoom"))
    }

    async fn dispatch_agent(&self, room_name: &str, metadata: &str) -> Result<(), RoomError> {
        self.api()
            .await?
            .agent_dispatch()
            .create_dispatch(proto::CreateAgentDispatchRequest {
                agent_name: self.config.agent_name.clone(),
                room: room_name.to_owned(),
                metadata: metadata.to_owned(),
                ..Default::default()
            })
            .await
            .map(drop)
            .map_err(room_error("CreateDispatch"))
    }

    async fn viewer_access(
        &self,
        room_name: &str,
        valid_for: Duration,
    ) -> Result<ViewerAccess, RoomError> {
        let secret = self.config.api_secret.get().await.map_err(secret_error)?;
        let identity = format!("viewer-{}", uuid::Uuid::new_v4().simple());
        let token = AccessToken::with_api_key(&self.config.api_key, &secret)
            .with_identity(&identity)
            .with_ttl(valid_for)
            .with_grants(VideoGrants {
                room_join: true,
                room: room_name.to_owned(),
                can_subscribe: Some(true),
                // Written explicitly: viewers never publish.
                can_publish: Some(false),
                can_publish_data: Some(false),
                ..Default::default()
            })
            .to_jwt()
            .map_err(|err| RoomError(format!("viewer token: {err}")))?;
        Ok(ViewerAccess {
            ws_url: self.ws_url.clone(),
            viewer_token: token,
        })
    }

    async fn delete_room(&self, room_name: &str) -> Result<(), RoomError> {
        match self.api().await?.room().delete_room(room_name).await {
            Ok(()) => Ok(()),
            // Gone already: what the deletion was for.
            Err(ServiceError::Twirp(ServerError::Twirp(code)))
                if code.code == ServerErrorCode::NOT_FOUND =>
            {
                Ok(())
            }
            Err(err) => Err(room_error("DeleteRoom")(err)),
        }
    }
}

/// Verifies and reads LiveKit webhooks: the `Authorization` header is a bare JWT signed with
/// the API secret whose `sha256` claim is the base64 SHA-256 of the body.
pub struct LiveKitWebhooks {
    receiver: WebhookReceiver,
}

impl LiveKitWebhooks {
    /// Waits for the secret if it is still being read.
    pub async fn new(config: &LiveKitConfig) -> Result<Self, SecretUnavailable> {
        let secret = config.api_secret.get().await?;
        Ok(Self {
            receiver: WebhookReceiver::new(TokenVerifier::with_api_key(&config.api_key, &secret)),
        })
    }

    pub fn verify(&self, body: &str, authorization: &str) -> Result<ProviderEvent, WebhookError> {
        let event = self.receiver.receive(body, authorization.trim())?;
        Ok(to_provider_event(&event))
    }
}

fn to_provider_event(event: &proto::WebhookEvent) -> ProviderEvent {
    let is_agent = event
        .participant
        .as_ref()
        .is_some_and(|p| p.kind == proto::participant_info::Kind::Agent as i32);
    let kind = match event.event.as_str() {
        "participant_joined" if is_agent => ProviderEventKind::AgentJoined,
        "participant_joined" => ProviderEventKind::ViewerJoined,
        "participant_left" if is_agent => ProviderEventKind::AgentLeft,
        "participant_left" => ProviderEventKind::ViewerLeft,
        "room_finished" => ProviderEventKind::RoomFinished,
        _ => ProviderEventKind::Other,
    };
    let participant = event.participant.as_ref();
    // Protojson leaves an unset enum out, which reads as 0 (`UNKNOWN_REASON`): the same
    // meaning as no reason at all.
    let disconnect_reason = participant
        .filter(|p| p.disconnect_reason != proto::DisconnectReason::UnknownReason as i32)
        .map(|p| {
            proto::DisconnectReason::try_from(p.disconnect_reason)
                .map(|reason| reason.as_str_name().to_owned())
                .unwrap_or_else(|_| format!("REASON_{}", p.disconnect_reason))
        });
    ProviderEvent {
        id: event.id.clone(),
        room_name: event
            .room
            .as_ref()
            .map(|room| room.name.clone())
            .unwrap_or_default(),
        kind,
        participant: participant.map(|p| p.sid.clone()).unwrap_or_default(),
        disconnect_reason,
        created_at: (event.created_at > 0)
            .then(|| chrono::DateTime::from_timestamp(event.created_at, 0))
            .flatten(),
    }
}

/// The configured room provider, if any.
pub fn rooms_from_config(
    config: &hosting_support::config::Config,
) -> Option<std::sync::Arc<dyn RoomProvider>> {
    config
        .livekit
        .as_ref()
        .map(|lk| std::sync::Arc::new(LiveKitRooms::new(lk)) as std::sync::Arc<dyn RoomProvider>)
}
