from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.start_stream_request import StartStreamRequest
from ...models.stream_created import StreamCreated
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: StartStreamRequest,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/streams",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | StreamCreated | None:
    if response.status_code == 201:
        response_201 = StreamCreated.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 402:
        response_402 = Error.from_dict(response.json())

        return response_402

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if response.status_code == 502:
        response_502 = Error.from_dict(response.json())

        return response_502

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | StreamCreated]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: StartStreamRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | StreamCreated]:
    """Start a stream and dispatch its AI host.

     Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle
    (`live` at once, no room, no billing). With `destinations`, the show is pushed to each once live,
    through one LiveKit room-composite egress (`livekit.Egress/StartRoomCompositeEgress`, stopped with
    `StopEgress` before the room is deleted). Checks in order: missing fields, field constraints,
    vertical, creator, destinations, concurrency.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | StreamCreated]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: StartStreamRequest,
    idempotency_key: str | Unset = UNSET,
) -> Error | StreamCreated | None:
    """Start a stream and dispatch its AI host.

     Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle
    (`live` at once, no room, no billing). With `destinations`, the show is pushed to each once live,
    through one LiveKit room-composite egress (`livekit.Egress/StartRoomCompositeEgress`, stopped with
    `StopEgress` before the room is deleted). Checks in order: missing fields, field constraints,
    vertical, creator, destinations, concurrency.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | StreamCreated
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: StartStreamRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | StreamCreated]:
    """Start a stream and dispatch its AI host.

     Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle
    (`live` at once, no room, no billing). With `destinations`, the show is pushed to each once live,
    through one LiveKit room-composite egress (`livekit.Egress/StartRoomCompositeEgress`, stopped with
    `StopEgress` before the room is deleted). Checks in order: missing fields, field constraints,
    vertical, creator, destinations, concurrency.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | StreamCreated]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: StartStreamRequest,
    idempotency_key: str | Unset = UNSET,
) -> Error | StreamCreated | None:
    """Start a stream and dispatch its AI host.

     Live keys create the stream `preparing` and dispatch the AI host; test keys simulate the lifecycle
    (`live` at once, no room, no billing). With `destinations`, the show is pushed to each once live,
    through one LiveKit room-composite egress (`livekit.Egress/StartRoomCompositeEgress`, stopped with
    `StopEgress` before the room is deleted). Checks in order: missing fields, field constraints,
    vertical, creator, destinations, concurrency.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | StreamCreated
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
