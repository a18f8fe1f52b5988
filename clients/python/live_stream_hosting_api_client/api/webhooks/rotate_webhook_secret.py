from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.rotate_secret_request import RotateSecretRequest
from ...models.secret_rotated import SecretRotated
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    body: RotateSecretRequest | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/webhooks/{id}/rotate-secret".format(
            id=quote(str(id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | SecretRotated | None:
    if response.status_code == 200:
        response_200 = SecretRotated.from_dict(response.json())

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | SecretRotated]:
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
    body: RotateSecretRequest | Unset = UNSET,
) -> Response[Error | SecretRotated]:
    """Rotate a webhook's secret without downtime.

     A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed
    with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in
    `webhook-signature`), and the Ed25519 key pair is replaced with the same overlap (two `v1a,`), so
    receivers verify with either while they switch; after it, with the new one only. A rotation during
    an overlap drops the oldest: at most two secrets sign at any time. The body is optional.

    Args:
        id (str):
        body (RotateSecretRequest | Unset): Body of `POST /webhooks/{id}/rotate-secret`; the body
            itself is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SecretRotated]
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
    body: RotateSecretRequest | Unset = UNSET,
) -> Error | SecretRotated | None:
    """Rotate a webhook's secret without downtime.

     A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed
    with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in
    `webhook-signature`), and the Ed25519 key pair is replaced with the same overlap (two `v1a,`), so
    receivers verify with either while they switch; after it, with the new one only. A rotation during
    an overlap drops the oldest: at most two secrets sign at any time. The body is optional.

    Args:
        id (str):
        body (RotateSecretRequest | Unset): Body of `POST /webhooks/{id}/rotate-secret`; the body
            itself is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SecretRotated
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
    body: RotateSecretRequest | Unset = UNSET,
) -> Response[Error | SecretRotated]:
    """Rotate a webhook's secret without downtime.

     A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed
    with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in
    `webhook-signature`), and the Ed25519 key pair is replaced with the same overlap (two `v1a,`), so
    receivers verify with either while they switch; after it, with the new one only. A rotation during
    an overlap drops the oldest: at most two secrets sign at any time. The body is optional.

    Args:
        id (str):
        body (RotateSecretRequest | Unset): Body of `POST /webhooks/{id}/rotate-secret`; the body
            itself is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SecretRotated]
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
    body: RotateSecretRequest | Unset = UNSET,
) -> Error | SecretRotated | None:
    """Rotate a webhook's secret without downtime.

     A new secret, shown only in this answer. Until `previous_secret_expires_at` every delivery is signed
    with both the new and the replaced secret (two `v1=` in `X-Service-Signature`, two `v1,` in
    `webhook-signature`), and the Ed25519 key pair is replaced with the same overlap (two `v1a,`), so
    receivers verify with either while they switch; after it, with the new one only. A rotation during
    an overlap drops the oldest: at most two secrets sign at any time. The body is optional.

    Args:
        id (str):
        body (RotateSecretRequest | Unset): Body of `POST /webhooks/{id}/rotate-secret`; the body
            itself is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SecretRotated
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
