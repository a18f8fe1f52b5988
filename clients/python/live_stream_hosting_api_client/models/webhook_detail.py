from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

T = TypeVar("T", bound="WebhookDetail")


@_attrs_define
class WebhookDetail:
    """Response of `GET /webhooks/{id}` and `PATCH /webhooks/{id}`: never the secret.

    Attributes:
        active (bool): `false` once the receiver answered `410 Gone`, or after `PATCH` with `active: false`.
        created_at (datetime.datetime):
        events (list[EventType]):
        secret_rotated_at (datetime.datetime | None): When the secret was last rotated; `null` if never.
        url (str):
        webhook_id (UUID):
    """

    active: bool
    created_at: datetime.datetime
    events: list[EventType]
    secret_rotated_at: datetime.datetime | None
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

        secret_rotated_at: None | str
        if isinstance(self.secret_rotated_at, datetime.datetime):
            secret_rotated_at = self.secret_rotated_at.isoformat()
        else:
            secret_rotated_at = self.secret_rotated_at

        url = self.url

        webhook_id = str(self.webhook_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "created_at": created_at,
                "events": events,
                "secret_rotated_at": secret_rotated_at,
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

        def _parse_secret_rotated_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                secret_rotated_at_type_0 = datetime.datetime.fromisoformat(data)

                return secret_rotated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        secret_rotated_at = _parse_secret_rotated_at(d.pop("secret_rotated_at"))

        url = d.pop("url")

        webhook_id = UUID(d.pop("webhook_id"))

        webhook_detail = cls(
            active=active,
            created_at=created_at,
            events=events,
            secret_rotated_at=secret_rotated_at,
            url=url,
            webhook_id=webhook_id,
        )

        webhook_detail.additional_properties = d
        return webhook_detail

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
