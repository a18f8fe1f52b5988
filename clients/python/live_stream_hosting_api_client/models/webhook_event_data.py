from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.clip_view import ClipView
    from ..models.destination import Destination
    from ..models.stream_detail import StreamDetail


T = TypeVar("T", bound="WebhookEventData")


@_attrs_define
class WebhookEventData:
    """
    Attributes:
        stream (StreamDetail): Response of `GET /streams/{id}`, also the `data.stream` of webhook events.
        clip (ClipView | None | Unset): The clip that was cut or could not be (`stream.clip_ready`, `stream.clip_failed`
            only), its `url` and `url_expires_at` `null`: read the clip for a fresh URL.
        destination (Destination | None | Unset): The destination whose state changed (`stream.destination_active`,
            `stream.destination_failed` only).
    """

    stream: StreamDetail
    clip: ClipView | None | Unset = UNSET
    destination: Destination | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.clip_view import ClipView  # noqa: PLC0415
        from ..models.destination import Destination  # noqa: PLC0415

        stream = self.stream.to_dict()

        clip: dict[str, Any] | None | Unset
        if isinstance(self.clip, Unset):
            clip = UNSET
        elif isinstance(self.clip, ClipView):
            clip = self.clip.to_dict()
        else:
            clip = self.clip

        destination: dict[str, Any] | None | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        elif isinstance(self.destination, Destination):
            destination = self.destination.to_dict()
        else:
            destination = self.destination

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "stream": stream,
            }
        )
        if clip is not UNSET:
            field_dict["clip"] = clip
        if destination is not UNSET:
            field_dict["destination"] = destination

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.clip_view import ClipView  # noqa: PLC0415
        from ..models.destination import Destination  # noqa: PLC0415
        from ..models.stream_detail import StreamDetail  # noqa: PLC0415

        d = dict(src_dict)
        stream = StreamDetail.from_dict(d.pop("stream"))

        def _parse_clip(data: object) -> ClipView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                clip_type_0 = ClipView.from_dict(data)

                return clip_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClipView | None | Unset, data)

        clip = _parse_clip(d.pop("clip", UNSET))

        def _parse_destination(data: object) -> Destination | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                destination_type_0 = Destination.from_dict(data)

                return destination_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Destination | None | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))

        webhook_event_data = cls(
            stream=stream,
            clip=clip,
            destination=destination,
        )

        webhook_event_data.additional_properties = d
        return webhook_event_data

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
