from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

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

    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        offset = self.offset

        streams = []
        for streams_item_data in self.streams:
            streams_item = streams_item_data.to_dict()
            streams.append(streams_item)

        total = self.total

        field_dict: dict[str, Any] = {}

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

        return stream_list
