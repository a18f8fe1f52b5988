//! LiveKit's webhook events, read leniently (docs/livekit.md, "Event mapping"). Only the fields
//! the API acts on are read, and an enum value this build does not know (a disconnect reason or
//! a participant kind LiveKit added later, as a name or a number) is read as LiveKit's own
//! "unknown" for that field, never as an undecodable event: a newer LiveKit's host drop still
//! opens the reconnect window. A body that is not such an event at all is [`Undecodable`].

use livekit_protocol as proto;
use serde::Deserialize;
use serde_json::Value;

use hosting_domain::ports::{
    EgressReport, FileReport, OutputReport, OutputState, ProviderEvent, ProviderEventKind,
};

/// A signed body that is not a LiveKit event (not JSON, or a field of the wrong type).
#[derive(Debug, thiserror::Error)]
#[error("the event could not be read: {0}")]
pub struct Undecodable(String);

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EventBody {
    event: String,
    id: String,
    /// Unix seconds; protojson writes an `int64` as a string.
    created_at: Value,
    room: Option<RoomBody>,
    participant: Option<ParticipantBody>,
    egress_info: Option<EgressInfoBody>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EgressInfoBody {
    egress_id: String,
    room_name: String,
    /// `"EGRESS_COMPLETE"`, `3`, ...
    status: Value,
    error: String,
    stream_results: Vec<StreamResultBody>,
    file_results: Vec<FileResultBody>,
}

/// A file the egress wrote; protojson writes its `int64`s as strings.
#[derive(Deserialize, Default)]
#[serde(default)]
struct FileResultBody {
    filename: String,
    /// Nanoseconds.
    duration: Value,
    /// Bytes.
    size: Value,
}

/// An `int64` as protojson writes it (a string) or as a number; absent is 0.
fn int64(value: &Value) -> Option<i64> {
    match value {
        Value::Null => Some(0),
        Value::String(text) => text.parse().ok(),
        Value::Number(number) => number.as_i64(),
        _ => None,
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StreamResultBody {
    url: String,
    /// `"ACTIVE"`, `"FINISHED"`, `"FAILED"`, or a number.
    status: Value,
    error: String,
}

/// An enum field as protojson writes it: its name, or its number; absent is the zero value
/// (protojson leaves defaults out: a stream result that is `ACTIVE` has no `status`).
fn enum_name<E: TryFrom<i32>>(
    value: &Value,
    name_of: impl Fn(E) -> &'static str,
) -> Option<String> {
    match value {
        Value::Null => E::try_from(0).ok().map(|e| name_of(e).to_owned()),
        Value::String(name) => Some(name.clone()),
        Value::Number(number) => number
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .and_then(|n| E::try_from(n).ok())
            .map(|e| name_of(e).to_owned()),
        _ => None,
    }
}

/// An egress as `ListEgress` answers it (protobuf), read as its webhook's `egressInfo` is.
pub(crate) fn report_of_info(info: proto::EgressInfo) -> EgressReport {
    egress_report(EgressInfoBody {
        egress_id: info.egress_id,
        room_name: info.room_name,
        status: Value::from(info.status),
        error: info.error,
        stream_results: info
            .stream_results
            .into_iter()
            .map(|result| StreamResultBody {
                url: result.url,
                status: Value::from(result.status),
                error: result.error,
            })
            .collect(),
        file_results: info
            .file_results
            .into_iter()
            .map(|file| FileResultBody {
                filename: file.filename,
                duration: Value::from(file.duration),
                size: Value::from(file.size),
            })
            .collect(),
    })
}

fn egress_report(info: EgressInfoBody) -> EgressReport {
    let status = enum_name::<proto::EgressStatus>(&info.status, |s| s.as_str_name());
    let ended = matches!(
        status.as_deref(),
        Some("EGRESS_COMPLETE" | "EGRESS_FAILED" | "EGRESS_ABORTED" | "EGRESS_LIMIT_REACHED")
    );
    let outputs = info
        .stream_results
        .into_iter()
        .map(|result| {
            let state =
                match enum_name::<proto::stream_info::Status>(&result.status, |s| s.as_str_name())
                    .as_deref()
                {
                    Some("ACTIVE") => OutputState::Active,
                    Some("FINISHED") => OutputState::Finished,
                    Some("FAILED") => OutputState::Failed,
                    _ => OutputState::Other,
                };
            OutputReport {
                url: result.url,
                state,
                error: Some(result.error).filter(|e| !e.is_empty()),
            }
        })
        .collect();
    let files = info
        .file_results
        .into_iter()
        .filter_map(|file| {
            Some(FileReport {
                filename: file.filename,
                size_bytes: u64::try_from(int64(&file.size)?).ok()?,
                duration_nanos: u64::try_from(int64(&file.duration)?).ok()?,
            })
        })
        .collect();
    EgressReport {
        egress_id: info.egress_id,
        ended,
        complete: status.as_deref() == Some("EGRESS_COMPLETE"),
        limit_reached: status.as_deref() == Some("EGRESS_LIMIT_REACHED"),
        files,
        error: Some(info.error).filter(|e| !e.is_empty()),
        outputs,
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RoomBody {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ParticipantBody {
    sid: String,
    identity: String,
    /// Unix seconds and milliseconds; protojson writes an `int64` as a string.
    joined_at: Value,
    joined_at_ms: Value,
    /// `lk.agent_name`, `lk.publish_on_behalf`, `lsh.finished`, ...
    attributes: std::collections::HashMap<String, String>,
    /// `"AGENT"`, `4`, or absent for a standard participant.
    kind: Value,
    /// `"CLIENT_INITIATED"`, `1`, or absent.
    disconnect_reason: Value,
}

/// Who a participant is, by its `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Agent,
    /// The room's egress recorder.
    Egress,
    /// A kind this build knows that is not an agent: counted as a viewer.
    Viewer,
    /// A kind this build does not know: neither an agent nor a viewer.
    Unknown,
}

fn who(kind: &Value) -> Who {
    let known = match kind {
        Value::Null => Some(proto::participant_info::Kind::Standard),
        Value::String(name) => proto::participant_info::Kind::from_str_name(name),
        Value::Number(number) => number
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .and_then(|n| proto::participant_info::Kind::try_from(n).ok()),
        _ => None,
    };
    match known {
        Some(proto::participant_info::Kind::Agent) => Who::Agent,
        Some(proto::participant_info::Kind::Egress) => Who::Egress,
        Some(_) => Who::Viewer,
        None => Who::Unknown,
    }
}

/// The reason as LiveKit names it; `None` for none or `UNKNOWN_REASON`. A name this build does
/// not know is kept as sent, a number it does not know becomes `REASON_<n>`: either is "any
/// other" reason, a drop.
fn disconnect_reason(reason: &Value) -> Option<String> {
    let unknown = proto::DisconnectReason::UnknownReason;
    match reason {
        Value::String(name) if name.is_empty() || name == unknown.as_str_name() => None,
        Value::String(name) => Some(name.clone()),
        Value::Number(number) => {
            let n = number.as_i64().unwrap_or(-1);
            if n == unknown as i64 {
                return None;
            }
            Some(
                i32::try_from(n)
                    .ok()
                    .and_then(|n| proto::DisconnectReason::try_from(n).ok())
                    .map_or_else(|| format!("REASON_{n}"), |r| r.as_str_name().to_owned()),
            )
        }
        _ => None,
    }
}

fn created_at(value: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    let seconds = match value {
        Value::String(text) => text.parse::<i64>().ok()?,
        Value::Number(number) => number.as_i64()?,
        _ => return None,
    };
    (seconds > 0)
        .then(|| chrono::DateTime::from_timestamp(seconds, 0))
        .flatten()
}

/// The event in a body whose signature was checked; the host is the agent of `agent_name`
/// that acts for no one else.
pub fn read_event(body: &[u8], agent_name: &str) -> Result<ProviderEvent, Undecodable> {
    let event: EventBody =
        serde_json::from_slice(body).map_err(|err| Undecodable(err.to_string()))?;
    let who = event.participant.as_ref().map(|p| who(&p.kind));
    let host = event
        .participant
        .as_ref()
        .is_some_and(|p| crate::host::is_host(&p.attributes, agent_name));
    let kind = match (event.event.as_str(), who) {
        ("participant_joined", Some(Who::Agent)) if host => ProviderEventKind::AgentJoined,
        ("participant_left", Some(Who::Agent)) if host => ProviderEventKind::AgentLeft,
        ("participant_joined", Some(Who::Agent)) => ProviderEventKind::OtherAgentJoined,
        ("participant_left", Some(Who::Agent)) => ProviderEventKind::OtherAgentLeft,
        ("participant_joined", Some(Who::Viewer)) => ProviderEventKind::ViewerJoined,
        ("participant_left", Some(Who::Viewer)) => ProviderEventKind::ViewerLeft,
        ("participant_joined", Some(Who::Unknown)) => ProviderEventKind::UnknownParticipantJoined,
        ("participant_joined" | "participant_left", Some(Who::Egress)) => {
            ProviderEventKind::EgressParticipant
        }
        ("egress_started" | "egress_updated" | "egress_ended", _)
            if event.egress_info.is_some() =>
        {
            ProviderEventKind::Egress
        }
        ("room_finished", _) => ProviderEventKind::RoomFinished,
        _ => ProviderEventKind::Other,
    };
    let participant = event.participant.as_ref();
    let egress_room = event
        .egress_info
        .as_ref()
        .map(|info| info.room_name.clone());
    Ok(ProviderEvent {
        id: event.id,
        room_name: event
            .room
            .map(|room| room.name)
            .filter(|name| !name.is_empty())
            .or(egress_room)
            .unwrap_or_default(),
        kind,
        participant: participant.map(|p| p.sid.clone()).unwrap_or_default(),
        identity: participant.map(|p| p.identity.clone()).unwrap_or_default(),
        finished: participant.is_some_and(|p| crate::host::said_finished(&p.attributes)),
        joined_at: participant.and_then(|p| {
            crate::host::joined_at(
                int64(&p.joined_at_ms).unwrap_or(0),
                int64(&p.joined_at).unwrap_or(0),
            )
        }),
        disconnect_reason: participant.and_then(|p| disconnect_reason(&p.disconnect_reason)),
        created_at: created_at(&event.created_at),
        egress: (kind == ProviderEventKind::Egress)
            .then_some(event.egress_info)
            .flatten()
            .map(egress_report),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(body: Value) -> ProviderEvent {
        read_event(body.to_string().as_bytes(), "stream-host").expect("an event")
    }

    fn left(participant: Value) -> ProviderEvent {
        read(
            json!({"event": "participant_left", "id": "EV_1", "createdAt": "1700000000",
                    "room": {"name": "stream-x"}, "participant": participant}),
        )
    }

    #[test]
    fn egress_events_read_their_report_as_names_or_numbers() {
        let event = read(
            json!({"event": "egress_ended", "id": "EV_e", "egressInfo": {
            "egressId": "EG_1", "roomName": "stream-x", "status": 4, "error": "encoder died",
            "streamResults": [{"url": "rtmp://a/k1"}, {"url": "rtmp://b/k2", "status": "FAILED",
                "error": "refused"}, {"url": "rtmp://c/k3", "status": 1}, {"url": "rtmp://d/k4",
                "status": "SOMETHING_NEW"}]}}),
        );
        assert_eq!(
            (event.kind, event.room_name.as_str()),
            (ProviderEventKind::Egress, "stream-x")
        );
        let report = event.egress.expect("a report");
        // 4 is EGRESS_FAILED: ended.
        assert!(report.ended);
        assert_eq!(report.error.as_deref(), Some("encoder died"));
        let states: Vec<OutputState> = report.outputs.iter().map(|o| o.state).collect();
        // Absent is protojson's zero value, ACTIVE; a state this build does not know is none.
        assert_eq!(
            states,
            [
                OutputState::Active,
                OutputState::Failed,
                OutputState::Finished,
                OutputState::Other
            ]
        );
        assert_eq!(report.outputs[1].error.as_deref(), Some("refused"));
        let started = read(json!({"event": "egress_started", "id": "EV_s",
            "egressInfo": {"egressId": "EG_1", "roomName": "stream-x"}}));
        assert!(!started.egress.expect("a report").ended, "EGRESS_STARTING");
        // LiveKit's time limit on an output: ended, its file written, not complete.
        for status in [json!("EGRESS_LIMIT_REACHED"), json!(6)] {
            let limited = read(json!({"event": "egress_ended", "id": "EV_l",
                "egressInfo": {"egressId": "EG_1", "roomName": "stream-x", "status": status}}))
            .egress
            .expect("a report");
            assert!(limited.ended && limited.limit_reached && !limited.complete);
        }
        // An egress event without its info changes nothing.
        assert_eq!(
            read(json!({"event": "egress_ended", "id": "EV_x"})).kind,
            ProviderEventKind::Other
        );
        // The egress's recorder is its own kind, by name or number.
        for kind in [json!("EGRESS"), json!(2)] {
            let joined = read(json!({"event": "participant_joined", "id": "EV_p",
                "room": {"name": "stream-x"}, "participant": {"sid": "PA_e", "kind": kind}}));
            assert_eq!(joined.kind, ProviderEventKind::EgressParticipant);
        }
    }

    /// The host's attributes, as LiveKit's agents framework sets them.
    const HOST: &str = "stream-host";

    #[test]
    fn only_the_agent_of_the_configured_name_is_the_host() {
        let host = json!({"sid": "PA_1", "identity": "agent-AJ_x", "kind": "AGENT",
            "joinedAt": "1700000000", "joinedAtMs": "1700000000250",
            "attributes": {"lk.agent_name": HOST, "lsh.finished": "true"}});
        let event = left(host);
        assert_eq!(event.kind, ProviderEventKind::AgentLeft);
        assert_eq!(event.identity, "agent-AJ_x");
        assert!(event.finished);
        assert_eq!(
            event.joined_at.unwrap().timestamp_millis(),
            1_700_000_000_250
        );
        for attributes in [
            json!({}),
            json!({"lk.agent_name": "another"}),
            json!({"lk.agent_name": HOST, "lk.publish_on_behalf": "agent-AJ_x"}),
        ] {
            let other = left(json!({"sid": "PA_2", "kind": "AGENT", "attributes": attributes}));
            assert_eq!(
                other.kind,
                ProviderEventKind::OtherAgentLeft,
                "{attributes}"
            );
            assert!(!other.finished);
        }
    }

    #[test]
    fn known_values_read_as_the_sdk_names_them() {
        let host = json!({"lk.agent_name": HOST});
        let event = left(json!({"sid": "PA_1", "kind": "AGENT", "attributes": host,
            "disconnectReason": "CLIENT_INITIATED"}));
        assert_eq!(event.kind, ProviderEventKind::AgentLeft);
        assert_eq!(event.disconnect_reason.as_deref(), Some("CLIENT_INITIATED"));
        assert_eq!(event.participant, "PA_1");
        assert_eq!(event.room_name, "stream-x");
        assert_eq!(event.created_at.unwrap().timestamp(), 1_700_000_000);
        // As numbers, as protojson may also write them.
        let event =
            left(json!({"sid": "PA_1", "kind": 4, "attributes": host, "disconnectReason": 1}));
        assert_eq!(event.kind, ProviderEventKind::AgentLeft);
        assert_eq!(event.disconnect_reason.as_deref(), Some("CLIENT_INITIATED"));
        // No kind: a standard participant, a viewer; no reason, or the unknown one: none.
        assert_eq!(
            left(json!({"sid": "PA_2"})).kind,
            ProviderEventKind::ViewerLeft
        );
        for reason in [json!(null), json!("UNKNOWN_REASON"), json!(0), json!("")] {
            let event = left(json!({"sid": "PA_1", "kind": "AGENT", "disconnectReason": reason}));
            assert_eq!(event.disconnect_reason, None, "{reason}");
        }
    }

    #[test]
    fn values_newer_than_the_sdk_are_read_not_refused() {
        let event =
            left(json!({"sid": "PA_1", "kind": "AGENT", "disconnectReason": "SOME_FUTURE_REASON"}));
        assert_eq!(
            event.disconnect_reason.as_deref(),
            Some("SOME_FUTURE_REASON")
        );
        let event = left(json!({"sid": "PA_1", "kind": "AGENT", "disconnectReason": 999}));
        assert_eq!(event.disconnect_reason.as_deref(), Some("REASON_999"));
        // A kind LiveKit adds later is neither an agent nor a viewer.
        for kind in [json!("SOME_FUTURE_KIND"), json!(99)] {
            assert_eq!(
                left(json!({"sid": "PA_3", "kind": kind})).kind,
                ProviderEventKind::Other
            );
            let joined = read(json!({"event": "participant_joined", "id": "EV_3",
                                     "room": {"name": "r"}, "participant": {"sid": "PA_3", "kind": kind}}));
            assert_eq!(joined.kind, ProviderEventKind::UnknownParticipantJoined);
        }
        // Fields the API does not read may hold anything.
        let event = read(
            json!({"event": "room_finished", "id": "EV_2", "room": {"name": "r", "newField": [1]},
                                "egressInfo": {"status": "SOME_FUTURE_STATUS"}}),
        );
        assert_eq!(event.kind, ProviderEventKind::RoomFinished);
    }

    #[test]
    fn a_body_that_is_no_event_is_undecodable() {
        for body in [
            &b"not json"[..],
            b"[1]",
            br#"{"event": 5}"#,
            br#"{"room": {"name": 1}}"#,
        ] {
            assert!(
                read_event(body, "stream-host").is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
