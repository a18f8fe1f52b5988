//! The drop check's part about what LiveKit holds (`invariants.rs`): no live stream with two
//! hosts; no finished stream's room or dispatch left, no egress of it running, no destination of
//! it short of final, no recording of it still `processing` once read back, and no stream key of
//! it stored.

use std::collections::BTreeSet;

use hosting_domain::ports::{StreamKeyStore, StreamListStore, StreamStore};
use hosting_domain::recording::RecordingStatus;
use hosting_domain::{Stream, StreamStatus};

use super::fake_livekit::FakeLiveKit;
use super::invariants::finished_streams;

/// The live streams of `brands` with more than one host in their room (docs/livekit.md, "One
/// host"): read before the drain, which ends every stream.
pub async fn doubled_hosts<S: StreamStore + StreamListStore + StreamKeyStore + ?Sized>(
    store: &S,
    brands: &BTreeSet<String>,
    livekit: &FakeLiveKit,
) -> Vec<String> {
    let mut left = Vec::new();
    for brand in brands {
        for stream in finished_streams(store, brand, StreamStatus::Live, &mut left).await {
            let Some(room) = &stream.room_name else {
                continue;
            };
            let hosts = livekit.hosts(room);
            if hosts.len() > 1 {
                let identities: Vec<&str> = hosts.iter().map(|h| h.identity.as_str()).collect();
                left.push(format!(
                    "stream {} is live with {} hosts in its room: {identities:?}",
                    stream.id,
                    hosts.len()
                ));
            }
        }
    }
    left
}

/// The finished streams of `brands` whose room LiveKit still has, or a dispatch into it.
pub async fn undeleted_rooms<S: StreamStore + StreamListStore + StreamKeyStore + ?Sized>(
    store: &S,
    brands: &BTreeSet<String>,
    livekit: &FakeLiveKit,
) -> Vec<String> {
    let rooms = livekit.rooms();
    let mut left = Vec::new();
    for brand in brands {
        for status in [StreamStatus::Ended, StreamStatus::Error] {
            for stream in finished_streams(store, brand, status, &mut left).await {
                let room = stream
                    .room_name
                    .clone()
                    .unwrap_or_else(|| Stream::room_name_for(stream.id));
                if rooms.contains(&room) {
                    left.push(format!(
                        "stream {} is {}, but its room {room} still exists",
                        stream.id,
                        status.as_str()
                    ));
                }
                for dispatch in livekit.dispatches(&room) {
                    left.push(format!(
                        "stream {} is {}, but its dispatch {} is left",
                        stream.id,
                        status.as_str(),
                        dispatch.id
                    ));
                }
            }
        }
    }
    left
}

/// The finished streams of `brands` with an egress still running in their room, or with
/// stream keys still stored (docs/destinations.md, "Secrecy").
pub async fn unstopped_egresses<S: StreamStore + StreamListStore + StreamKeyStore + ?Sized>(
    store: &S,
    brands: &BTreeSet<String>,
    egresses: &std::collections::HashMap<String, super::fake_livekit::FakeEgress>,
) -> Vec<String> {
    let mut left = Vec::new();
    for brand in brands {
        for status in [StreamStatus::Ended, StreamStatus::Error] {
            for listed in finished_streams(store, brand, status, &mut left).await {
                // The whole stream: a list's items need not carry its destinations.
                let stream = match store.get_stream(listed.id).await {
                    Ok(Some(stream)) => stream,
                    Ok(None) => continue,
                    Err(err) => {
                        left.push(format!("stream {}: unreadable: {err}", listed.id));
                        continue;
                    }
                };
                let room = stream
                    .room_name
                    .clone()
                    .unwrap_or_else(|| Stream::room_name_for(stream.id));
                for (id, egress) in egresses {
                    if egress.running && egress.room == room {
                        left.push(format!(
                            "stream {} is {}, but its egress {id} still runs",
                            stream.id,
                            status.as_str()
                        ));
                    }
                }
                if stream.egress.recording.as_ref().is_some_and(|r| {
                    r.files
                        .iter()
                        .any(|f| f.status == RecordingStatus::Processing)
                }) {
                    left.push(format!(
                        "stream {} is {}, but its recording is still processing after its \
                         egress was read back",
                        stream.id,
                        status.as_str()
                    ));
                }
                let unfinished = stream.destinations.iter().filter(|d| !d.status.is_final());
                left.extend(unfinished.map(|d| {
                    let (id, state) = (&d.destination_id, d.status.as_str());
                    format!(
                        "stream {} is finished, but its destination {id} is {state}",
                        stream.id
                    )
                }));
                match store.stream_keys(stream.id).await {
                    Ok(keys) if keys.is_empty() => {}
                    Ok(_) => left.push(format!(
                        "stream {} is {}, but its stream keys are still stored",
                        stream.id,
                        status.as_str()
                    )),
                    Err(err) => left.push(format!("stream {}: keys unreadable: {err}", stream.id)),
                }
            }
        }
    }
    left
}
