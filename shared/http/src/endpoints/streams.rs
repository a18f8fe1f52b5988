//! Streams and their analytics.

use axum::http::Method;
use schemars::{Schema, SchemaGenerator};

use super::{Access, Body, Endpoint, Function, Header, In, Parameter, Response, schema_of};
use super::{list_limit, list_offset, string};
use crate::query::QueryParameters;
use hosting_domain::analytics::Analytics;
use hosting_domain::destination::{Destination, DestinationRequest};
use hosting_domain::error::ErrorCode::*;
use hosting_domain::stream::{StreamCreated, StreamDetail, StreamEnded, StreamList};
use hosting_domain::validation::StartStreamRequest;
use hosting_domain::{Scope, StreamStatus};

fn stream_status(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<StreamStatus>()
}

fn period(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<hosting_domain::analytics::Period>()
}

crate::query_parameters! {
    /// The query of `GET /streams`.
    pub struct ListStreamsParams {
        status: {
            required: false,
            description: "Only streams in this status.",
            schema: stream_status,
        },
        limit: {
            required: false,
            description: "Page size; clamped into range.",
            schema: list_limit,
        },
        offset: {
            required: false,
            description: "Streams to skip; clamped to 0.",
            schema: list_offset,
        },
    }
}

crate::query_parameters! {
    /// The query of `GET /analytics`.
    pub struct AnalyticsParams {
        period: {
            required: false,
            description: "The window; `7d` when absent.",
            schema: period,
        },
        stream_id: {
            required: false,
            description: "Restricts to one stream; an unknown, foreign or malformed id gives zeros.",
            schema: string,
        },
    }
}

pub(super) const STREAM_ID: Parameter = Parameter {
    name: "id",
    location: In::Path,
    required: true,
    description: "The stream's UUID. Anything else is simply not found.",
    schema: string,
};

pub(super) const DESTINATION_ID: Parameter = Parameter {
    name: "destination_id",
    location: In::Path,
    required: true,
    description: "The destination's `dst_` id.",
    schema: string,
};

const DESTINATION_NOT_FOUND: &str = "No such stream for this brand, or it is not `preparing` or `live`; or no such destination, or one already `failed`, `ended` or `removed`.";

