from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.clip_status import ClipStatus

T = TypeVar("T", bound="ClipView")


@_attrs_define
class ClipView:
    """A clip as the API shows it.

    Attributes:
        clip_id (str): `clp_` and 32 lowercase hex digits.
        created_at (datetime.datetime):
        duration_seconds (float | None): The clip's real length, from the keyframe it starts on to the end of the frame
            covering `end_seconds`; when `ready` (or `expired`).
        end_seconds (float): As asked.
        error (None | str): When `failed`: why.
        size_bytes (int | None): When `ready` (or `expired`).
        start_seconds (float): As asked.
        status (ClipStatus): `pending`: waiting for its cut. `processing`: being cut (or waiting to be tried again).
            `ready`: downloadable. `failed`: it cannot be cut (`error` says why). `expired`: its
            recording's retention has passed. `deleted`: removed with `DELETE`.
        stream_id (UUID):
        title (None | str):
        url (None | str): When `ready`: a presigned `GET` URL of the MP4, valid `RECORDING_URL_TTL_SECS`; a fresh one on
            every read. `null` in event bodies.
        url_expires_at (datetime.datetime | None):
    """

    clip_id: str
    created_at: datetime.datetime
    duration_seconds: float | None
    end_seconds: float
    error: None | str
    size_bytes: int | None
    start_seconds: float
    status: ClipStatus
    stream_id: UUID
    title: None | str
    url: None | str
    url_expires_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        clip_id = self.clip_id

        created_at = self.created_at.isoformat()

        duration_seconds: float | None
        duration_seconds = self.duration_seconds

        end_seconds = self.end_seconds

        error: None | str
        error = self.error

        size_bytes: int | None
        size_bytes = self.size_bytes

        start_seconds = self.start_seconds

        status = self.status.value

        stream_id = str(self.stream_id)

        title: None | str
        title = self.title

        url: None | str
        url = self.url

        url_expires_at: None | str
        if isinstance(self.url_expires_at, datetime.datetime):
            url_expires_at = self.url_expires_at.isoformat()
        else:
            url_expires_at = self.url_expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "clip_id": clip_id,
                "created_at": created_at,
                "duration_seconds": duration_seconds,
                "end_seconds": end_seconds,
                "error": error,
                "size_bytes": size_bytes,
                "start_seconds": start_seconds,
                "status": status,
                "stream_id": stream_id,
                "title": title,
                "url": url,
                "url_expires_at": url_expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        clip_id = d.pop("clip_id")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_duration_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))

        end_seconds = d.pop("end_seconds")

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_size_bytes(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        size_bytes = _parse_size_bytes(d.pop("size_bytes"))

        start_seconds = d.pop("start_seconds")

        status = ClipStatus(d.pop("status"))

        stream_id = UUID(d.pop("stream_id"))

        def _parse_title(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        title = _parse_title(d.pop("title"))

        def _parse_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        url = _parse_url(d.pop("url"))

        def _parse_url_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                url_expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return url_expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        url_expires_at = _parse_url_expires_at(d.pop("url_expires_at"))

        clip_view = cls(
            clip_id=clip_id,
            created_at=created_at,
            duration_seconds=duration_seconds,
            end_seconds=end_seconds,
            error=error,
            size_bytes=size_bytes,
            start_seconds=start_seconds,
            status=status,
            stream_id=stream_id,
            title=title,
            url=url,
            url_expires_at=url_expires_at,
        )

        clip_view.additional_properties = d
        return clip_view

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
