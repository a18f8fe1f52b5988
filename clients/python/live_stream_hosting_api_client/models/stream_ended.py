from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.stream_status import StreamStatus

T = TypeVar("T", bound="StreamEnded")


@_attrs_define
class StreamEnded:
    """Response of `DELETE /streams/{id}`.

    Attributes:
        ended_at (datetime.datetime):
        status (StreamStatus):
        stream_id (UUID):
    """

    ended_at: datetime.datetime
    status: StreamStatus
    stream_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ended_at = self.ended_at.isoformat()

        status = self.status.value

        stream_id = str(self.stream_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ended_at": ended_at,
                "status": status,
                "stream_id": stream_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ended_at = datetime.datetime.fromisoformat(d.pop("ended_at"))

        status = StreamStatus(d.pop("status"))

        stream_id = UUID(d.pop("stream_id"))

        stream_ended = cls(
            ended_at=ended_at,
            status=status,
            stream_id=stream_id,
        )

        stream_ended.additional_properties = d
        return stream_ended

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
