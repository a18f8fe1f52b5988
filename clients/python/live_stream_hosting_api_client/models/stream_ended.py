from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

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

    def to_dict(self) -> dict[str, Any]:
        ended_at = self.ended_at.isoformat()

        status = self.status.value

        stream_id = str(self.stream_id)

        field_dict: dict[str, Any] = {}

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

        return stream_ended
