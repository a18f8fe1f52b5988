//! The LiveKit adapter (docs/livekit.md): rooms and explicit agent dispatch through
//! LiveKit's server SDK (Twirp, signed admin tokens), subscribe-only viewer tokens, and
//! verification of LiveKit's webhooks.

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use livekit_api::access_token::{AccessToken, TokenVerifier, VideoGrants};
use livekit_api::services::LiveKitApi;
use livekit_api::services::egress::{
    EgressListFilter, EgressListOptions, EgressOutput, RoomCompositeOptions,
};
use livekit_api::services::{ServerError, ServerErrorCode, ServiceError};
use livekit_protocol as proto;
use sha2::{Digest, Sha256};

use hosting_domain::destination::{redact_stream_key, redacted_output_url};
use hosting_domain::error::RoomError;
use hosting_domain::ports::{
    EgressError, EgressReport, EgressService, ProviderEvent, RoomPresence, RoomProvider,
    RoomService, ViewerAccess,
};
use hosting_support::config::{LiveKitConfig, RecordingsConfig, SecretUnavailable};

mod host;
mod webhook_event;

pub use host::{AGENT_NAME_ATTRIBUTE, FINISHED_ATTRIBUTE, ON_BEHALF_ATTRIBUTE};

pub use webhook_event::Undecodable;

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
    /// For the one call the SDK cannot make (`CreateRoom` with the host's dispatch); built on
    /// its first use, as `api` is.
    http: std::sync::OnceLock<reqwest::Client>,
    config: LiveKitConfig,
    ws_url: String,
    recordings: RecordingsConfig,
}

impl LiveKitRooms {
    pub fn new(config: &LiveKitConfig, recordings: &RecordingsConfig) -> Self {
        Self {
            api: tokio::sync::OnceCell::new(),
            http: std::sync::OnceLock::new(),
            config: config.clone(),
            ws_url: websocket_url(&config.url),
            recordings: recordings.clone(),
        }
    }

