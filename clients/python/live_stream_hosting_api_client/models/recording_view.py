from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.recording_status import RecordingStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recording_part import RecordingPart


T = TypeVar("T", bound="RecordingView")


@_attrs_define
class RecordingView:
    """`recording` of a stream's detail: its first file, and `parts` when an egress started
    again made more than one.

        Attributes:
            duration_seconds (int | None): When `ready` (or `expired`): the file's length in whole seconds.
            error (None | str): When `failed`: why.
            size_bytes (int | None): When `ready` (or `expired`).
            status (RecordingStatus): `pending`: not live yet. `recording`: live, the egress requested. `processing`: the
                stream
                ended, the file not confirmed yet. `ready`: downloadable. `failed`: no file. `expired`: past
                the retention, deleted.
            url (None | str): When `ready`: a presigned `GET` URL of the MP4, valid `RECORDING_URL_TTL_SECS`; a fresh one on
                every read. `null` in event bodies.
            url_expires_at (datetime.datetime | None):
            parts (list[RecordingPart] | None | Unset): Every file in order, the first included; absent while there is one.
    """

    duration_seconds: int | None
    error: None | str
    size_bytes: int | None
    status: RecordingStatus
    url: None | str
    url_expires_at: datetime.datetime | None
    parts: list[RecordingPart] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        duration_seconds: int | None
        duration_seconds = self.duration_seconds

        error: None | str
        error = self.error

        size_bytes: int | None
        size_bytes = self.size_bytes

        status = self.status.value

        url: None | str
        url = self.url

        url_expires_at: None | str
        if isinstance(self.url_expires_at, datetime.datetime):
            url_expires_at = self.url_expires_at.isoformat()
        else:
            url_expires_at = self.url_expires_at

        parts: list[dict[str, Any]] | None | Unset
        if isinstance(self.parts, Unset):
            parts = UNSET
        elif isinstance(self.parts, list):
            parts = []
            for parts_type_0_item_data in self.parts:
                parts_type_0_item = parts_type_0_item_data.to_dict()
                parts.append(parts_type_0_item)

        else:
            parts = self.parts

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "duration_seconds": duration_seconds,
                "error": error,
                "size_bytes": size_bytes,
                "status": status,
                "url": url,
                "url_expires_at": url_expires_at,
            }
        )
        if parts is not UNSET:
            field_dict["parts"] = parts

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.recording_part import RecordingPart  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_duration_seconds(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))

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

        status = RecordingStatus(d.pop("status"))

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

        def _parse_parts(data: object) -> list[RecordingPart] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                parts_type_0 = []
                _parts_type_0 = data
                for parts_type_0_item_data in _parts_type_0:
                    parts_type_0_item = RecordingPart.from_dict(parts_type_0_item_data)

                    parts_type_0.append(parts_type_0_item)

                return parts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[RecordingPart] | None | Unset, data)

        parts = _parse_parts(d.pop("parts", UNSET))

        recording_view = cls(
            duration_seconds=duration_seconds,
            error=error,
            size_bytes=size_bytes,
            status=status,
            url=url,
            url_expires_at=url_expires_at,
            parts=parts,
        )

        recording_view.additional_properties = d
        return recording_view

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
