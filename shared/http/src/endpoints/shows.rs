//! Scheduled shows (docs/shows.md), served by the streams function.

use axum::http::Method;
use schemars::{Schema, SchemaGenerator};

use super::{Access, Body, Endpoint, Function, Header, In, Parameter, Response, schema_of};
use super::{list_limit, list_offset, string};
use crate::query::QueryParameters;
use hosting_domain::Scope;
use hosting_domain::error::ErrorCode::*;
use hosting_domain::show::{ShowList, ShowStatus, ShowView};
use hosting_domain::validation::StartStreamRequest;

fn show_status(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<ShowStatus>()
}

crate::query_parameters! {
    /// The query of `GET /shows`.
    pub struct ListShowsParams {
        status: {
            required: false,
            description: "Only shows in this status.",
            schema: show_status,
        },
        limit: {
            required: false,
            description: "Page size; clamped into range.",
            schema: list_limit,
        },
        offset: {
            required: false,
            description: "Shows to skip; clamped to 0.",
            schema: list_offset,
        },
    }
}

pub(super) const SHOW_ID: Parameter = Parameter {
    name: "id",
    location: In::Path,
    required: true,
    description: "The show's `shw_` id. Anything else is simply not found.",
    schema: string,
};

const SHOW: Response = Response {
    status: 200,
    description: "The show.",
    body: Body::Json(schema_of::<ShowView>),
    headers: &[],
};

const SHOW_NOT_FOUND: Response = Response {
    status: 404,
    description: "No such show for this brand.",
    body: Body::Error(&[NotFound]),
    headers: &[],
};

const SCHEDULED_NOT_FOUND: Response = Response {
    status: 404,
    description: "No such show for this brand, or it is no longer `scheduled`.",
    body: Body::Error(&[NotFound]),
    headers: &[],
};

declare_endpoints! {
    pub static SCHEDULE_SHOW: Endpoint = Endpoint {
        operation_id: "scheduleShow",
        tag: "shows",
        function: Function::Streams,
        method: Method::POST,
        path: "/shows",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Schedule a show: its stream starts at `starts_at`.",
        description: "A `POST /streams` body plus `starts_at` (at least `SHOW_MIN_LEAD_SECS` and at most 30 days ahead) and `remind_minutes_before` (1 to 1440). The stream's fields are checked now as `POST /streams` checks them; the concurrency limit at the start.",
        request_body: Some(schema_of::<StartStreamRequest>),
        responses: &[
            Response {
                status: 201,
                description: "Show scheduled.",
                body: Body::Json(schema_of::<ShowView>),
                headers: &[Header {
                    name: "Location",
                    description: "Path of the new show.",
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
                description: "The key lacks `streams:write`, `vertical` is not the brand's, or a platform is not permitted for it.",
                body: Body::Error(&[VerticalMismatch]),
                headers: &[],
            },
        ],
        idempotent: true,
        ..Endpoint::DEFAULT
    };

    pub static LIST_SHOWS: Endpoint = Endpoint {
        operation_id: "listShows",
        tag: "shows",
        function: Function::Streams,
        method: Method::GET,
        path: "/shows",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "List the brand's shows, soonest first.",
        description: "Soonest `starts_at` first. Never answers 400: `limit` and `offset` as `GET /streams`, and an unknown `status` matches nothing.",
        query: ListShowsParams::PARAMETERS,
        responses: &[Response {
            status: 200,
            description: "A page of shows.",
            body: Body::Json(schema_of::<ShowList>),
            headers: &[],
        }],
        ..Endpoint::DEFAULT
    };

    pub static GET_SHOW: Endpoint = Endpoint {
        operation_id: "getShow",
        tag: "shows",
        function: Function::Streams,
        method: Method::GET,
        path: "/shows/{id}",
        access: Access::Keyed(Scope::StreamsRead),
        summary: "Get one show.",
        description: "Missing, another brand's, or an id not in form: 404.",
        parameters: &[SHOW_ID],
        responses: &[SHOW, SHOW_NOT_FOUND],
        ..Endpoint::DEFAULT
    };

    pub static CHANGE_SHOW: Endpoint = Endpoint {
        operation_id: "changeShow",
        tag: "shows",
        function: Function::Streams,
        method: Method::PATCH,
        path: "/shows/{id}",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Change a scheduled show's time, reminder or stream fields.",
        description: "Only while `scheduled`. The fields sent replace the show's, checked as at scheduling.",
        parameters: &[SHOW_ID],
        request_body: Some(schema_of::<StartStreamRequest>),
        responses: &[
            SHOW,
            Response {
                status: 400,
                description: "Invalid JSON or none of the fields (`missing_fields`), a violated constraint (`invalid_fields`), or an unknown creator (`invalid_creator`).",
                body: Body::Error(&[MissingFields, InvalidFields, InvalidCreator]),
                headers: &[],
            },
            Response {
                status: 403,
                description: "The key lacks `streams:write`, `vertical` is not the brand's, or a platform is not permitted for it.",
                body: Body::Error(&[VerticalMismatch]),
                headers: &[],
            },
            SCHEDULED_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static CANCEL_SHOW: Endpoint = Endpoint {
        operation_id: "cancelShow",
        tag: "shows",
        function: Function::Streams,
        method: Method::DELETE,
        path: "/shows/{id}",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Cancel a scheduled show.",
        description: "Only while `scheduled`: the show becomes `cancelled` and never starts.",
        parameters: &[SHOW_ID],
        responses: &[SHOW, SCHEDULED_NOT_FOUND],
        ..Endpoint::DEFAULT
    };
}
