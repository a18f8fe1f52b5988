from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.show_view import ShowView
from ...models.start_stream_request import StartStreamRequest
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
        "url": "/shows",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | ShowView | None:
    if response.status_code == 201:
        response_201 = ShowView.from_dict(response.json())

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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | ShowView]:
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
) -> Response[Error | ShowView]:
    """Schedule a show: its stream starts at `starts_at`.

     A `POST /streams` body plus `starts_at` (at least `SHOW_MIN_LEAD_SECS` and at most 30 days ahead)
    and `remind_minutes_before` (1 to 1440). The stream's fields are checked now as `POST /streams`
    checks them; the concurrency limit at the start.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ShowView]
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
) -> Error | ShowView | None:
    """Schedule a show: its stream starts at `starts_at`.

     A `POST /streams` body plus `starts_at` (at least `SHOW_MIN_LEAD_SECS` and at most 30 days ahead)
    and `remind_minutes_before` (1 to 1440). The stream's fields are checked now as `POST /streams`
    checks them; the concurrency limit at the start.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ShowView
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
) -> Response[Error | ShowView]:
    """Schedule a show: its stream starts at `starts_at`.

     A `POST /streams` body plus `starts_at` (at least `SHOW_MIN_LEAD_SECS` and at most 30 days ahead)
    and `remind_minutes_before` (1 to 1440). The stream's fields are checked now as `POST /streams`
    checks them; the concurrency limit at the start.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ShowView]
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
) -> Error | ShowView | None:
    """Schedule a show: its stream starts at `starts_at`.

     A `POST /streams` body plus `starts_at` (at least `SHOW_MIN_LEAD_SECS` and at most 30 days ahead)
    and `remind_minutes_before` (1 to 1440). The stream's fields are checked now as `POST /streams`
    checks them; the concurrency limit at the start.

    Args:
        idempotency_key (str | Unset):
        body (StartStreamRequest): Body of `POST /streams`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ShowView
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
