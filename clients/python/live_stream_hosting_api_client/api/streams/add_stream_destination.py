from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.destination import Destination
from ...models.destination_request import DestinationRequest
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: DestinationRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/streams/{id}/destinations".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Destination | Error | None:
    if response.status_code == 201:
        response_201 = Destination.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Destination | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DestinationRequest,
) -> Response[Destination | Error]:
    """Add a destination to a preparing or live stream.

     `pending` while the stream is `preparing`. Live, it is `starting` and added to the stream's egress
    (`livekit.Egress/UpdateStream` with `add_output_urls`, or a new `StartRoomCompositeEgress` when none
    runs); on a test stream it is `active` at once. Checks in order: the body (as one item of
    `destinations` at start), then the stream, then the count of destinations and one LiveKit would
    report alike (the same host, path and redacted key).

    Args:
        id (str):
        body (DestinationRequest): A destination to push the show to: an RTMP ingest and its
            stream key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Destination | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DestinationRequest,
) -> Destination | Error | None:
    """Add a destination to a preparing or live stream.

     `pending` while the stream is `preparing`. Live, it is `starting` and added to the stream's egress
    (`livekit.Egress/UpdateStream` with `add_output_urls`, or a new `StartRoomCompositeEgress` when none
    runs); on a test stream it is `active` at once. Checks in order: the body (as one item of
    `destinations` at start), then the stream, then the count of destinations and one LiveKit would
    report alike (the same host, path and redacted key).

    Args:
        id (str):
        body (DestinationRequest): A destination to push the show to: an RTMP ingest and its
            stream key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Destination | Error
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DestinationRequest,
) -> Response[Destination | Error]:
    """Add a destination to a preparing or live stream.

     `pending` while the stream is `preparing`. Live, it is `starting` and added to the stream's egress
    (`livekit.Egress/UpdateStream` with `add_output_urls`, or a new `StartRoomCompositeEgress` when none
    runs); on a test stream it is `active` at once. Checks in order: the body (as one item of
    `destinations` at start), then the stream, then the count of destinations and one LiveKit would
    report alike (the same host, path and redacted key).

    Args:
        id (str):
        body (DestinationRequest): A destination to push the show to: an RTMP ingest and its
            stream key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Destination | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DestinationRequest,
) -> Destination | Error | None:
    """Add a destination to a preparing or live stream.

     `pending` while the stream is `preparing`. Live, it is `starting` and added to the stream's egress
    (`livekit.Egress/UpdateStream` with `add_output_urls`, or a new `StartRoomCompositeEgress` when none
    runs); on a test stream it is `active` at once. Checks in order: the body (as one item of
    `destinations` at start), then the stream, then the count of destinations and one LiveKit would
    report alike (the same host, path and redacted key).

    Args:
        id (str):
        body (DestinationRequest): A destination to push the show to: an RTMP ingest and its
            stream key.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Destination | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
