//! What the fake LiveKit does for each Twirp call it serves: the requests it reads, the state
//! it changes (rooms, participants, dispatches: `fake_rooms.rs`; egresses: `fake_egress.rs`)
//! and its answers and refusals, as LiveKit's own services give them.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use livekit_protocol as proto;
use prost::Message;

use super::fake_livekit::*;

pub(super) fn decode_call(method: &str, body: Bytes) -> Option<Call> {
    Some(match method {
        CREATE_ROOM => Call::CreateRoom(Box::new(proto::CreateRoomRequest::decode(body).ok()?)),
        DELETE_ROOM => Call::DeleteRoom(proto::DeleteRoomRequest::decode(body).ok()?),
        LIST_ROOMS => Call::ListRooms(proto::ListRoomsRequest::decode(body).ok()?),
        LIST_PARTICIPANTS => {
            Call::ListParticipants(proto::ListParticipantsRequest::decode(body).ok()?)
        }
        REMOVE_PARTICIPANT => {
            Call::RemoveParticipant(proto::RoomParticipantIdentity::decode(body).ok()?)
        }
        CREATE_DISPATCH => {
            Call::CreateDispatch(proto::CreateAgentDispatchRequest::decode(body).ok()?)
        }
        LIST_DISPATCH => Call::ListDispatch(proto::ListAgentDispatchRequest::decode(body).ok()?),
        DELETE_DISPATCH => {
            Call::DeleteDispatch(proto::DeleteAgentDispatchRequest::decode(body).ok()?)
        }
        START_EGRESS => Call::StartEgress(Box::new(
            proto::RoomCompositeEgressRequest::decode(body).ok()?,
        )),
        UPDATE_STREAM => Call::UpdateStream(proto::UpdateStreamRequest::decode(body).ok()?),
        STOP_EGRESS => Call::StopEgress(proto::StopEgressRequest::decode(body).ok()?),
        LIST_EGRESS => Call::ListEgress(proto::ListEgressRequest::decode(body).ok()?),
        _ => return None,
    })
}

