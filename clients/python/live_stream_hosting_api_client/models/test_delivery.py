from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TestDelivery")


@_attrs_define
class TestDelivery:
    """Response of `POST /webhooks/{id}/test`.

    Attributes:
        delivered (bool): A `2xx` within the timeout.
        duration_ms (int):
        error (None | str):
        event_id (str):
        status_code (int | None): `null` when no HTTP answer came.
    """

    delivered: bool
    duration_ms: int
    error: None | str
    event_id: str
    status_code: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivered = self.delivered

        duration_ms = self.duration_ms

        error: None | str
        error = self.error

        event_id = self.event_id

        status_code: int | None
        status_code = self.status_code

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "delivered": delivered,
                "duration_ms": duration_ms,
                "error": error,
                "event_id": event_id,
                "status_code": status_code,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delivered = d.pop("delivered")

        duration_ms = d.pop("duration_ms")

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        event_id = d.pop("event_id")

        def _parse_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        status_code = _parse_status_code(d.pop("status_code"))

        test_delivery = cls(
            delivered=delivered,
            duration_ms=duration_ms,
            error=error,
            event_id=event_id,
            status_code=status_code,
        )

        test_delivery.additional_properties = d
        return test_delivery

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
