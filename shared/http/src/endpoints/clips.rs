//! A stream's clips (docs/clips.md).

use axum::http::Method;

use super::streams::STREAM_ID;
use super::{Access, Body, Endpoint, Function, Header, In, Parameter, Response, schema_of, string};
use hosting_domain::Scope;
use hosting_domain::clip::{ClipList, ClipRequest, ClipView};
use hosting_domain::error::ErrorCode::*;

pub(super) const CLIP_ID: Parameter = Parameter {
    name: "clip_id",
    location: In::Path,
    required: true,
    description: "The clip's `clp_` id.",
    schema: string,
};

const CLIP_NOT_FOUND: &str = "No such stream for this brand, or no such clip of it (`GET` and `DELETE` answer a `deleted` clip).";

declare_endpoints! {
    pub static CUT_CLIP: Endpoint = Endpoint {
        operation_id: "cutClip",
        tag: "clips",
        function: Function::Streams,
        method: Method::POST,
        path: "/streams/{id}/clips",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Cut a clip from a stream's ready recording.",
        description: "The clip is `pending`, then cut in the background without re-encoding (from the last video keyframe at or before `start_seconds` through the frame covering `end_seconds`), then `ready` with a download URL, or `failed` with its `error`; `stream.clip_ready` or `stream.clip_failed` follows. Times count from the start of the recording: its first part, then its next parts in order. Checks in order: the body (not an object or a time absent: `missing_fields`; then each constraint), the stream, the recording's state, the range against the recording's parts, then the count of the stream's clips ({max_clips_per_stream}, deleted ones included).",
        parameters: &[STREAM_ID],
        request_body: Some(schema_of::<ClipRequest>),
        responses: &[
            Response {
                status: 202,
                description: "The clip, `pending`: read it, or wait for its event.",
                body: Body::Json(schema_of::<ClipView>),
                headers: &[Header {
                    name: "Location",
                    description: "Path of the new clip.",
                    schema: string,
                }],
            },
            Response {
                status: 400,
                description: "Invalid JSON, not an object, or `start_seconds` or `end_seconds` absent or null (`missing_fields`); a time not a number, `start_seconds` below 0, `end_seconds` not after it, a length under 1 s or over `CLIP_MAX_SECONDS`, `title` not a string of 1 to 200 characters, a malformed Idempotency-Key, a range past the recording's duration or across two of its parts, or a clip past the stream's {max_clips_per_stream} (`invalid_fields`).",
                body: Body::Error(&[MissingFields, InvalidFields]),
                headers: &[],
            },
            Response {
                status: 404,
                description: "No such stream for this brand, or it was not started with `record: true`.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
            Response {
                status: 409,
                description: "The recording is not `ready` (`recording_not_ready`): not yet, `failed`, or `expired`.",
                body: Body::Error(&[RecordingNotReady]),
                headers: &[],
            },
        ],
        idempotent: true,
        ..Endpoint::DEFAULT
    };

    pub static LIST_CLIPS: Endpoint = Endpoint {
        operation_id: "listClips",
        tag: "clips",
        function: Function::Streams,
        method: Method::GET,
        path: "/streams/{id}/clips",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "List a stream's clips, oldest first.",
        description: "Every clip of the stream (at most {max_clips_per_stream}, `deleted` ones included), each `ready` one with a fresh download URL.",
        parameters: &[STREAM_ID],
        responses: &[
            Response {
                status: 200,
                description: "The stream's clips.",
                body: Body::Json(schema_of::<ClipList>),
                headers: &[],
            },
            Response {
                status: 404,
                description: "No such stream for this brand.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static GET_CLIP: Endpoint = Endpoint {
        operation_id: "getClip",
        tag: "clips",
        function: Function::Streams,
        method: Method::GET,
        path: "/streams/{id}/clips/{clip_id}",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "Get one clip.",
        description: "`ready`: with a fresh download URL, valid `RECORDING_URL_TTL_SECS`. Past the recording's retention: `expired`, without one.",
        parameters: &[STREAM_ID, CLIP_ID],
        responses: &[
            Response {
                status: 200,
                description: "The clip.",
                body: Body::Json(schema_of::<ClipView>),
                headers: &[],
            },
            Response {
                status: 404,
                description: CLIP_NOT_FOUND,
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static DELETE_CLIP: Endpoint = Endpoint {
        operation_id: "deleteClip",
        tag: "clips",
        function: Function::Streams,
        method: Method::DELETE,
        path: "/streams/{id}/clips/{clip_id}",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Delete a clip and its file.",
        description: "The clip becomes `deleted` and its MP4 is removed (once a cut still running has ended). It stays listed and counted; deleting it again answers it again.",
        parameters: &[STREAM_ID, CLIP_ID],
        responses: &[
            Response {
                status: 200,
                description: "The clip, `deleted`.",
                body: Body::Json(schema_of::<ClipView>),
                headers: &[],
            },
            Response {
                status: 404,
                description: CLIP_NOT_FOUND,
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };
}