    /// The MP4 file output of a recording written to `key` (docs/recordings.md): to the
    /// recordings bucket when one is configured, with the upload key pair when one is (else
    /// the egress uploads with its own role), or to the egress's own storage.
    async fn file_output(&self, key: &str) -> Result<proto::EncodedFileOutput, EgressError> {
        let output = match &self.recordings.bucket {
            None => None,
            Some(bucket) => {
                let (access_key, secret) = match &self.recordings.upload_key {
                    None => (String::new(), String::new()),
                    Some(pair) => {
                        let pair = pair.get().await.map_err(|_| {
                            EgressError::Failed("the recording upload key could not be read".into())
                        })?;
                        let (id, secret) = pair.split_once(':').ok_or_else(|| {
                            EgressError::Failed(
                                "the recording upload key is not `<access key id>:<secret>`".into(),
                            )
                        })?;
                        (id.trim().to_owned(), secret.trim().to_owned())
                    }
                };
                let (assume_role_arn, assume_role_external_id) = match &self.recordings.upload_role
                {
                    Some(role) => (role.arn.clone(), role.external_id.clone()),
                    None => Default::default(),
                };
                Some(proto::encoded_file_output::Output::S3(proto::S3Upload {
                    access_key,
                    secret,
                    assume_role_arn,
                    assume_role_external_id,
                    region: self.recordings.region.clone().unwrap_or_default(),
                    bucket: bucket.clone(),
                    ..Default::default()
                }))
            }
        };
        Ok(proto::EncodedFileOutput {
            file_type: proto::EncodedFileType::Mp4 as i32,
            filepath: key.to_owned(),
            disable_manifest: true,
            output,
        })
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
impl RoomService for LiveKitRooms {
    async fn create_room(
        &self,
        room_name: &str,
        keep_open: Duration,
        host_metadata: &str,
    ) -> Result<(), RoomError> {
        let keep_open = u32::try_from(keep_open.as_secs()).unwrap_or(u32::MAX);
        let request = proto::CreateRoomRequest {
            name: room_name.to_owned(),
            // An empty (or agent-only) room stays open for the whole stream.
            empty_timeout: keep_open,
            departure_timeout: keep_open,
            // The host's dispatch is the room's own: LiveKit then makes no automatic dispatch
            // (which would bring any automatic agent of the project).
            agents: vec![host::room_dispatch(&self.config.agent_name, host_metadata)],
            ..Default::default()
        };
        let secret = self.config.api_secret.get().await.map_err(secret_error)?;
        let http = self.http.get_or_init(reqwest::Client::new);
        host::create_room_with_host(
            http,
            &self.config.url,
            &self.config.api_key,
            &secret,
            request,
        )
        .await
    }

    async fn dispatch_agent(&self, room_name: &str, metadata: &str) -> Result<(), RoomError> {
        let dispatch = host::room_dispatch(&self.config.agent_name, metadata);
        self.api()
            .await?
            .agent_dispatch()
            .create_dispatch(proto::CreateAgentDispatchRequest {
                agent_name: dispatch.agent_name,
                room: room_name.to_owned(),
                metadata: dispatch.metadata,
                restart_policy: dispatch.restart_policy,
                ..Default::default()
            })
            .await
            .map(drop)
            .map_err(room_error("CreateDispatch"))
    }

    async fn room_presence(&self, room_name: &str) -> Result<Option<RoomPresence>, RoomError> {
        let api = self.api().await?;
        let rooms = api
            .room()
            .list_rooms(vec![room_name.to_owned()])
            .await
            .map_err(room_error("ListRooms"))?;
        let Some(room) = rooms.into_iter().find(|room| room.name == room_name) else {
            return Ok(None);
        };
        match api.room().list_participants(room_name).await {
            Ok(participants) => Ok(Some(host::presence(
                &room,
                participants,
                &self.config.agent_name,
            ))),
            // Closed between the two reads.
            Err(err) if host::not_found(&err) => Ok(None),
            Err(err) => Err(room_error("ListParticipants")(err)),
        }
    }

    async fn delete_dispatches(&self, room_name: &str) -> Result<(), RoomError> {
        let api = self.api().await?;
        let dispatches = match api.agent_dispatch().list_dispatch(room_name).await {
            Ok(dispatches) => dispatches,
            Err(err) if host::not_found(&err) => return Ok(()),
            Err(err) => return Err(room_error("ListDispatch")(err)),
        };
        for dispatch in dispatches
            .into_iter()
            .filter(|d| d.agent_name == self.config.agent_name)
        {
            match api
                .agent_dispatch()
                .delete_dispatch(&dispatch.id, room_name)
                .await
            {
                Ok(_) => {}
                Err(err) if host::not_found(&err) => {}
                Err(err) => return Err(room_error("DeleteDispatch")(err)),
            }
        }
        Ok(())
    }

    async fn remove_participant(&self, room_name: &str, identity: &str) -> Result<(), RoomError> {
        match self
            .api()
            .await?
            .room()
            .remove_participant(room_name, identity)
            .await
        {
            Ok(()) => Ok(()),
            Err(err) if host::not_found(&err) => Ok(()),
            Err(err) => Err(room_error("RemoveParticipant")(err)),
        }
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

#[async_trait]
impl EgressService for LiveKitRooms {
    async fn start_egress(
        &self,
        room_name: &str,
        output_urls: Vec<String>,
        file: Option<&str>,
    ) -> Result<String, EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        let options = RoomCompositeOptions {
            layout: self.config.egress_layout.clone(),
            ..Default::default()
        };
        let mut outputs = Vec::with_capacity(2);
        // LiveKit's error text must not repeat the upload secret or external id either.
        let mut upload_secret: Option<Vec<String>> = None;
        if !output_urls.is_empty() {
            outputs.push(EgressOutput::Stream(proto::StreamOutput {
                protocol: proto::StreamProtocol::Rtmp as i32,
                urls: output_urls.clone(),
            }));
        }
        if let Some(key) = file {
            let file = self.file_output(key).await?;
            if let Some(proto::encoded_file_output::Output::S3(upload)) = &file.output {
                upload_secret = [&upload.secret, &upload.assume_role_external_id]
                    .into_iter()
                    .filter(|secret| !secret.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .into();
            }
            outputs.push(EgressOutput::File(file));
        }
        api.egress()
            .start_room_composite_egress(room_name, outputs, options)
            .await
            .map(|info| info.egress_id)
            .map_err(|err| {
                let mut error = egress_error("StartRoomCompositeEgress", err, &output_urls);
                if let (EgressError::Failed(text), Some(secrets)) = (&mut error, &upload_secret) {
                    for secret in secrets {
                        *text = text.replace(secret.as_str(), "[redacted]");
                    }
                }
                error
            })
    }

    async fn update_egress_outputs(
        &self,
        egress_id: &str,
        add: Vec<String>,
        remove: Vec<String>,
    ) -> Result<(), EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        let urls: Vec<String> = add.iter().chain(&remove).cloned().collect();
        api.egress()
            .update_stream(egress_id, add, remove)
            .await
            .map(drop)
            .map_err(|err| egress_error("UpdateStream", err, &urls))
    }

    async fn stop_egress(&self, egress_id: &str) -> Result<(), EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        match api.egress().stop_egress(egress_id).await {
            Ok(_) => Ok(()),
            // Ended already (LiveKit refuses to stop an egress that is not running): what
            // the stop was for.
            Err(ServiceError::Twirp(ServerError::Twirp(code)))
                if code.code == ServerErrorCode::FAILED_PRECONDITION =>
            {
                Ok(())
            }
            Err(err) => match egress_error("StopEgress", err, &[]) {
                EgressError::Gone => Ok(()),
                failed => Err(failed),
            },
        }
    }

    async fn active_egresses(&self) -> Result<Vec<EgressReport>, EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        let options = EgressListOptions {
            filter: EgressListFilter::All,
            active: true,
            page_token: None,
        };
        match api.egress().list_egress(options).await {
            Ok(egresses) => Ok(egresses
                .into_iter()
                .map(webhook_event::report_of_info)
                .collect()),
            Err(err) => match egress_error("ListEgress", err, &[]) {
                EgressError::Gone => Ok(Vec::new()),
                failed => Err(failed),
            },
        }
    }

    async fn egress(&self, egress_id: &str) -> Result<Option<EgressReport>, EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        let options = EgressListOptions {
            filter: EgressListFilter::Egress(egress_id.to_owned()),
            active: false,
            page_token: None,
        };
        match api.egress().list_egress(options).await {
            Ok(egresses) => Ok(egresses
                .into_iter()
                .find(|info| info.egress_id == egress_id)
                .map(webhook_event::report_of_info)),
            Err(err) => match egress_error("ListEgress", err, &[]) {
                EgressError::Gone => Ok(None),
                failed => Err(failed),
            },
        }
    }

