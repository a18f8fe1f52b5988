from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.show_view import ShowView
    from ..models.stream_detail import StreamDetail


T = TypeVar("T", bound="ShowEventData")


@_attrs_define
class ShowEventData:
    """
    Attributes:
        show (ShowView): A show as every answer and event shows it.
        stream (None | StreamDetail | Unset): The stream it started (`show.started` only), as `GET /streams/{id}` shows
            it.
    """

    show: ShowView
    stream: None | StreamDetail | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.stream_detail import StreamDetail  # noqa: PLC0415

        show = self.show.to_dict()

        stream: dict[str, Any] | None | Unset
        if isinstance(self.stream, Unset):
            stream = UNSET
        elif isinstance(self.stream, StreamDetail):
            stream = self.stream.to_dict()
        else:
            stream = self.stream

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "show": show,
            }
        )
        if stream is not UNSET:
            field_dict["stream"] = stream

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.show_view import ShowView  # noqa: PLC0415
        from ..models.stream_detail import StreamDetail  # noqa: PLC0415

        d = dict(src_dict)
        show = ShowView.from_dict(d.pop("show"))

        def _parse_stream(data: object) -> None | StreamDetail | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                stream_type_0 = StreamDetail.from_dict(data)

                return stream_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StreamDetail | Unset, data)

        stream = _parse_stream(d.pop("stream", UNSET))

        show_event_data = cls(
            show=show,
            stream=stream,
        )

        show_event_data.additional_properties = d
        return show_event_data

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
