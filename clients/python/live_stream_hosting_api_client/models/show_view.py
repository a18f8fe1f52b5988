from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.show_status_type_0 import ShowStatusType0

if TYPE_CHECKING:
    from ..models.show_error import ShowError
    from ..models.show_view_stream import ShowViewStream


T = TypeVar("T", bound="ShowView")


@_attrs_define
class ShowView:
    """A show as every answer and event shows it.

    Attributes:
        created_at (datetime.datetime):
        error (None | ShowError): Why it failed: the error envelope's `code` and `message`; `null` otherwise.
        remind_minutes_before (int | None):
        show_id (str): `shw_` and 32 lowercase hex digits.
        starts_at (datetime.datetime):
        status (Literal['starting'] | ShowStatusType0):
        stream (ShowViewStream): The stream's fields as given to `POST /shows` (or its last `PATCH`), each destination's
            key shown as its `stream_key_last4`; never the script.
        stream_id (None | UUID): The stream the show started; `null` until then, and for a show that failed (a failed
            launch's stream, in `error`, is in `GET /streams` as `POST /streams` would have left it).
        test (bool): Whether it was made with a test key (and starts a test stream).
    """

    created_at: datetime.datetime
    error: None | ShowError
    remind_minutes_before: int | None
    show_id: str
    starts_at: datetime.datetime
    status: Literal["starting"] | ShowStatusType0
    stream: ShowViewStream
    stream_id: None | UUID
    test: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.show_error import ShowError  # noqa: PLC0415

        created_at = self.created_at.isoformat()

        error: dict[str, Any] | None
        if isinstance(self.error, ShowError):
            error = self.error.to_dict()
        else:
            error = self.error

        remind_minutes_before: int | None
        remind_minutes_before = self.remind_minutes_before

        show_id = self.show_id

        starts_at = self.starts_at.isoformat()

        status: Literal["starting"] | str
        if isinstance(self.status, ShowStatusType0):
            status = self.status.value
        else:
            status = self.status

        stream = self.stream.to_dict()

        stream_id: None | str
        if isinstance(self.stream_id, UUID):
            stream_id = str(self.stream_id)
        else:
            stream_id = self.stream_id

        test = self.test

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "error": error,
                "remind_minutes_before": remind_minutes_before,
                "show_id": show_id,
                "starts_at": starts_at,
                "status": status,
                "stream": stream,
                "stream_id": stream_id,
                "test": test,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.show_error import ShowError  # noqa: PLC0415
        from ..models.show_view_stream import ShowViewStream  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_error(data: object) -> None | ShowError:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = ShowError.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ShowError, data)

        error = _parse_error(d.pop("error"))

        def _parse_remind_minutes_before(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        remind_minutes_before = _parse_remind_minutes_before(d.pop("remind_minutes_before"))

        show_id = d.pop("show_id")

        starts_at = datetime.datetime.fromisoformat(d.pop("starts_at"))

        def _parse_status(data: object) -> Literal["starting"] | ShowStatusType0:
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_show_status_type_0 = ShowStatusType0(data)

                return componentsschemas_show_status_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            componentsschemas_show_status_type_1 = cast(Literal["starting"], data)
            if componentsschemas_show_status_type_1 != "starting":
                raise ValueError(
                    f"/components/schemas/ShowStatus_type_1 must match const 'starting', got '{componentsschemas_show_status_type_1}'"
                )
            return componentsschemas_show_status_type_1

        status = _parse_status(d.pop("status"))

        stream = ShowViewStream.from_dict(d.pop("stream"))

        def _parse_stream_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                stream_id_type_0 = UUID(data)

                return stream_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        stream_id = _parse_stream_id(d.pop("stream_id"))

        test = d.pop("test")

        show_view = cls(
            created_at=created_at,
            error=error,
            remind_minutes_before=remind_minutes_before,
            show_id=show_id,
            starts_at=starts_at,
            status=status,
            stream=stream,
            stream_id=stream_id,
            test=test,
        )

        show_view.additional_properties = d
        return show_view

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
