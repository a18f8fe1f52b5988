from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clip_view import ClipView
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    id: str,
    clip_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/streams/{id}/clips/{clip_id}".format(
            id=quote(str(id), safe=""),
            clip_id=quote(str(clip_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ClipView | Error | None:
    if response.status_code == 200:
        response_200 = ClipView.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ClipView | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    clip_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ClipView | Error]:
    """Delete a clip and its file.

     The clip becomes `deleted` and its MP4 is removed (once a cut still running has ended). It stays
    listed and counted; deleting it again answers it again.

    Args:
        id (str):
        clip_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClipView | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        clip_id=clip_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    clip_id: str,
    *,
    client: AuthenticatedClient,
) -> ClipView | Error | None:
    """Delete a clip and its file.

     The clip becomes `deleted` and its MP4 is removed (once a cut still running has ended). It stays
    listed and counted; deleting it again answers it again.

    Args:
        id (str):
        clip_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClipView | Error
    """

    return sync_detailed(
        id=id,
        clip_id=clip_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: str,
    clip_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[ClipView | Error]:
    """Delete a clip and its file.

     The clip becomes `deleted` and its MP4 is removed (once a cut still running has ended). It stays
    listed and counted; deleting it again answers it again.

    Args:
        id (str):
        clip_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClipView | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        clip_id=clip_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    clip_id: str,
    *,
    client: AuthenticatedClient,
) -> ClipView | Error | None:
    """Delete a clip and its file.

     The clip becomes `deleted` and its MP4 is removed (once a cut still running has ended). It stays
    listed and counted; deleting it again answers it again.

    Args:
        id (str):
        clip_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClipView | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            clip_id=clip_id,
            client=client,
        )
    ).parsed