    async fn running_egresses(&self, room_name: &str) -> Result<Vec<String>, EgressError> {
        let api = self.api().await.map_err(|err| EgressError::Failed(err.0))?;
        let options = EgressListOptions {
            filter: EgressListFilter::Room(room_name.to_owned()),
            active: true,
            page_token: None,
        };
        // The answer carries the outputs' URLs: only the ids leave this function.
        let egresses = match api.egress().list_egress(options).await {
            Ok(egresses) => egresses,
            Err(err) => match egress_error("ListEgress", err, &[]) {
                // No egress of the room is known.
                EgressError::Gone => Vec::new(),
                failed => return Err(failed),
            },
        };
        Ok(egresses
            .into_iter()
            .filter(|info| {
                proto::EgressStatus::try_from(info.status)
                    .is_ok_and(|status| !EGRESS_OVER.contains(&status))
            })
            .map(|info| info.egress_id)
            .collect())
    }
}

/// Egress states that are over: such an egress needs no stop.
const EGRESS_OVER: [proto::EgressStatus; 4] = [
    proto::EgressStatus::EgressComplete,
    proto::EgressStatus::EgressFailed,
    proto::EgressStatus::EgressAborted,
    proto::EgressStatus::EgressLimitReached,
];

/// An egress request's failure, with every output URL it carried (and its stream key) taken out
/// of LiveKit's text.
fn egress_error(step: &str, err: ServiceError, urls: &[String]) -> EgressError {
    if let ServiceError::Twirp(ServerError::Twirp(code)) = &err
        && code.code == ServerErrorCode::NOT_FOUND
    {
        return EgressError::Gone;
    }
    let mut text = format!("{step}: {err}");
    for url in urls {
        text = text.replace(url.as_str(), "[output URL]");
        // LiveKit names an output by its URL with the key redacted to six of its characters.
        if let Some(reported) = redacted_output_url(url) {
            text = text.replace(&reported, "[output URL]");
        }
        if let Some((_, key)) = url.rsplit_once('/')
            && key.len() >= 6
        {
            text = text.replace(key, "[redacted]");
            text = text.replace(&redact_stream_key(key), "[redacted]");
        }
    }
    EgressError::Failed(text)
}

