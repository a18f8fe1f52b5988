from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.destination_request_platform import DestinationRequestPlatform

T = TypeVar("T", bound="DestinationRequest")


@_attrs_define
class DestinationRequest:
    """A destination to push the show to: an RTMP ingest and its stream key.

    Attributes:
        ingest_url (str): An `rtmp://` or `rtmps://` URL with a public host and an application path after it
            (`rtmps://host/app`), no user name, password or fragment. One trailing `/` is dropped before the key is joined.
        platform (DestinationRequestPlatform): As the stream's own platform: one of the six.
        stream_key (str): Write-only: printable ASCII without spaces. Never shown again; the destination shows
            `stream_key_last4`.
    """

    ingest_url: str
    platform: DestinationRequestPlatform
    stream_key: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ingest_url = self.ingest_url

        platform = self.platform.value

        stream_key = self.stream_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ingest_url": ingest_url,
                "platform": platform,
                "stream_key": stream_key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ingest_url = d.pop("ingest_url")

        platform = DestinationRequestPlatform(d.pop("platform"))

        stream_key = d.pop("stream_key")

        destination_request = cls(
            ingest_url=ingest_url,
            platform=platform,
            stream_key=stream_key,
        )

        destination_request.additional_properties = d
        return destination_request

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
