from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="StreamUsage")


@_attrs_define
class StreamUsage:
    """A stream's `usage` (docs/usage.md): what its `live` meter has counted so far.

    Attributes:
        in_progress (bool): `true` while the stream is `live`: the figure still grows.
        live_ms (int): Milliseconds live, from `started_at` to `ended_at` or to the answer while `live`; `0` for a
            stream that never went live.
    """

    in_progress: bool
    live_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        in_progress = self.in_progress

        live_ms = self.live_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "in_progress": in_progress,
                "live_ms": live_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        in_progress = d.pop("in_progress")

        live_ms = d.pop("live_ms")

        stream_usage = cls(
            in_progress=in_progress,
            live_ms=live_ms,
        )

        stream_usage.additional_properties = d
        return stream_usage

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
