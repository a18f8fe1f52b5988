from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.stream_status import StreamStatus

T = TypeVar("T", bound="AnalyticsStream")


@_attrs_define
class AnalyticsStream:
    """
    Attributes:
        ended_at (datetime.datetime | None):
        id (UUID):
        platform (str):
        started_at (datetime.datetime | None):
        status (StreamStatus):
        vertical (str):
        viewer_count (int):
    """

    ended_at: datetime.datetime | None
    id: UUID
    platform: str
    started_at: datetime.datetime | None
    status: StreamStatus
    vertical: str
    viewer_count: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        id = str(self.id)

        platform = self.platform

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        vertical = self.vertical

        viewer_count = self.viewer_count

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ended_at": ended_at,
                "id": id,
                "platform": platform,
                "started_at": started_at,
                "status": status,
                "vertical": vertical,
                "viewer_count": viewer_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))

        id = UUID(d.pop("id"))

        platform = d.pop("platform")

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        status = StreamStatus(d.pop("status"))

        vertical = d.pop("vertical")

        viewer_count = d.pop("viewer_count")

        analytics_stream = cls(
            ended_at=ended_at,
            id=id,
            platform=platform,
            started_at=started_at,
            status=status,
            vertical=vertical,
            viewer_count=viewer_count,
        )

        analytics_stream.additional_properties = d
        return analytics_stream

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
