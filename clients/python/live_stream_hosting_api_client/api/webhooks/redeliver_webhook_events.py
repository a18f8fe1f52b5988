from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.redeliver_request import RedeliverRequest
from ...models.redelivered import Redelivered
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: RedeliverRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/webhooks/{id}/redeliver".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | Redelivered | None:
    if response.status_code == 202:
        response_202 = Redelivered.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | Redelivered]:
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
    body: RedeliverRequest,
) -> Response[Error | Redelivered]:
    """Send events to a webhook again.

     Exactly one of `event_id` (that event again: same id and body, as a new delivery with its own
    attempts and retries) or `since` (the events of the last 30 days created at or after it whose
    delivery to this webhook ended failed, with no redelivery pending or succeeded: each sent again
    once, oldest first, at most 1,000 a call; `has_more` says to call again for the next ones).

    Args:
        id (str):
        body (RedeliverRequest): Body of `POST /webhooks/{id}/redeliver`: exactly one of the two.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Redelivered]
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
    body: RedeliverRequest,
) -> Error | Redelivered | None:
    """Send events to a webhook again.

     Exactly one of `event_id` (that event again: same id and body, as a new delivery with its own
    attempts and retries) or `since` (the events of the last 30 days created at or after it whose
    delivery to this webhook ended failed, with no redelivery pending or succeeded: each sent again
    once, oldest first, at most 1,000 a call; `has_more` says to call again for the next ones).

    Args:
        id (str):
        body (RedeliverRequest): Body of `POST /webhooks/{id}/redeliver`: exactly one of the two.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Redelivered
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
    body: RedeliverRequest,
) -> Response[Error | Redelivered]:
    """Send events to a webhook again.

     Exactly one of `event_id` (that event again: same id and body, as a new delivery with its own
    attempts and retries) or `since` (the events of the last 30 days created at or after it whose
    delivery to this webhook ended failed, with no redelivery pending or succeeded: each sent again
    once, oldest first, at most 1,000 a call; `has_more` says to call again for the next ones).

    Args:
        id (str):
        body (RedeliverRequest): Body of `POST /webhooks/{id}/redeliver`: exactly one of the two.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Redelivered]
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
    body: RedeliverRequest,
) -> Error | Redelivered | None:
    """Send events to a webhook again.

     Exactly one of `event_id` (that event again: same id and body, as a new delivery with its own
    attempts and retries) or `since` (the events of the last 30 days created at or after it whose
    delivery to this webhook ended failed, with no redelivery pending or succeeded: each sent again
    once, oldest first, at most 1,000 a call; `has_more` says to call again for the next ones).

    Args:
        id (str):
        body (RedeliverRequest): Body of `POST /webhooks/{id}/redeliver`: exactly one of the two.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Redelivered
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
