from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.analytics import Analytics
from ...models.error import Error
from ...models.period import Period
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    period: Period | Unset = UNSET,
    stream_id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_period: str | Unset = UNSET
    if not isinstance(period, Unset):
        json_period = period.value

    params["period"] = json_period

    params["stream_id"] = stream_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/analytics",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Analytics | Error | None:
    if response.status_code == 200:
        response_200 = Analytics.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Analytics | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    period: Period | Unset = UNSET,
    stream_id: str | Unset = UNSET,
) -> Response[Analytics | Error]:
    """Aggregate analytics over 24h, 7d or 30d.

     Aggregates over the streams created in the window.

    Args:
        period (Period | Unset): The analytics window.
        stream_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Analytics | Error]
    """

    kwargs = _get_kwargs(
        period=period,
        stream_id=stream_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    period: Period | Unset = UNSET,
    stream_id: str | Unset = UNSET,
) -> Analytics | Error | None:
    """Aggregate analytics over 24h, 7d or 30d.

     Aggregates over the streams created in the window.

    Args:
        period (Period | Unset): The analytics window.
        stream_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Analytics | Error
    """

    return sync_detailed(
        client=client,
        period=period,
        stream_id=stream_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    period: Period | Unset = UNSET,
    stream_id: str | Unset = UNSET,
) -> Response[Analytics | Error]:
    """Aggregate analytics over 24h, 7d or 30d.

     Aggregates over the streams created in the window.

    Args:
        period (Period | Unset): The analytics window.
        stream_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Analytics | Error]
    """

    kwargs = _get_kwargs(
        period=period,
        stream_id=stream_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    period: Period | Unset = UNSET,
    stream_id: str | Unset = UNSET,
) -> Analytics | Error | None:
    """Aggregate analytics over 24h, 7d or 30d.

     Aggregates over the streams created in the window.

    Args:
        period (Period | Unset): The analytics window.
        stream_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Analytics | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            period=period,
            stream_id=stream_id,
        )
    ).parsed
