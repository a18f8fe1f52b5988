from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.attempt_status import AttemptStatus
from ...models.delivery_log import DeliveryLog
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    status: AttemptStatus | Unset = UNSET,
    event_id: str | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["event_id"] = event_id

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/webhooks/{id}/deliveries".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeliveryLog | Error | None:
    if response.status_code == 200:
        response_200 = DeliveryLog.from_dict(response.json())

        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DeliveryLog | Error]:
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
    status: AttemptStatus | Unset = UNSET,
    event_id: str | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[DeliveryLog | Error]:
    """A webhook's delivery attempts of the last 30 days, newest first.

     Paged by cursor: pass a page's `next_cursor` as `cursor` for the next; walking the cursors returns
    every attempt of the window once, in order, while new ones are recorded (they appear on a new walk).
    A page costs the same at any depth and with any filter. A malformed or out-of-range `limit` takes
    its default or is clamped, and an unknown `status` matches nothing. Never a response body, never a
    secret.

    Args:
        id (str):
        status (AttemptStatus | Unset):
        event_id (str | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryLog | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        status=status,
        event_id=event_id,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    status: AttemptStatus | Unset = UNSET,
    event_id: str | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> DeliveryLog | Error | None:
    """A webhook's delivery attempts of the last 30 days, newest first.

     Paged by cursor: pass a page's `next_cursor` as `cursor` for the next; walking the cursors returns
    every attempt of the window once, in order, while new ones are recorded (they appear on a new walk).
    A page costs the same at any depth and with any filter. A malformed or out-of-range `limit` takes
    its default or is clamped, and an unknown `status` matches nothing. Never a response body, never a
    secret.

    Args:
        id (str):
        status (AttemptStatus | Unset):
        event_id (str | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryLog | Error
    """

    return sync_detailed(
        id=id,
        client=client,
        status=status,
        event_id=event_id,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    status: AttemptStatus | Unset = UNSET,
    event_id: str | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> Response[DeliveryLog | Error]:
    """A webhook's delivery attempts of the last 30 days, newest first.

     Paged by cursor: pass a page's `next_cursor` as `cursor` for the next; walking the cursors returns
    every attempt of the window once, in order, while new ones are recorded (they appear on a new walk).
    A page costs the same at any depth and with any filter. A malformed or out-of-range `limit` takes
    its default or is clamped, and an unknown `status` matches nothing. Never a response body, never a
    secret.

    Args:
        id (str):
        status (AttemptStatus | Unset):
        event_id (str | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryLog | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        status=status,
        event_id=event_id,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    status: AttemptStatus | Unset = UNSET,
    event_id: str | Unset = UNSET,
    limit: int | Unset = 20,
    cursor: str | Unset = UNSET,
) -> DeliveryLog | Error | None:
    """A webhook's delivery attempts of the last 30 days, newest first.

     Paged by cursor: pass a page's `next_cursor` as `cursor` for the next; walking the cursors returns
    every attempt of the window once, in order, while new ones are recorded (they appear on a new walk).
    A page costs the same at any depth and with any filter. A malformed or out-of-range `limit` takes
    its default or is clamped, and an unknown `status` matches nothing. Never a response body, never a
    secret.

    Args:
        id (str):
        status (AttemptStatus | Unset):
        event_id (str | Unset):
        limit (int | Unset):  Default: 20.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryLog | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            status=status,
            event_id=event_id,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
