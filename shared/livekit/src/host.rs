//! The host in LiveKit's rooms (docs/livekit.md, "One host" and "Read-backs"): which participant
//! is the host, the room created with the host's dispatch in it, the room's participants and
//! viewers read back, earlier dispatches deleted and a second host removed.

use std::collections::HashMap;
use std::time::Duration;

use livekit_api::access_token::{AccessToken, VideoGrants};
use livekit_api::services::{ServerError, ServerErrorCode, ServiceError};
use livekit_protocol as proto;
use prost::Message;

use hosting_domain::error::RoomError;
use hosting_domain::ports::{RoomHost, RoomPresence};

/// The attribute LiveKit's agents framework gives an agent: the name it registered under.
pub const AGENT_NAME_ATTRIBUTE: &str = "lk.agent_name";
/// The attribute of an avatar: the agent it publishes for. Such a participant is of kind
/// `AGENT` too, and never the host.
pub const ON_BEHALF_ATTRIBUTE: &str = "lk.publish_on_behalf";
/// The attribute the host sets to `"true"` before it leaves on purpose.
pub const FINISHED_ATTRIBUTE: &str = "lsh.finished";

/// How long a call made outside the SDK waits for LiveKit, as the SDK's own calls do.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a participant of kind `AGENT` with `attributes` is the host of `agent_name`.
pub fn is_host(attributes: &HashMap<String, String>, agent_name: &str) -> bool {
    attributes.get(AGENT_NAME_ATTRIBUTE).map(String::as_str) == Some(agent_name)
        && !attributes.contains_key(ON_BEHALF_ATTRIBUTE)
}

/// Whether the host said it finished.
pub fn said_finished(attributes: &HashMap<String, String>) -> bool {
    attributes.get(FINISHED_ATTRIBUTE).map(String::as_str) == Some("true")
}

/// The host's dispatch as a room carries it, or as `CreateDispatch` asks for it: never
/// restarted by LiveKit (the service owns every re-dispatch).
pub fn room_dispatch(agent_name: &str, metadata: &str) -> proto::RoomAgentDispatch {
    proto::RoomAgentDispatch {
        agent_name: agent_name.to_owned(),
        metadata: metadata.to_owned(),
        restart_policy: proto::JobRestartPolicy::JrpNever as i32,
        ..Default::default()
    }
}

/// The room's hosts and viewers, from `ListParticipants` and the room as `ListRooms` lists it.
pub fn presence(
    room: &proto::Room,
    participants: Vec<proto::ParticipantInfo>,
    agent_name: &str,
) -> RoomPresence {
    let mut hosts: Vec<RoomHost> = participants
        .into_iter()
        .filter(|p| {
            p.kind == proto::participant_info::Kind::Agent as i32
                && p.state != proto::participant_info::State::Disconnected as i32
                && is_host(&p.attributes, agent_name)
        })
        .map(|p| RoomHost {
            joined_at: joined_at(p.joined_at_ms, p.joined_at),
            sid: p.sid,
            identity: p.identity,
        })
        .collect();
    hosts.sort_by_key(|host| host.joined_at);
    RoomPresence {
        hosts,
        viewers: u64::from(room.num_participants),
    }
}

/// A join time from LiveKit's milliseconds, or its seconds when that is all it sent.
pub fn joined_at(ms: i64, seconds: i64) -> Option<chrono::DateTime<chrono::Utc>> {
    if ms > 0 {
        chrono::DateTime::from_timestamp_millis(ms)
    } else if seconds > 0 {
        chrono::DateTime::from_timestamp(seconds, 0)
    } else {
        None
    }
}

/// Whether LiveKit answered that it has no such room (or participant, or dispatch).
pub fn not_found(err: &ServiceError) -> bool {
    matches!(err, ServiceError::Twirp(ServerError::Twirp(code)) if code.code == ServerErrorCode::NOT_FOUND)
}

