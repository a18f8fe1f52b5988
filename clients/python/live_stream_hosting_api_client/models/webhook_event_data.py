from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.stream_detail import StreamDetail


T = TypeVar("T", bound="WebhookEventData")


@_attrs_define
class WebhookEventData:
    """
    Attributes:
        stream (StreamDetail): Response of `GET /streams/{id}`, also the `data.stream` of webhook events.
    """

    stream: StreamDetail

    def to_dict(self) -> dict[str, Any]:
        stream = self.stream.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "stream": stream,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stream_detail import StreamDetail  # noqa: PLC0415

        d = dict(src_dict)
        stream = StreamDetail.from_dict(d.pop("stream"))

        webhook_event_data = cls(
            stream=stream,
        )

        return webhook_event_data
