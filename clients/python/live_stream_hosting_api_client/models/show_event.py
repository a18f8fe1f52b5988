from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

if TYPE_CHECKING:
    from ..models.show_event_data import ShowEventData


T = TypeVar("T", bound="ShowEvent")


@_attrs_define
class ShowEvent:
    """The body of `show.started`, `show.failed` and `show.reminder`.

    Attributes:
        api_version (str): `v1`.
        created_at (datetime.datetime):
        data (ShowEventData):
        id (str): `evt_` and 32 hex digits; deduplicate on this.
        test (bool): Whether the show was made with a test key.
        type_ (EventType):
    """

    api_version: str
    created_at: datetime.datetime
    data: ShowEventData
    id: str
    test: bool
    type_: EventType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        api_version = self.api_version

        created_at = self.created_at.isoformat()

        data = self.data.to_dict()

        id = self.id

        test = self.test

        type_ = self.type_.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "api_version": api_version,
                "created_at": created_at,
                "data": data,
                "id": id,
                "test": test,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.show_event_data import ShowEventData  # noqa: PLC0415

        d = dict(src_dict)
        api_version = d.pop("api_version")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        data = ShowEventData.from_dict(d.pop("data"))

        id = d.pop("id")

        test = d.pop("test")

        type_ = EventType(d.pop("type"))

        show_event = cls(
            api_version=api_version,
            created_at=created_at,
            data=data,
            id=id,
            test=test,
            type_=type_,
        )

        show_event.additional_properties = d
        return show_event

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
