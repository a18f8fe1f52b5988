from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType
from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookDetail")


@_attrs_define
class WebhookDetail:
    """Response of `GET /webhooks/{id}` and `PATCH /webhooks/{id}`: never the secret.

    Attributes:
        active (bool): `false` once disabled: see `disabled_reason`.
        created_at (datetime.datetime):
        events (list[EventType]):
        failing_since (datetime.datetime | None): The first failed attempt of the current run of failures; `null` after
            any success.
        public_key (None | str): `whpk_` and the base64 of the 32-byte Ed25519 public key that verifies the current
            `v1a` signature; `null` only for a webhook registered before key pairs existed, until
            its next rotation.
        secret_rotated_at (datetime.datetime | None): When the secret was last rotated; `null` if never.
        url (str):
        webhook_id (UUID):
        disabled_reason (Literal['failing'] | Literal['gone'] | Literal['manual'] | None | Unset): Why the webhook is
            off: `failing` (every attempt failed for the configured time),
            `gone` (`410 Gone`) or `manual` (`PATCH active: false`). Absent while active.
    """

    active: bool
    created_at: datetime.datetime
    events: list[EventType]
    failing_since: datetime.datetime | None
    public_key: None | str
    secret_rotated_at: datetime.datetime | None
    url: str
    webhook_id: UUID
    disabled_reason: Literal["failing"] | Literal["gone"] | Literal["manual"] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        created_at = self.created_at.isoformat()

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        failing_since: None | str
        if isinstance(self.failing_since, datetime.datetime):
            failing_since = self.failing_since.isoformat()
        else:
            failing_since = self.failing_since

        public_key: None | str
        public_key = self.public_key

        secret_rotated_at: None | str
        if isinstance(self.secret_rotated_at, datetime.datetime):
            secret_rotated_at = self.secret_rotated_at.isoformat()
        else:
            secret_rotated_at = self.secret_rotated_at

        url = self.url

        webhook_id = str(self.webhook_id)

        disabled_reason: Literal["failing"] | Literal["gone"] | Literal["manual"] | None | Unset
        if isinstance(self.disabled_reason, Unset):
            disabled_reason = UNSET
        else:
            disabled_reason = self.disabled_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "created_at": created_at,
                "events": events,
                "failing_since": failing_since,
                "public_key": public_key,
                "secret_rotated_at": secret_rotated_at,
                "url": url,
                "webhook_id": webhook_id,
            }
        )
        if disabled_reason is not UNSET:
            field_dict["disabled_reason"] = disabled_reason

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

        def _parse_failing_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                failing_since_type_0 = datetime.datetime.fromisoformat(data)

                return failing_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        failing_since = _parse_failing_since(d.pop("failing_since"))

        def _parse_public_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        public_key = _parse_public_key(d.pop("public_key"))

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

        def _parse_disabled_reason(
            data: object,
        ) -> Literal["failing"] | Literal["gone"] | Literal["manual"] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            componentsschemas_disabled_reason_type_0 = cast(Literal["failing"], data)
            if componentsschemas_disabled_reason_type_0 != "failing":
                raise ValueError(
                    f"/components/schemas/DisabledReason_type_0 must match const 'failing', got '{componentsschemas_disabled_reason_type_0}'"
                )
            return componentsschemas_disabled_reason_type_0
            componentsschemas_disabled_reason_type_1 = cast(Literal["gone"], data)
            if componentsschemas_disabled_reason_type_1 != "gone":
                raise ValueError(
                    f"/components/schemas/DisabledReason_type_1 must match const 'gone', got '{componentsschemas_disabled_reason_type_1}'"
                )
            return componentsschemas_disabled_reason_type_1
            componentsschemas_disabled_reason_type_2 = cast(Literal["manual"], data)
            if componentsschemas_disabled_reason_type_2 != "manual":
                raise ValueError(
                    f"/components/schemas/DisabledReason_type_2 must match const 'manual', got '{componentsschemas_disabled_reason_type_2}'"
                )
            return componentsschemas_disabled_reason_type_2
            return cast(Literal["failing"] | Literal["gone"] | Literal["manual"] | None | Unset, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason", UNSET))

        webhook_detail = cls(
            active=active,
            created_at=created_at,
            events=events,
            failing_since=failing_since,
            public_key=public_key,
            secret_rotated_at=secret_rotated_at,
            url=url,
            webhook_id=webhook_id,
            disabled_reason=disabled_reason,
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
