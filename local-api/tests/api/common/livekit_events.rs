//! LiveKit's webhook events as LiveKit writes them (protojson), for the tests to sign
//! ([`super::fake_livekit::signed_webhook`]) and send.

/// The event of the host agent joining `room`, with event id `id`.
pub fn agent_joined(room: &str, id: &str) -> serde_json::Value {
    serde_json::json!({"event": "participant_joined", "room": {"sid": "RM_fake", "name": room},
        "participant": {"sid": "PA_agent", "identity": "agent", "state": "ACTIVE", "kind": "AGENT"},
        "id": id, "createdAt": chrono::Utc::now().timestamp().to_string()})
}

/// A participant event in `room` with event id `id`, created now. An agent (`kind` `AGENT`) is
/// always the one host participant `PA_agent`; anyone else is a participant of its own.
pub fn participant_event(
    event: &str,
    room: &str,
    kind: Option<&str>,
    id: &str,
) -> serde_json::Value {
    let sid = match kind {
        Some("AGENT") => "PA_agent".to_owned(),
        _ => format!("PA_{id}"),
    };
    let mut participant =
        serde_json::json!({"sid": sid, "identity": format!("p-{sid}"), "state": "ACTIVE"});
    if let Some(kind) = kind {
        participant["kind"] = serde_json::json!(kind);
    }
    serde_json::json!({"event": event, "room": {"sid": "RM_fake", "name": room},
        "participant": participant, "id": id,
        "createdAt": chrono::Utc::now().timestamp().to_string()})
}

/// Agent participant `sid` joining (`participant_joined`) or leaving (`participant_left`, with
/// `reason` as LiveKit's protojson names it) `room`, as LiveKit signed it at `at`.
pub fn agent_event(
    event: &str,
    room: &str,
    sid: &str,
    reason: Option<&str>,
    id: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> serde_json::Value {
    let mut participant = serde_json::json!({"sid": sid, "identity": format!("host-{sid}"),
        "state": if event == "participant_left" { "DISCONNECTED" } else { "ACTIVE" },
        "kind": "AGENT"});
    if let Some(reason) = reason {
        participant["disconnectReason"] = serde_json::json!(reason);
    }
    serde_json::json!({"event": event, "room": {"sid": "RM_fake", "name": room},
        "participant": participant, "id": id, "createdAt": at.timestamp().to_string()})
}

/// An egress webhook (`egress_started`, `egress_updated`, `egress_ended`) of `egress_id` in
/// `room`, with egress `status` and one stream result per (url, status, error), in LiveKit's
/// protojson (an `ACTIVE` result has no `status`: protojson leaves the zero value out).
pub fn egress_event(
    event: &str,
    room: &str,
    egress_id: &str,
    status: &str,
    results: &[(&str, &str, &str)],
    id: &str,
) -> serde_json::Value {
    let results: Vec<serde_json::Value> = results
        .iter()
        .map(|(url, status, error)| {
            let mut result = serde_json::json!({"url": url, "startedAt": "1700000000000000000"});
            if *status != "ACTIVE" {
                result["status"] = serde_json::json!(status);
            }
            if !error.is_empty() {
                result["error"] = serde_json::json!(error);
            }
            result
        })
        .collect();
    serde_json::json!({"event": event, "id": id,
        "createdAt": chrono::Utc::now().timestamp().to_string(),
        "egressInfo": {"egressId": egress_id, "roomId": "RM_fake", "roomName": room,
            "status": status, "sourceType": "EGRESS_SOURCE_TYPE_WEB",
            "roomComposite": {"roomName": room, "layout": "speaker"},
            "streamResults": results}})
}