/// What LiveKit does for `call`: its answer's body, or its refusal.
pub(super) fn act(shared: &Shared, call: &Call) -> Result<Vec<u8>, Box<Response>> {
    match call {
        Call::CreateRoom(req) => {
            let mut rooms = shared.rooms();
            rooms.create_room(req);
            Ok(rooms
                .room_info(&req.name)
                .unwrap_or_default()
                .encode_to_vec())
        }
        Call::DeleteRoom(req) => {
            if !shared.rooms().close_room(&req.room) {
                return Err(Box::new(not_found("requested room does not exist")));
            }
            // LiveKit ends a room's egresses with the room.
            for egress in shared.egresses.lock().unwrap().values_mut() {
                if egress.room == req.room && egress.running {
                    egress.running = false;
                    egress.ended = Some(stopped_end(egress.records));
                }
            }
            Ok(proto::DeleteRoomResponse::default().encode_to_vec())
        }
        Call::ListRooms(req) => {
            let rooms = shared.rooms();
            let names: Vec<String> = if req.names.is_empty() {
                rooms.rooms.keys().cloned().collect()
            } else {
                req.names.clone()
            };
            let rooms = names
                .iter()
                .filter_map(|name| rooms.room_info(name))
                .collect();
            Ok(proto::ListRoomsResponse { rooms }.encode_to_vec())
        }
        Call::ListParticipants(req) => {
            let rooms = shared.rooms();
            let Some(room) = rooms.rooms.get(&req.room) else {
                return Err(Box::new(not_found("requested room does not exist")));
            };
            let participants = room.participants.iter().map(|p| p.info()).collect();
            Ok(proto::ListParticipantsResponse { participants }.encode_to_vec())
        }
        Call::RemoveParticipant(req) => {
            if !shared
                .rooms()
                .leave(&req.room, &req.identity, "PARTICIPANT_REMOVED")
            {
                return Err(Box::new(not_found("participant not found")));
            }
            Ok(proto::RemoveParticipantResponse::default().encode_to_vec())
        }
        Call::CreateDispatch(req) => {
            let dispatch = shared.rooms().dispatch(
                &req.room,
                &req.agent_name,
                &req.metadata,
                req.restart_policy,
            );
            Ok(proto::AgentDispatch {
                id: dispatch.id,
                agent_name: dispatch.agent_name,
                room: dispatch.room,
                metadata: dispatch.metadata,
                restart_policy: dispatch.restart_policy,
                ..Default::default()
            }
            .encode_to_vec())
        }
        Call::ListDispatch(req) => {
            let rooms = shared.rooms();
            let agent_dispatches = rooms
                .dispatches
                .values()
                .filter(|d| d.room == req.room)
                .filter(|d| req.dispatch_id.is_empty() || d.id == req.dispatch_id)
                .map(|d| proto::AgentDispatch {
                    id: d.id.clone(),
                    agent_name: d.agent_name.clone(),
                    room: d.room.clone(),
                    metadata: d.metadata.clone(),
                    restart_policy: d.restart_policy,
                    ..Default::default()
                })
                .collect();
            Ok(proto::ListAgentDispatchResponse { agent_dispatches }.encode_to_vec())
        }
        Call::DeleteDispatch(req) => {
            let Some(deleted) = shared.rooms().dispatches.remove(&req.dispatch_id) else {
                return Err(Box::new(not_found("dispatch not found")));
            };
            Ok(proto::AgentDispatch {
                id: deleted.id,
                room: deleted.room,
                ..Default::default()
            }
            .encode_to_vec())
        }
        Call::StartEgress(req) => {
            // One URL Egress cannot split refuses the whole start, the file included.
            let urls = req.stream_outputs.iter().flat_map(|o| o.urls.iter());
            let urls = egress_parsed_urls(urls)?;
            let mut egresses = shared.egresses.lock().unwrap();
            let id = format!("EG_{}", egresses.len() + 1);
            egresses.insert(
                id.clone(),
                FakeEgress {
                    room: req.room_name.clone(),
                    streaming: !req.stream_outputs.is_empty(),
                    records: !req.file_outputs.is_empty(),
                    urls,
                    ..FakeEgress::running_in(&req.room_name)
                },
            );
            Ok(proto::EgressInfo {
                egress_id: id,
                room_name: req.room_name.clone(),
                status: proto::EgressStatus::EgressStarting as i32,
                ..Default::default()
            }
            .encode_to_vec())
        }
        Call::UpdateStream(req) => {
            let mut egresses = shared.egresses.lock().unwrap();
            match egresses.get_mut(&req.egress_id) {
                Some(egress) if egress.running && !egress.streaming => {
                    return Err(Box::new(twirp_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_argument",
                        "UpdateStream called on non-streaming egress",
                    )));
                }
                Some(egress) if egress.running => {
                    let added = egress_parsed_urls(req.add_output_urls.iter())?;
                    let removed: Vec<String> = req
                        .remove_output_urls
                        .iter()
                        .map(|url| egress_parsed_url(url).unwrap_or_else(|_| url.clone()))
                        .collect();
                    egress.urls.retain(|url| !removed.contains(url));
                    egress.urls.extend(added);
                }
                Some(_) => {
                    return Err(Box::new(twirp_error(
                        StatusCode::PRECONDITION_FAILED,
                        "failed_precondition",
                        "egress is not active",
                    )));
                }
                None => return Err(Box::new(not_found("egress not found"))),
            }
            Ok(proto::EgressInfo {
                egress_id: req.egress_id.clone(),
                status: proto::EgressStatus::EgressActive as i32,
                ..Default::default()
            }
            .encode_to_vec())
        }
        Call::StopEgress(req) => {
            let mut egresses = shared.egresses.lock().unwrap();
            match egresses.get_mut(&req.egress_id) {
                Some(egress) if egress.running => {
                    egress.running = false;
                    egress.ended = Some(stopped_end(egress.records));
                }
                Some(_) => {
                    return Err(Box::new(twirp_error(
                        StatusCode::PRECONDITION_FAILED,
                        "failed_precondition",
                        "egress with status EGRESS_COMPLETE cannot be stopped",
                    )));
                }
                None => return Err(Box::new(not_found("egress not found"))),
            }
            Ok(proto::EgressInfo {
                egress_id: req.egress_id.clone(),
                status: proto::EgressStatus::EgressEnding as i32,
                ..Default::default()
            }
            .encode_to_vec())
        }
        Call::ListEgress(req) => {
            let egresses = shared.egresses.lock().unwrap();
            if !req.egress_id.is_empty() && !egresses.contains_key(&req.egress_id) {
                // LiveKit answers an id it does not know (any more) with `not_found`.
                return Err(Box::new(not_found("egress does not exist")));
            }
            let items = egresses
                .iter()
                .filter(|(id, _)| req.egress_id.is_empty() || **id == req.egress_id)
                .filter(|(_, e)| req.room_name.is_empty() || e.room == req.room_name)
                .filter(|(_, e)| e.running || !req.active)
                .map(|(id, e)| e.info(id))
                .collect();
            Ok(proto::ListEgressResponse {
                items,
                ..Default::default()
            }
            .encode_to_vec())
        }
    }
}
