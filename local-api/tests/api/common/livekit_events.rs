//! LiveKit's webhook events as LiveKit writes them (protojson), and signed as LiveKit signs
//! them, for the tests to send.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use serde_json::Value;

use super::fake_livekit::{API_KEY, API_SECRET};

/// Signs `claims` as an HS256 JWT, as LiveKit signs its webhooks.
pub fn sign_jwt(claims: &Value, secret: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{header}.{payload}").as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{header}.{payload}.{signature}")
}

/// Verifies an HS256 JWT with `secret` and returns its claims.
pub fn verify_jwt(token: &str, secret: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).ok()?;
    mac.update(format!("{header}.{payload}").as_bytes());
    mac.verify_slice(&URL_SAFE_NO_PAD.decode(signature).ok()?)
        .ok()?;
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    if header["alg"] != "HS256" {
        return None;
    }
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
}

/// A LiveKit webhook as LiveKit sends it: (body, `Authorization` header), signed with the
/// API secret, valid for 10 minutes.
pub fn signed_webhook(event: &serde_json::Value) -> (String, String) {
    signed_webhook_with(event, API_SECRET, 600)
}

/// A LiveKit webhook signed with `secret`, valid for `expires_in` seconds from now (negative:
/// expired).
pub fn signed_webhook_with(
    event: &serde_json::Value,
    secret: &str,
    expires_in: i64,
) -> (String, String) {
    use sha2::Digest;
    let body = event.to_string();
    let sha =
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(body.as_bytes()));
    let now = chrono::Utc::now().timestamp();
    let claims = serde_json::json!({"iss": API_KEY, "nbf": now - 10, "exp": now + expires_in, "sha256": sha});
    (body, sign_jwt(&claims, secret))
}

/// The attributes LiveKit's agents framework gives the host (`lk.agent_name`, the default
/// `LIVEKIT_AGENT_NAME`).
pub fn host_attributes() -> serde_json::Value {
    serde_json::json!({"lk.agent_name": "stream-host"})
}

/// The event of the host agent joining `room`, with event id `id`.
pub fn agent_joined(room: &str, id: &str) -> serde_json::Value {
    serde_json::json!({"event": "participant_joined", "room": {"sid": "RM_fake", "name": room},
        "participant": {"sid": "PA_agent", "identity": "agent-AJ_agent", "state": "ACTIVE",
            "kind": "AGENT", "attributes": host_attributes()},
        "id": id, "createdAt": chrono::Utc::now().timestamp().to_string()})
}

/// A participant event in `room` with event id `id`, created now. An agent (`kind` `AGENT`) is
/// always the one host participant `PA_agent`, and its `participant_left` is a deliberate end
/// (`lsh.finished`, docs/livekit.md "The agent contract"); anyone else is a participant of its
/// own.
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
    if kind == Some("AGENT") {
        participant["attributes"] = host_attributes();
    }
    let event = serde_json::json!({"event": event, "room": {"sid": "RM_fake", "name": room},
        "participant": participant, "id": id,
        "createdAt": chrono::Utc::now().timestamp().to_string()});
    if kind == Some("AGENT") && event["event"] == "participant_left" {
        return finished(event);
    }
    event
}

/// `event`, a host's `participant_left`, as a host that finished on purpose sends it: with the
/// attribute `lsh.finished` = `"true"`.
pub fn finished(mut event: serde_json::Value) -> serde_json::Value {
    event["participant"]["attributes"]["lsh.finished"] = serde_json::json!("true");
    event
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
    let mut participant = serde_json::json!({"sid": sid, "identity": format!("agent-AJ_{sid}"),
        "state": if event == "participant_left" { "DISCONNECTED" } else { "ACTIVE" },
        "kind": "AGENT", "attributes": host_attributes()});
    if let Some(reason) = reason {
        participant["disconnectReason"] = serde_json::json!(reason);
    }
    serde_json::json!({"event": event, "room": {"sid": "RM_fake", "name": room},
        "participant": participant, "id": id, "createdAt": at.timestamp().to_string()})
}

/// An egress webhook (`egress_started`, `egress_updated`, `egress_ended`) of `egress_id` in
/// `room`, with egress `status` and one stream result per (url, status, error), in LiveKit's
/// protojson (an `ACTIVE` result has no `status`: protojson leaves the zero value out). Each
/// url is given as the egress was asked to push to it, and reported as Egress reports it: its
/// key redacted, a Twitch ingest swapped.
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
            let mut result = serde_json::json!({"url": super::fake_livekit::egress_reported_url(url),
                "startedAt": "1700000000000000000"});
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
