from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.stream_summary import StreamSummary


T = TypeVar("T", bound="StreamList")


@_attrs_define
class StreamList:
    """Response of `GET /streams`.

    Attributes:
        limit (int):
        offset (int):
        streams (list[StreamSummary]):
        total (int): Streams matching the filter, over every page.
    """

    limit: int
    offset: int
    streams: list[StreamSummary]
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        offset = self.offset

        streams = []
        for streams_item_data in self.streams:
            streams_item = streams_item_data.to_dict()
            streams.append(streams_item)

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "limit": limit,
                "offset": offset,
                "streams": streams,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stream_summary import StreamSummary  # noqa: PLC0415

        d = dict(src_dict)
        limit = d.pop("limit")

        offset = d.pop("offset")

        streams = []
        _streams = d.pop("streams")
        for streams_item_data in _streams:
            streams_item = StreamSummary.from_dict(streams_item_data)

            streams.append(streams_item)

        total = d.pop("total")

        stream_list = cls(
            limit=limit,
            offset=offset,
            streams=streams,
            total=total,
        )

        stream_list.additional_properties = d
        return stream_list

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
