//! Webhooks: registration, listing and deletion, and the operations on one webhook
//! (docs/webhooks.md, "Registration", "Listing and deleting" and "Webhook operations").

use axum::http::Method;
use schemars::{Schema, SchemaGenerator};

use super::{Access, Body, Endpoint, Function, In, Parameter, Response, schema_of};
use super::{list_limit, string};
use crate::query::QueryParameters;
use hosting_domain::Scope;
use hosting_domain::delivery_log::{
    AttemptStatus, DeliveryLog, RedeliverRequest, Redelivered, TestDelivery,
};
use hosting_domain::error::ErrorCode::*;
use hosting_domain::webhook::{
    RegisterWebhookRequest, RotateSecretRequest, SecretRotated, UpdateWebhookRequest,
    WebhookDeleted, WebhookDetail, WebhookList, WebhookRegistered,
};

fn attempt_status(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<AttemptStatus>()
}

crate::query_parameters! {
    /// The query of `DELETE /webhooks`.
    pub struct DeleteWebhookParams {
        id: {
            required: true,
            description: "The webhook_id.",
            schema: string,
        },
    }
}

crate::query_parameters! {
    /// The query of `GET /webhooks/{id}/deliveries`.
    pub struct DeliveriesParams {
        status: {
            required: false,
            description: "Only attempts that succeeded, or only those that failed.",
            schema: attempt_status,
        },
        event_id: {
            required: false,
            description: "Only this event's attempts.",
            schema: string,
        },
        limit: {
            required: false,
            description: "Page size; clamped into range.",
            schema: list_limit,
        },
        cursor: {
            required: false,
            description: "The `next_cursor` of the previous page, with the same filters.",
            schema: string,
        },
    }
}

const WEBHOOK_ID: Parameter = Parameter {
    name: "id",
    location: In::Path,
    required: true,
    description: "The `webhook_id`. Absent, another brand's or not a UUID: 404.",
    schema: string,
};

const WEBHOOK_NOT_FOUND: Response = Response {
    status: 404,
    description: "No such webhook for this brand.",
    body: Body::Error(&[NotFound]),
    headers: &[],
};

