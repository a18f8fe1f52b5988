from http import HTTPStatus
from typing import Any, Literal

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.show_list import ShowList
from ...models.show_status_type_0 import ShowStatusType0
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    status: Literal["starting"] | ShowStatusType0 | Unset = UNSET,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: Literal["starting"] | str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, ShowStatusType0):
        json_status = status.value
    else:
        json_status = status
    params["status"] = json_status

    params["limit"] = limit

    params["offset"] = offset

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/shows",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | ShowList | None:
    if response.status_code == 200:
        response_200 = ShowList.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 402:
        response_402 = Error.from_dict(response.json())

        return response_402

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | ShowList]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    status: Literal["starting"] | ShowStatusType0 | Unset = UNSET,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
) -> Response[Error | ShowList]:
    """List the brand's shows, soonest first.

     Soonest `starts_at` first. Never answers 400: `limit` and `offset` as `GET /streams`, and an unknown
    `status` matches nothing.

    Args:
        status (Literal['starting'] | ShowStatusType0 | Unset):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ShowList]
    """

    kwargs = _get_kwargs(
        status=status,
        limit=limit,
        offset=offset,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    status: Literal["starting"] | ShowStatusType0 | Unset = UNSET,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
) -> Error | ShowList | None:
    """List the brand's shows, soonest first.

     Soonest `starts_at` first. Never answers 400: `limit` and `offset` as `GET /streams`, and an unknown
    `status` matches nothing.

    Args:
        status (Literal['starting'] | ShowStatusType0 | Unset):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ShowList
    """

    return sync_detailed(
        client=client,
        status=status,
        limit=limit,
        offset=offset,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    status: Literal["starting"] | ShowStatusType0 | Unset = UNSET,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
) -> Response[Error | ShowList]:
    """List the brand's shows, soonest first.

     Soonest `starts_at` first. Never answers 400: `limit` and `offset` as `GET /streams`, and an unknown
    `status` matches nothing.

    Args:
        status (Literal['starting'] | ShowStatusType0 | Unset):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ShowList]
    """

    kwargs = _get_kwargs(
        status=status,
        limit=limit,
        offset=offset,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    status: Literal["starting"] | ShowStatusType0 | Unset = UNSET,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
) -> Error | ShowList | None:
    """List the brand's shows, soonest first.

     Soonest `starts_at` first. Never answers 400: `limit` and `offset` as `GET /streams`, and an unknown
    `status` matches nothing.

    Args:
        status (Literal['starting'] | ShowStatusType0 | Unset):
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ShowList
    """

    return (
        await asyncio_detailed(
            client=client,
            status=status,
            limit=limit,
            offset=offset,
        )
    ).parsed
