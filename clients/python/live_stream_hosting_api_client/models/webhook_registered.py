from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

T = TypeVar("T", bound="WebhookRegistered")


@_attrs_define
class WebhookRegistered:
    """Response of `POST /webhooks`: the only time the secret is shown.

    Attributes:
        active (bool):
        events (list[EventType]):
        public_key (str): `whpk_` and the base64 of the 32-byte Ed25519 public key that verifies `v1a`
            signatures. Public: it is also in the webhook's detail.
        secret (str): `whsec_` and 32 base64 characters. Shown only here: keep it.
        url (str):
        webhook_id (UUID):
    """

    active: bool
    events: list[EventType]
    public_key: str
    secret: str
    url: str
    webhook_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        public_key = self.public_key

        secret = self.secret

        url = self.url

        webhook_id = str(self.webhook_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "events": events,
                "public_key": public_key,
                "secret": secret,
                "url": url,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active = d.pop("active")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = EventType(events_item_data)

            events.append(events_item)

        public_key = d.pop("public_key")

        secret = d.pop("secret")

        url = d.pop("url")

        webhook_id = UUID(d.pop("webhook_id"))

        webhook_registered = cls(
            active=active,
            events=events,
            public_key=public_key,
            secret=secret,
            url=url,
            webhook_id=webhook_id,
        )

        webhook_registered.additional_properties = d
        return webhook_registered

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
