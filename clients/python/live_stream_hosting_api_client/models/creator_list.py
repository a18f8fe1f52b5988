from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

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

    def to_dict(self) -> dict[str, Any]:
        creators = []
        for creators_item_data in self.creators:
            creators_item = creators_item_data.to_dict()
            creators.append(creators_item)

        field_dict: dict[str, Any] = {}

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

        return creator_list
