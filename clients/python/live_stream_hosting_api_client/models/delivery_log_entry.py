from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attempt_status import AttemptStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery_log_entry_body_type_0 import DeliveryLogEntryBodyType0


T = TypeVar("T", bound="DeliveryLogEntry")


@_attrs_define
class DeliveryLogEntry:
    """An item of `GET /webhooks/{id}/deliveries`: never a response body, never a secret.

    Attributes:
        attempt (int): 1 for the first attempt, up to 6; 1 for a test event.
        attempted_at (datetime.datetime):
        duration_ms (int):
        error (None | str): A short reason for a failure with no HTTP answer, or for a refused redirect.
        event_id (str): `evt_` and 32 hex digits.
        event_type (str): `stream.started`, `stream.ended`, `stream.error` or `webhook.test`.
        next_attempt_at (datetime.datetime | None): When this failure is retried; `null` when it is the last or it
            succeeded.
        response_status (int | None): `null` when no HTTP answer came (timeout, refused address, connection error).
        status (AttemptStatus):
        body (DeliveryLogEntryBodyType0 | None | Unset): Only on a page filtered by `event_id`: the event's body as last
            delivered to this webhook,
            byte for byte (what was sent, never what the receiver answered). Absent once no longer
            kept.
    """

    attempt: int
    attempted_at: datetime.datetime
    duration_ms: int
    error: None | str
    event_id: str
    event_type: str
    next_attempt_at: datetime.datetime | None
    response_status: int | None
    status: AttemptStatus
    body: DeliveryLogEntryBodyType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_log_entry_body_type_0 import DeliveryLogEntryBodyType0  # noqa: PLC0415

        attempt = self.attempt

        attempted_at = self.attempted_at.isoformat()

        duration_ms = self.duration_ms

        error: None | str
        error = self.error

        event_id = self.event_id

        event_type = self.event_type

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        response_status: int | None
        response_status = self.response_status

        status = self.status.value

        body: dict[str, Any] | None | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        elif isinstance(self.body, DeliveryLogEntryBodyType0):
            body = self.body.to_dict()
        else:
            body = self.body

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "attempted_at": attempted_at,
                "duration_ms": duration_ms,
                "error": error,
                "event_id": event_id,
                "event_type": event_type,
                "next_attempt_at": next_attempt_at,
                "response_status": response_status,
                "status": status,
            }
        )
        if body is not UNSET:
            field_dict["body"] = body

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_log_entry_body_type_0 import DeliveryLogEntryBodyType0  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        attempted_at = datetime.datetime.fromisoformat(d.pop("attempted_at"))

        duration_ms = d.pop("duration_ms")

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))

        def _parse_response_status(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        response_status = _parse_response_status(d.pop("response_status"))

        status = AttemptStatus(d.pop("status"))

        def _parse_body(data: object) -> DeliveryLogEntryBodyType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                body_type_0 = DeliveryLogEntryBodyType0.from_dict(data)

                return body_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryLogEntryBodyType0 | None | Unset, data)

        body = _parse_body(d.pop("body", UNSET))

        delivery_log_entry = cls(
            attempt=attempt,
            attempted_at=attempted_at,
            duration_ms=duration_ms,
            error=error,
            event_id=event_id,
            event_type=event_type,
            next_attempt_at=next_attempt_at,
            response_status=response_status,
            status=status,
            body=body,
        )

        delivery_log_entry.additional_properties = d
        return delivery_log_entry

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
