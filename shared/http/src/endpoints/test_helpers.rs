//! The test helpers: test keys move their own live test streams (docs/test-helpers.md).

use axum::http::Method;

use super::shows::SHOW_ID;
use super::streams::{DESTINATION_ID, STREAM_ID};
use super::{Access, Body, Endpoint, Function, Response, schema_of};
use hosting_domain::Scope;
use hosting_domain::destination::{Destination, TestFailureRequest};
use hosting_domain::error::ErrorCode::*;
use hosting_domain::stream::StreamDetail;
use hosting_domain::validation::SetViewersRequest;

const TEST_HELPER_NOT_FOUND: Response = Response {
    status: 404,
    description: "A live key, a stream started with a live key, no such stream for this brand, or a test stream that is not `live`.",
    body: Body::Error(&[NotFound]),
    headers: &[],
};

const TEST_HELPER_DETAIL: Response = Response {
    status: 200,
    description: "The stream after the change.",
    body: Body::Json(schema_of::<StreamDetail>),
    headers: &[],
};

declare_endpoints! {
    pub static SET_TEST_STREAM_VIEWERS: Endpoint = Endpoint {
        operation_id: "setTestStreamViewers",
        tag: "test_helpers",
        function: Function::Streams,
        method: Method::POST,
        path: "/test_helpers/streams/{id}/viewers",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Test keys: set a live test stream's viewer count.",
        description: "Sets `viewer_count` of a live test stream; list, detail and analytics show it at once. Checks in order: the body, then the stream.",
        parameters: &[STREAM_ID],
        request_body: Some(schema_of::<SetViewersRequest>),
        responses: &[
            TEST_HELPER_DETAIL,
            Response {
                status: 400,
                description: "Invalid JSON, not an object, or `count` absent or null (`missing_fields`); `count` not a JSON integer from 0 to {max_test_viewer_count} (`invalid_fields`).",
                body: Body::Error(&[MissingFields, InvalidFields]),
                headers: &[],
            },
            TEST_HELPER_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static FINISH_TEST_STREAM: Endpoint = Endpoint {
        operation_id: "finishTestStream",
        tag: "test_helpers",
        function: Function::Streams,
        method: Method::POST,
        path: "/test_helpers/streams/{id}/finish",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Test keys: end a live test stream as if its host had left.",
        description: "The stream becomes `ended` with `end_reason` `host_left`, `stream.ended` is sent and its slot released. Takes no body; any body is ignored.",
        parameters: &[STREAM_ID],
        responses: &[TEST_HELPER_DETAIL, TEST_HELPER_NOT_FOUND],
        ..Endpoint::DEFAULT
    };

    pub static FAIL_TEST_STREAM: Endpoint = Endpoint {
        operation_id: "failTestStream",
        tag: "test_helpers",
        function: Function::Streams,
        method: Method::POST,
        path: "/test_helpers/streams/{id}/fail",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Test keys: fail a live test stream as if its room provider had failed.",
        description: "The stream becomes `error` with `ended_at` set and `end_reason` `provider_error`, `stream.error` is sent and its slot released. Takes no body; any body is ignored.",
        parameters: &[STREAM_ID],
        responses: &[TEST_HELPER_DETAIL, TEST_HELPER_NOT_FOUND],
        ..Endpoint::DEFAULT
    };

    pub static FAIL_TEST_DESTINATION: Endpoint = Endpoint {
        operation_id: "failTestStreamDestination",
        tag: "test_helpers",
        function: Function::Streams,
        method: Method::POST,
        path: "/test_helpers/streams/{id}/destinations/{destination_id}/fail",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Test keys: fail one destination of a live test stream.",
        description: "The destination becomes `failed` with `error` (default `simulated failure`) and `stream.destination_failed` is sent. The body is optional. Checks in order: the body, then the stream, then the destination.",
        parameters: &[STREAM_ID, DESTINATION_ID],
        request_body: Some(schema_of::<TestFailureRequest>),
        responses: &[
            Response {
                status: 200,
                description: "The destination, `failed`.",
                body: Body::Json(schema_of::<Destination>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "A body that is not a JSON object, or an `error` that is not a string of 1 to 200 characters (`invalid_fields`).",
                body: Body::Error(&[InvalidFields]),
                headers: &[],
            },
            Response {
                status: 404,
                description: "A live key, a stream started with a live key, no such stream for this brand, a test stream that is not `live`, or no such destination, or one already `failed`, `ended` or `removed`.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static START_TEST_SHOW: Endpoint = Endpoint {
        operation_id: "startTestShow",
        tag: "test_helpers",
        function: Function::Streams,
        method: Method::POST,
        path: "/test_helpers/shows/{id}/start",
        access: Access::Keyed(Scope::StreamsWrite),
        summary: "Test keys: start a scheduled test show now, as its time would.",
        description: "The show starts its test stream now (`started`, or `failed` with the error the start met) and its event is sent. Takes no body; any body is ignored.",
        parameters: &[SHOW_ID],
        responses: &[
            Response {
                status: 200,
                description: "The show after its start.",
                body: Body::Json(schema_of::<hosting_domain::show::ShowView>),
                headers: &[],
            },
            Response {
                status: 404,
                description: "A live key, a show made with a live key, no such show for this brand, or a show that is not `scheduled`.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };
}
