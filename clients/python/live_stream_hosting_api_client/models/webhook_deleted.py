from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="WebhookDeleted")


@_attrs_define
class WebhookDeleted:
    """Response of `DELETE /webhooks`.

    Attributes:
        deleted (bool):
        webhook_id (str): The id as sent.
    """

    deleted: bool
    webhook_id: str

    def to_dict(self) -> dict[str, Any]:
        deleted = self.deleted

        webhook_id = self.webhook_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deleted": deleted,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        deleted = d.pop("deleted")

        webhook_id = d.pop("webhook_id")

        webhook_deleted = cls(
            deleted=deleted,
            webhook_id=webhook_id,
        )

        return webhook_deleted
