from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.destination_platform import DestinationPlatform
from ..models.destination_status import DestinationStatus

T = TypeVar("T", bound="Destination")


@_attrs_define
class Destination:
    """A destination as stored on its stream and shown: never its stream key.

    Attributes:
        destination_id (str): `dst_` and 32 lowercase hex digits.
        ended_at (datetime.datetime | None): When it became `failed`, `ended` or `removed`.
        error (None | str): Why it failed: LiveKit's error text, or `egress_unavailable` when the egress could not be
            started.
        ingest_url (str): The RTMP ingest, as given.
        platform (DestinationPlatform):
        started_at (datetime.datetime | None): When it became `active`.
        status (DestinationStatus): `pending`: the stream is not live yet. `starting`: the egress was requested.
            `active`: LiveKit reports the output active. `failed`, `ended` and `removed` are final. States only move
            forward.
        stream_key_last4 (str): The stream key's last 4 characters (the whole key when shorter); the key itself is never
            shown again.
    """

    destination_id: str
    ended_at: datetime.datetime | None
    error: None | str
    ingest_url: str
    platform: DestinationPlatform
    started_at: datetime.datetime | None
    status: DestinationStatus
    stream_key_last4: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        destination_id = self.destination_id

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        error: None | str
        error = self.error

        ingest_url = self.ingest_url

        platform = self.platform.value

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        stream_key_last4 = self.stream_key_last4

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "destination_id": destination_id,
                "ended_at": ended_at,
                "error": error,
                "ingest_url": ingest_url,
                "platform": platform,
                "started_at": started_at,
                "status": status,
                "stream_key_last4": stream_key_last4,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        destination_id = d.pop("destination_id")

        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        ingest_url = d.pop("ingest_url")

        platform = DestinationPlatform(d.pop("platform"))

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        status = DestinationStatus(d.pop("status"))

        stream_key_last4 = d.pop("stream_key_last4")

        destination = cls(
            destination_id=destination_id,
            ended_at=ended_at,
            error=error,
            ingest_url=ingest_url,
            platform=platform,
            started_at=started_at,
            status=status,
            stream_key_last4=stream_key_last4,
        )

        destination.additional_properties = d
        return destination

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