declare_endpoints! {
    pub static REGISTER_WEBHOOK: Endpoint = Endpoint {
        operation_id: "registerWebhook",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::POST,
        path: "/webhooks",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Register a webhook.",
        description: "The secret is returned only here (and in a replay of this answer). At most {max_webhooks} webhooks per brand.",
        request_body: Some(schema_of::<RegisterWebhookRequest>),
        responses: &[
            Response {
                status: 201,
                description: "Registered.",
                body: Body::Json(schema_of::<WebhookRegistered>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "Invalid JSON or a missing field, a URL that is not HTTPS on a public host, bad events, a malformed Idempotency-Key, or a webhook over the {max_webhooks}.",
                body: Body::Error(&[MissingFields, InvalidUrl, InvalidEvents, InvalidFields]),
                headers: &[],
            },
        ],
        idempotent: true,
        ..Endpoint::DEFAULT
    };

    pub static LIST_WEBHOOKS: Endpoint = Endpoint {
        operation_id: "listWebhooks",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::GET,
        path: "/webhooks",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "List the brand's webhooks.",
        description: "Newest first; never the secret.",
        responses: &[Response {
            status: 200,
            description: "The brand's webhooks.",
            body: Body::Json(schema_of::<WebhookList>),
            headers: &[],
        }],
        ..Endpoint::DEFAULT
    };

    pub static DELETE_WEBHOOK: Endpoint = Endpoint {
        operation_id: "deleteWebhook",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::DELETE,
        path: "/webhooks",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Delete a webhook: ?id=<webhook_id>.",
        description: "Idempotent: never 404.",
        query: DeleteWebhookParams::PARAMETERS,
        responses: &[
            Response {
                status: 200,
                description: "Deleted (or nothing to delete).",
                body: Body::Json(schema_of::<WebhookDeleted>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "`id` is absent or empty.",
                body: Body::Error(&[MissingFields]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };

    pub static GET_WEBHOOK: Endpoint = Endpoint {
        operation_id: "getWebhook",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::GET,
        path: "/webhooks/{id}",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Get one webhook.",
        description: "Never the secret; `secret_rotated_at` tells when it last changed.",
        parameters: &[WEBHOOK_ID],
        responses: &[
            Response {
                status: 200,
                description: "The webhook.",
                body: Body::Json(schema_of::<WebhookDetail>),
                headers: &[],
            },
            WEBHOOK_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static UPDATE_WEBHOOK: Endpoint = Endpoint {
        operation_id: "updateWebhook",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::PATCH,
        path: "/webhooks/{id}",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Change a webhook's URL, events or active state.",
        description: "Any of `url`, `events`, `active`, each checked as at registration, in that order; unknown fields are ignored. `active: true` enables a disabled webhook and clears `disabled_reason` and `failing_since`; `active: false` disables it (`disabled_reason: manual`).",
        parameters: &[WEBHOOK_ID],
        request_body: Some(schema_of::<UpdateWebhookRequest>),
        responses: &[
            Response {
                status: 200,
                description: "The webhook as changed.",
                body: Body::Json(schema_of::<WebhookDetail>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "Invalid JSON, not an object or none of the three fields (`missing_fields`), a URL that is not HTTPS on a public host (`invalid_url`), bad events (`invalid_events`), or an `active` that is not a boolean (`invalid_fields`).",
                body: Body::Error(&[MissingFields, InvalidUrl, InvalidEvents, InvalidFields]),
                headers: &[],
            },
            WEBHOOK_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static ROTATE_WEBHOOK_SECRET: Endpoint = Endpoint {
        operation_id: "rotateWebhookSecret",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::POST,
        path: "/webhooks/{id}/rotate-secret",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Rotate a webhook's secret without downtime.",
        description: "A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in `webhook-signature`), and the Ed25519 key pair is replaced with the same overlap (two `v1a,`), so receivers verify with either while they switch; after it, with the new one only. A rotation during an overlap drops the oldest: at most two secrets sign at any time. The body is optional.",
        parameters: &[WEBHOOK_ID],
        request_body: Some(schema_of::<RotateSecretRequest>),
        body_optional: true,
        responses: &[
            Response {
                status: 200,
                description: "The new secret.",
                body: Body::Json(schema_of::<SecretRotated>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "`expire_previous_in_seconds` is not a whole number from 0 to 86400, or the body is not a JSON object.",
                body: Body::Error(&[InvalidFields]),
                headers: &[],
            },
            WEBHOOK_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static TEST_WEBHOOK: Endpoint = Endpoint {
        operation_id: "testWebhook",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::POST,
        path: "/webhooks/{id}/test",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Send a signed test event to a webhook now.",
        description: "One `webhook.test` event, `{\"id\", \"type\": \"webhook.test\", \"created_at\", \"api_version\": \"v1\", \"test\": true, \"data\": {\"webhook_id\"}}`, with the headers and signatures of every delivery and the URL rules at delivery time, whatever the webhook's `active` state and events; sent once, never retried (a `410` answer disables nothing, and its outcome leaves `failing_since` as it is), and recorded in the delivery log. No request body.",
        parameters: &[WEBHOOK_ID],
        responses: &[
            Response {
                status: 200,
                description: "What the receiver did with it.",
                body: Body::Json(schema_of::<TestDelivery>),
                headers: &[],
            },
            WEBHOOK_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static LIST_DELIVERIES: Endpoint = Endpoint {
        operation_id: "listWebhookDeliveries",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::GET,
        path: "/webhooks/{id}/deliveries",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "A webhook's delivery attempts of the last 30 days, newest first.",
        description: "Paged by cursor: pass a page's `next_cursor` as `cursor` for the next; walking the cursors returns every attempt of the window once, in order, while new ones are recorded (they appear on a new walk). A page costs the same at any depth and with any filter. A malformed or out-of-range `limit` takes its default or is clamped, and an unknown `status` matches nothing. Never a response body, never a secret.",
        parameters: &[WEBHOOK_ID],
        query: DeliveriesParams::PARAMETERS,
        responses: &[
            Response {
                status: 200,
                description: "A page of attempts.",
                body: Body::Json(schema_of::<DeliveryLog>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "A `cursor` that is malformed, another webhook's, or made with other filters (`invalid_fields`).",
                body: Body::Error(&[InvalidFields]),
                headers: &[],
            },
            WEBHOOK_NOT_FOUND,
        ],
        ..Endpoint::DEFAULT
    };

    pub static REDELIVER: Endpoint = Endpoint {
        operation_id: "redeliverWebhookEvents",
        tag: "webhooks",
        function: Function::Webhooks,
        method: Method::POST,
        path: "/webhooks/{id}/redeliver",
        access: Access::Keyed(Scope::WebhooksWrite),
        summary: "Send events to a webhook again.",
        description: "Exactly one of `event_id` (that event again: same id and body, as a new delivery with its own attempts and retries) or `since` (the events of the last 30 days created at or after it whose delivery to this webhook ended failed, with no redelivery pending or succeeded: each sent again once, oldest first, at most 1,000 a call; `has_more` says to call again for the next ones).",
        parameters: &[WEBHOOK_ID],
        request_body: Some(schema_of::<RedeliverRequest>),
        responses: &[
            Response {
                status: 202,
                description: "Queued.",
                body: Body::Json(schema_of::<Redelivered>),
                headers: &[],
            },
            Response {
                status: 400,
                description: "Invalid JSON, not an object, or neither field (`missing_fields`); both fields, an `event_id` that is not a string, or a `since` that is not a date-time within the last 30 days (`invalid_fields`).",
                body: Body::Error(&[MissingFields, InvalidFields]),
                headers: &[],
            },
            Response {
                status: 404,
                description: "No such webhook for this brand, or (`event_id`) no delivery of that event to it in the last 30 days.",
                body: Body::Error(&[NotFound]),
                headers: &[],
            },
        ],
        ..Endpoint::DEFAULT
    };
}
