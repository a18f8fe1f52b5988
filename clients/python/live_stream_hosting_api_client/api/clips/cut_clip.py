from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.clip_request import ClipRequest
from ...models.clip_view import ClipView
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    body: ClipRequest,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/streams/{id}/clips".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ClipView | Error | None:
    if response.status_code == 202:
        response_202 = ClipView.from_dict(response.json())

        return response_202

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ClipView | Error]:
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
    body: ClipRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[ClipView | Error]:
    """Cut a clip from a stream's ready recording.

     The clip is `pending`, then cut in the background without re-encoding (from the last video keyframe
    at or before `start_seconds` through the frame covering `end_seconds`), then `ready` with a download
    URL, or `failed` with its `error`; `stream.clip_ready` or `stream.clip_failed` follows. Times count
    from the start of the recording: its first part, then its next parts in order. Checks in order: the
    body (not an object or a time absent: `missing_fields`; then each constraint), the stream, the
    recording's state, the range against the recording's parts, then the count of the stream's clips
    (50, deleted ones included).

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ClipRequest): Body of `POST /streams/{id}/clips`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClipView | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ClipRequest,
    idempotency_key: str | Unset = UNSET,
) -> ClipView | Error | None:
    """Cut a clip from a stream's ready recording.

     The clip is `pending`, then cut in the background without re-encoding (from the last video keyframe
    at or before `start_seconds` through the frame covering `end_seconds`), then `ready` with a download
    URL, or `failed` with its `error`; `stream.clip_ready` or `stream.clip_failed` follows. Times count
    from the start of the recording: its first part, then its next parts in order. Checks in order: the
    body (not an object or a time absent: `missing_fields`; then each constraint), the stream, the
    recording's state, the range against the recording's parts, then the count of the stream's clips
    (50, deleted ones included).

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ClipRequest): Body of `POST /streams/{id}/clips`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClipView | Error
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ClipRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[ClipView | Error]:
    """Cut a clip from a stream's ready recording.

     The clip is `pending`, then cut in the background without re-encoding (from the last video keyframe
    at or before `start_seconds` through the frame covering `end_seconds`), then `ready` with a download
    URL, or `failed` with its `error`; `stream.clip_ready` or `stream.clip_failed` follows. Times count
    from the start of the recording: its first part, then its next parts in order. Checks in order: the
    body (not an object or a time absent: `missing_fields`; then each constraint), the stream, the
    recording's state, the range against the recording's parts, then the count of the stream's clips
    (50, deleted ones included).

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ClipRequest): Body of `POST /streams/{id}/clips`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ClipView | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    body: ClipRequest,
    idempotency_key: str | Unset = UNSET,
) -> ClipView | Error | None:
    """Cut a clip from a stream's ready recording.

     The clip is `pending`, then cut in the background without re-encoding (from the last video keyframe
    at or before `start_seconds` through the frame covering `end_seconds`), then `ready` with a download
    URL, or `failed` with its `error`; `stream.clip_ready` or `stream.clip_failed` follows. Times count
    from the start of the recording: its first part, then its next parts in order. Checks in order: the
    body (not an object or a time absent: `missing_fields`; then each constraint), the stream, the
    recording's state, the range against the recording's parts, then the count of the stream's clips
    (50, deleted ones included).

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ClipRequest): Body of `POST /streams/{id}/clips`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ClipView | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
