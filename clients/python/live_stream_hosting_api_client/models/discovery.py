from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.discovery_endpoints import DiscoveryEndpoints


T = TypeVar("T", bound="Discovery")


@_attrs_define
class Discovery:
    """What the API is and which endpoints it serves.

    Attributes:
        authentication (str):
        docs (str): The OpenAPI document.
        endpoints (DiscoveryEndpoints): `"<METHOD> <path>"` -> what it does and the scope it needs.
        name (str):
        openapi (str):
        status (str):
        version (str):
    """

    authentication: str
    docs: str
    endpoints: DiscoveryEndpoints
    name: str
    openapi: str
    status: str
    version: str

    def to_dict(self) -> dict[str, Any]:
        authentication = self.authentication

        docs = self.docs

        endpoints = self.endpoints.to_dict()

        name = self.name

        openapi = self.openapi

        status = self.status

        version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "authentication": authentication,
                "docs": docs,
                "endpoints": endpoints,
                "name": name,
                "openapi": openapi,
                "status": status,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.discovery_endpoints import DiscoveryEndpoints  # noqa: PLC0415

        d = dict(src_dict)
        authentication = d.pop("authentication")

        docs = d.pop("docs")

        endpoints = DiscoveryEndpoints.from_dict(d.pop("endpoints"))

        name = d.pop("name")

        openapi = d.pop("openapi")

        status = d.pop("status")

        version = d.pop("version")

        discovery = cls(
            authentication=authentication,
            docs=docs,
            endpoints=endpoints,
            name=name,
            openapi=openapi,
            status=status,
            version=version,
        )

        return discovery
