from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SecretRotated")


@_attrs_define
class SecretRotated:
    """Response of `POST /webhooks/{id}/rotate-secret`: the only time the new secret is shown.

    Attributes:
        previous_secret_expires_at (datetime.datetime): Until then every delivery is signed with both secrets, and both
            key pairs.
        public_key (str): The new key pair's public key (`whpk_`), as the detail now shows it.
        secret (str): `whsec_` and 32 base64 characters.
        webhook_id (UUID):
    """

    previous_secret_expires_at: datetime.datetime
    public_key: str
    secret: str
    webhook_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        previous_secret_expires_at = self.previous_secret_expires_at.isoformat()

        public_key = self.public_key

        secret = self.secret

        webhook_id = str(self.webhook_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "previous_secret_expires_at": previous_secret_expires_at,
                "public_key": public_key,
                "secret": secret,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        previous_secret_expires_at = datetime.datetime.fromisoformat(d.pop("previous_secret_expires_at"))

        public_key = d.pop("public_key")

        secret = d.pop("secret")

        webhook_id = UUID(d.pop("webhook_id"))

        secret_rotated = cls(
            previous_secret_expires_at=previous_secret_expires_at,
            public_key=public_key,
            secret=secret,
            webhook_id=webhook_id,
        )

        secret_rotated.additional_properties = d
        return secret_rotated

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
