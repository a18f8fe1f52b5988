from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

T = TypeVar("T", bound="WebhookListItem")


@_attrs_define
class WebhookListItem:
    """Item of `GET /webhooks`: never the secret.

    Attributes:
        active (bool): `false` once disabled (a `410 Gone`, failures for `WEBHOOK_DISABLE_AFTER_SECS`, or
            `PATCH`); the detail says why.
        created_at (datetime.datetime):
        events (list[EventType]):
        url (str):
        webhook_id (UUID):
    """

    active: bool
    created_at: datetime.datetime
    events: list[EventType]
    url: str
    webhook_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        created_at = self.created_at.isoformat()

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        url = self.url

        webhook_id = str(self.webhook_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "created_at": created_at,
                "events": events,
                "url": url,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active = d.pop("active")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = EventType(events_item_data)

            events.append(events_item)

        url = d.pop("url")

        webhook_id = UUID(d.pop("webhook_id"))

        webhook_list_item = cls(
            active=active,
            created_at=created_at,
            events=events,
            url=url,
            webhook_id=webhook_id,
        )

        webhook_list_item.additional_properties = d
        return webhook_list_item

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
