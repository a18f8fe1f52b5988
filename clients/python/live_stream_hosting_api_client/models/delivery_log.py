from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.delivery_log_entry import DeliveryLogEntry


T = TypeVar("T", bound="DeliveryLog")


@_attrs_define
class DeliveryLog:
    """Response of `GET /webhooks/{id}/deliveries`.

    Attributes:
        deliveries (list[DeliveryLogEntry]): Newest first.
        limit (int):
        next_cursor (None | str): The `cursor` of the next page, or `null` on the last. Valid only with the same webhook
            and filters.
    """

    deliveries: list[DeliveryLogEntry]
    limit: int
    next_cursor: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        limit = self.limit

        next_cursor: None | str
        next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deliveries": deliveries,
                "limit": limit,
                "next_cursor": next_cursor,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_log_entry import DeliveryLogEntry  # noqa: PLC0415

        d = dict(src_dict)
        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = DeliveryLogEntry.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        limit = d.pop("limit")

        def _parse_next_cursor(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor"))

        delivery_log = cls(
            deliveries=deliveries,
            limit=limit,
            next_cursor=next_cursor,
        )

        delivery_log.additional_properties = d
        return delivery_log

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