/// `RoomService/CreateRoom` with the host's dispatch in `agents`, which the SDK's room client
/// does not send: the same Twirp call (a protobuf body, a signed admin token), made here.
pub async fn create_room_with_host(
    http: &reqwest::Client,
    url: &str,
    api_key: &str,
    api_secret: &str,
    request: proto::CreateRoomRequest,
) -> Result<(), RoomError> {
    let token = AccessToken::with_api_key(api_key, api_secret)
        .with_ttl(Duration::from_secs(600))
        .with_grants(VideoGrants {
            room_create: true,
            ..Default::default()
        })
        .to_jwt()
        .map_err(|err| RoomError(format!("CreateRoom: its token: {err}")))?;
    let mut endpoint = url::Url::parse(&http_url(url))
        .map_err(|err| RoomError(format!("CreateRoom: LIVEKIT_URL: {err}")))?;
    endpoint.set_path("/twirp/livekit.RoomService/CreateRoom");
    let answer = http
        .post(endpoint)
        .bearer_auth(token)
        .header("content-type", "application/protobuf")
        .body(request.encode_to_vec())
        .timeout(CALL_TIMEOUT)
        .send()
        .await
        .map_err(|err| RoomError(format!("CreateRoom: {}", err.without_url())))?;
    let status = answer.status();
    let body = answer
        .bytes()
        .await
        .map_err(|err| RoomError(format!("CreateRoom: {}", err.without_url())))?;
    if status.is_success() {
        return proto::Room::decode(body)
            .map(drop)
            .map_err(|err| RoomError(format!("CreateRoom: the answer: {err}")));
    }
    // Twirp's error body: `{"code": ..., "msg": ...}`.
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    Err(RoomError(format!(
        "CreateRoom: {} {}: {}",
        status.as_u16(),
        error["code"].as_str().unwrap_or("unknown"),
        error["msg"].as_str().unwrap_or_default()
    )))
}

/// LIVEKIT_URL as the server API's address: a WebSocket URL names the same host over HTTP.
fn http_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else {
        url.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn only_an_agent_of_the_name_acting_for_no_one_is_the_host() {
        assert!(is_host(
            &attributes(&[("lk.agent_name", "stream-host")]),
            "stream-host"
        ));
        assert!(!is_host(&attributes(&[]), "stream-host"), "a stray agent");
        assert!(!is_host(
            &attributes(&[("lk.agent_name", "")]),
            "stream-host"
        ));
        assert!(!is_host(
            &attributes(&[("lk.agent_name", "other")]),
            "stream-host"
        ));
        assert!(
            !is_host(
                &attributes(&[
                    ("lk.agent_name", "stream-host"),
                    ("lk.publish_on_behalf", "agent-AJ_1")
                ]),
                "stream-host"
            ),
            "an avatar"
        );
    }

    #[test]
    fn finished_is_the_attribute_true() {
        assert!(said_finished(&attributes(&[("lsh.finished", "true")])));
        assert!(!said_finished(&attributes(&[("lsh.finished", "yes")])));
        assert!(!said_finished(&attributes(&[])));
    }

    #[test]
    fn join_times_prefer_milliseconds() {
        assert_eq!(
            joined_at(1_700_000_000_500, 1_700_000_000),
            chrono::DateTime::from_timestamp_millis(1_700_000_000_500)
        );
        assert_eq!(
            joined_at(0, 1_700_000_000),
            chrono::DateTime::from_timestamp(1_700_000_000, 0)
        );
        assert_eq!(joined_at(0, 0), None);
    }

    #[test]
    fn websocket_urls_name_the_server_api() {
        assert_eq!(http_url("wss://lk.example.com"), "https://lk.example.com");
        assert_eq!(http_url("ws://127.0.0.1:7880"), "http://127.0.0.1:7880");
        assert_eq!(http_url("https://lk.example.com"), "https://lk.example.com");
    }
}