declare_endpoints! {
    pub static START_STREAM: Endpoint = Endpoint {
        operation_id: "startStream",
        tag: "streams",
        function: Function::Streams,
        method: Method::POST,
        path: "/streams",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Start a stream and dispatch its AI host.",
        description: "Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle (`live` at once, no room, no billing). With `destinations`, the show is pushed to each once live, through one LiveKit room-composite egress (`livekit.Egress/StartRoomCompositeEgress`, stopped with `StopEgress` before the room is deleted). Checks in order: missing fields, field constraints, vertical, creator, destinations, concurrency.",
        request_body: Some(schema_of::<StartStreamRequest>),
        responses: &[
            Response {
                status: 201,
                description: "Stream created.",
                body: Body::Json(schema_of::<StreamCreated>),
                headers: &[Header {
                    name: "Location",
                    description: "Path of the new stream.",
                    schema: string,
                }],
            },
            Response {
                status: 400,
                description: "Invalid JSON or a missing field (`missing_fields`), a violated constraint or a malformed Idempotency-Key (`invalid_fields`), or an unknown creator (`invalid_creator`).",
                body: Body::Error(&[MissingFields, InvalidFields, InvalidCreator]),
                headers: &[],
            },
            Response {
                status: 403,
                description: "The key lacks `streams:write` (the message names it), `vertical` is not the brand's, or a destination's platform is not permitted for it.",
                body: Body::Error(&[VerticalMismatch]),
                headers: &[],
            },
            Response {
                status: 429,
                description: "Over {requests_per_minute} requests in the current UTC minute for the brand, or {max_active_streams} streams already active. No Retry-After.",
                body: Body::Error(&[ConcurrencyLimit]),
                headers: &[],
            },
            Response {
                status: 502,
                description: "Room creation or dispatch failed after the record was created; the stream exists with status `error`.",
                body: Body::Error(&[LaunchFailed]),
                headers: &[],
            },
        ],
        idempotent: true,
        // The brand's counters are read alongside the count: a start is two round trips.
        write_counted_alongside: true,
        ..Endpoint::DEFAULT
    };

    pub static LIST_STREAMS: Endpoint = Endpoint {
        operation_id: "listStreams",
        tag: "streams",
        function: Function::Streams,
        method: Method::GET,
        path: "/streams",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "List the brand's streams, newest first.",
        description: "Newest first. Never answers 400: a malformed or out-of-range `limit` or `offset` takes its default or is clamped, and an unknown `status` matches nothing.",
        query: ListStreamsParams::PARAMETERS,
        responses: &[Response {
            status: 200,
            description: "A page of streams.",
            body: Body::Json(schema_of::<StreamList>),
            headers: &[],
        }],
        ..Endpoint::DEFAULT
    };

    pub static GET_STREAM: Endpoint = Endpoint {
        operation_id: "getStream",
        tag: "streams",
        function: Function::Streams,
        method: Method::GET,
        path: "/streams/{id}",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "Get one stream.",
        description: "Missing, another brand's, or a failed lookup: 404.",
        parameters: &[STREAM_ID],
        responses: &[
            Response {
                status: 200,
                description: "The stream.",
                body: Body::Json(schema_of::<StreamDetail>),
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

    pub static END_STREAM: Endpoint = Endpoint {
        operation_id: "endStream",
        tag: "streams",
        function: Function::Streams,
        method: Method::DELETE,
        path: "/streams/{id}",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "End a live stream.",
        description: "Only `live` streams end; anything else is not found. Safe to retry.",
        parameters: &[STREAM_ID],
        responses: &[
            Response {
                status: 200,
                description: "The stream ended.",
                body: Body::Json(schema_of::<StreamEnded>),
                headers: &[],
            },
            Response {
                status: 404,
                description: "No such live stream for this brand.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static ADD_DESTINATION: Endpoint = Endpoint {
        operation_id: "addStreamDestination",
        tag: "streams",
        function: Function::Streams,
        method: Method::POST,
        path: "/streams/{id}/destinations",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Add a destination to a preparing or live stream.",
        description: "`pending` while the stream is `preparing`. Live, it is `starting` and added to the stream's egress (`livekit.Egress/UpdateStream` with `add_output_urls`, or a new `StartRoomCompositeEgress` when none runs); on a test stream it is `active` at once. Checks in order: the body (as one item of `destinations` at start), then the stream, then the count of destinations and one LiveKit would report alike (the same host, path and redacted key).",
        parameters: &[STREAM_ID],
        request_body: Some(schema_of::<DestinationRequest>),
        responses: &[
            Response {
                status: 201,
                description: "The destination added. Its stream key is never shown again.",
                body: Body::Json(schema_of::<Destination>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "Invalid JSON, not an object, or `platform`, `ingest_url` or `stream_key` absent or null (`missing_fields`); a violated constraint, a sixth destination (`removed` ones not counted), or the same `ingest_url` and `stream_key` as another destination (`invalid_fields`).",
                body: Body::Error(&[MissingFields, InvalidFields]),
                headers: &[],
            },
            Response {
                status: 403,
                description: "The key lacks `streams:write` (the message names it), or the platform is not permitted for the brand's vertical.",
                body: Body::Error(&[VerticalMismatch]),
                headers: &[],
            },
            Response {
                status: 404,
                description: DESTINATION_NOT_FOUND,
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static REMOVE_DESTINATION: Endpoint = Endpoint {
        operation_id: "removeStreamDestination",
        tag: "streams",
        function: Function::Streams,
        method: Method::DELETE,
        path: "/streams/{id}/destinations/{destination_id}",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Stop airing a stream on one destination.",
        description: "The destination becomes `removed`, after `livekit.Egress/UpdateStream` with `remove_output_urls` when it was `starting` or `active`.",
        parameters: &[STREAM_ID, DESTINATION_ID],
        responses: &[
            Response {
                status: 200,
                description: "The destination, `removed`.",
                body: Body::Json(schema_of::<Destination>),
                headers: &[],
            },
            Response {
                status: 404,
                description: DESTINATION_NOT_FOUND,
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static GET_ANALYTICS: Endpoint = Endpoint {
        operation_id: "getAnalytics",
        tag: "analytics",
        function: Function::Analytics,
        method: Method::GET,
        path: "/analytics",
        access: Access::Keyed(Scope::AnalyticsRead),
        summary: "Aggregate analytics over 24h, 7d or 30d.",
        description: "Aggregates over the streams created in the window.",
        query: AnalyticsParams::PARAMETERS,
        responses: &[
            Response {
                status: 200,
                description: "The analytics.",
                body: Body::Json(schema_of::<Analytics>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "`period` is not one of the three values.",
                body: Body::Error(&[InvalidFields]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };
}
