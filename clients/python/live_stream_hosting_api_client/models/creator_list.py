from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.creator import Creator


T = TypeVar("T", bound="CreatorList")


@_attrs_define
class CreatorList:
    """Response of `GET /creators`.

    Attributes:
        creators (list[Creator]):
    """

    creators: list[Creator]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        creators = []
        for creators_item_data in self.creators:
            creators_item = creators_item_data.to_dict()
            creators.append(creators_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "creators": creators,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.creator import Creator  # noqa: PLC0415

        d = dict(src_dict)
        creators = []
        _creators = d.pop("creators")
        for creators_item_data in _creators:
            creators_item = Creator.from_dict(creators_item_data)

            creators.append(creators_item)

        creator_list = cls(
            creators=creators,
        )

        creator_list.additional_properties = d
        return creator_list

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