/// Verifies and reads LiveKit webhooks: the `Authorization` header is a bare JWT signed with
/// the API secret whose `sha256` claim is the base64 SHA-256 of the body. The token is checked
/// before the body is read ([`LiveKitWebhooks::check_token`]), so an unsigned request costs no
/// body; the body must then hash to the claim ([`SignedBody::read`]).
pub struct LiveKitWebhooks {
    verifier: TokenVerifier,
    webhook_verifier: Option<TokenVerifier>,
    agent_name: String,
}

/// Why a webhook request is refused.
#[derive(Debug, thiserror::Error)]
pub enum WebhookRefusal {
    /// The token is missing, forged, expired, or does not sign this body: `401`.
    #[error("not signed by LiveKit: {0}")]
    Unsigned(String),
    /// Signed, but not an event: `400`.
    #[error(transparent)]
    Undecodable(#[from] Undecodable),
}

/// A token that checked out, waiting for the body it signs.
pub struct SignedBody {
    sha256: Vec<u8>,
    agent_name: String,
}

impl LiveKitWebhooks {
    /// Waits for the secret if it is still being read.
    pub async fn new(config: &LiveKitConfig) -> Result<Self, SecretUnavailable> {
        let secret = config.api_secret.get().await?;
        let webhook_verifier = match &config.webhook_key {
            Some(key) => Some(TokenVerifier::with_api_key(
                &key.api_key,
                &key.api_secret.get().await?,
            )),
            None => None,
        };
        Ok(Self {
            verifier: TokenVerifier::with_api_key(&config.api_key, &secret),
            webhook_verifier,
            agent_name: config.agent_name.clone(),
        })
    }

    /// Checks the token's signature and expiry, and takes the body hash it claims. A token of
    /// the webhook key, when one is configured, is as good as one of the API key.
    pub fn check_token(&self, authorization: &str) -> Result<SignedBody, WebhookRefusal> {
        let token = authorization.trim();
        let claims = match (self.verifier.verify(token), &self.webhook_verifier) {
            (Ok(claims), _) => Ok(claims),
            (Err(_), Some(webhook_verifier)) => webhook_verifier.verify(token),
            (Err(err), None) => Err(err),
        }
        .map_err(|err| WebhookRefusal::Unsigned(err.to_string()))?;
        let sha256 = STANDARD
            .decode(claims.sha256)
            .map_err(|_| WebhookRefusal::Unsigned("the body hash claim is not base64".into()))?;
        Ok(SignedBody {
            sha256,
            agent_name: self.agent_name.clone(),
        })
    }
}

impl SignedBody {
    /// The event in `body`, if it is the body the token signs.
    pub fn read(&self, body: &[u8]) -> Result<ProviderEvent, WebhookRefusal> {
        if Sha256::digest(body)[..] != self.sha256[..] {
            return Err(WebhookRefusal::Unsigned(
                "the token signs another body".into(),
            ));
        }
        Ok(webhook_event::read_event(body, &self.agent_name)?)
    }
}

/// The configured room provider, if any.
pub fn rooms_from_config(
    config: &hosting_support::config::Config,
) -> Option<std::sync::Arc<dyn RoomProvider>> {
    config.livekit.as_ref().map(|lk| {
        std::sync::Arc::new(LiveKitRooms::new(lk, &config.recordings))
            as std::sync::Arc<dyn RoomProvider>
    })
}
