"""The generated Python client, used as an integrator would, against a running server.

usage: python_smoke.py BASE_URL TEST_KEY
"""

import sys
import uuid
from typing import TypeVar

from live_stream_hosting_api_client import AuthenticatedClient, Client
from live_stream_hosting_api_client.api.analytics import get_analytics
from live_stream_hosting_api_client.api.creators import list_creators
from live_stream_hosting_api_client.api.streams import end_stream, get_stream, list_streams, start_stream
from live_stream_hosting_api_client.api.test_helpers import fail_test_stream, set_test_stream_viewers
from live_stream_hosting_api_client.api.webhooks import delete_webhook, list_webhooks, register_webhook
from live_stream_hosting_api_client.models import (
    Analytics,
    CreatorList,
    EndReason,
    Error,
    ErrorCode,
    EventType,
    Period,
    RegisterWebhookRequest,
    SetViewersRequest,
    StartStreamRequest,
    StreamCreated,
    StreamDetail,
    StreamEnded,
    StreamList,
    StreamStatus,
    WebhookDeleted,
    WebhookList,
    WebhookRegistered,
)
from live_stream_hosting_api_client.models.start_stream_request_platform import StartStreamRequestPlatform


T = TypeVar("T")


def expect(answer: object, kind: type[T]) -> T:
    assert isinstance(answer, kind), f"expected {kind.__name__}, got {answer!r}"
    return answer


def main(base_url: str, key: str) -> None:
    public = Client(base_url=base_url)
    client = AuthenticatedClient(base_url=base_url, token=key)

    creators = expect(list_creators.sync(client=public), CreatorList)
    assert creators.creators, "the catalog is empty"
    creator = creators.creators[0]

    request = StartStreamRequest(
        creator_id=creator.id,
        product_name="Glow Serum",
        platform=StartStreamRequestPlatform.TIKTOK,
        duration_minutes=30,
    )
    idempotency_key = f"smoke-{uuid.uuid4()}"
    created = expect(start_stream.sync(client=client, body=request, idempotency_key=idempotency_key), StreamCreated)
    assert created.status == StreamStatus.LIVE and created.test is True
    replay = start_stream.sync_detailed(client=client, body=request, idempotency_key=idempotency_key)
    assert replay.status_code == 201 and replay.headers.get("Idempotent-Replayed") == "true"
    assert expect(replay.parsed, StreamCreated).stream_id == created.stream_id

    stream_id = str(created.stream_id)
    detail = expect(get_stream.sync(client=client, id=stream_id), StreamDetail)
    assert detail.stream_id == created.stream_id and detail.product_name == "Glow Serum"
    assert detail.events == []

    page = expect(list_streams.sync(client=client, status=StreamStatus.LIVE, limit=5), StreamList)
    assert any(s.id == created.stream_id for s in page.streams) and page.limit == 5

    ended = expect(end_stream.sync(client=client, id=stream_id), StreamEnded)
    assert ended.status == StreamStatus.ENDED
    gone = expect(end_stream.sync(client=client, id=stream_id), Error)
    assert gone.error.code == ErrorCode.NOT_FOUND
    after = expect(get_stream.sync(client=client, id=stream_id), StreamDetail)
    assert after.end_reason == EndReason.REQUESTED

    # The test helpers: a second test stream gains viewers, then fails as a provider would.
    failing = expect(start_stream.sync(client=client, body=request), StreamCreated)
    watched = expect(
        set_test_stream_viewers.sync(client=client, id=str(failing.stream_id), body=SetViewersRequest(count=120)),
        StreamDetail,
    )
    assert watched.viewer_count == 120 and watched.status == StreamStatus.LIVE
    failed = expect(fail_test_stream.sync(client=client, id=str(failing.stream_id)), StreamDetail)
    assert failed.status == StreamStatus.ERROR and failed.end_reason == EndReason.PROVIDER_ERROR

    analytics = expect(get_analytics.sync(client=client, period=Period.HOURS_24), Analytics)
    assert analytics.period == Period.HOURS_24 and analytics.total_streams >= 1

    registered = expect(
        register_webhook.sync(
            client=client,
            body=RegisterWebhookRequest(
                url="https://hooks.example.com/live",
                events=[EventType.STREAM_STARTED, EventType.STREAM_ENDED],
            ),
        ),
        WebhookRegistered,
    )
    assert registered.secret.startswith("whsec_")
    listed = expect(list_webhooks.sync(client=client), WebhookList)
    assert any(w.webhook_id == registered.webhook_id for w in listed.webhooks)
    deleted = expect(delete_webhook.sync(client=client, id=str(registered.webhook_id)), WebhookDeleted)
    assert deleted.deleted is True

    # An error, read as the typed error: 400 invalid_fields for a product name too long.
    too_long = StartStreamRequest(
        creator_id=creator.id,
        product_name="x" * 201,
        platform=StartStreamRequestPlatform.YOUTUBE,
    )
    refused = start_stream.sync_detailed(client=client, body=too_long)
    assert refused.status_code == 400
    error = expect(refused.parsed, Error)
    assert error.error.code == ErrorCode.INVALID_FIELDS and "product_name" in error.error.message

    print("python client: every call answered as documented")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
