from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.discovery_endpoints import DiscoveryEndpoints


T = TypeVar("T", bound="Discovery")


@_attrs_define
class Discovery:
    """What the API is and which endpoints it serves.

    Attributes:
        authentication (str):
        docs (str): The reference page, for people.
        endpoints (DiscoveryEndpoints): `"<METHOD> <path>"` -> what it does and the scope it needs.
        name (str):
        openapi (str): The OpenAPI document, for programs.
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
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        authentication = self.authentication

        docs = self.docs

        endpoints = self.endpoints.to_dict()

        name = self.name

        openapi = self.openapi

        status = self.status

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
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

        discovery.additional_properties = d
        return discovery

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
