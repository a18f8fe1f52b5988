from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Redelivered")


@_attrs_define
class Redelivered:
    """Response of `POST /webhooks/{id}/redeliver`.

    Attributes:
        has_more (bool): With `since`: more failed deliveries match; the same call again queues the next ones.
        queued (int):
        webhook_id (UUID):
    """

    has_more: bool
    queued: int
    webhook_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        has_more = self.has_more

        queued = self.queued

        webhook_id = str(self.webhook_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "has_more": has_more,
                "queued": queued,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        has_more = d.pop("has_more")

        queued = d.pop("queued")

        webhook_id = UUID(d.pop("webhook_id"))

        redelivered = cls(
            has_more=has_more,
            queued=queued,
            webhook_id=webhook_id,
        )

        redelivered.additional_properties = d
        return redelivered

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
