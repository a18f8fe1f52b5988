from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.show_view import ShowView


T = TypeVar("T", bound="ShowList")


@_attrs_define
class ShowList:
    """Response of `GET /shows`.

    Attributes:
        limit (int):
        offset (int):
        shows (list[ShowView]):
        total (int): Shows matching the filter, over every page.
    """

    limit: int
    offset: int
    shows: list[ShowView]
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        limit = self.limit

        offset = self.offset

        shows = []
        for shows_item_data in self.shows:
            shows_item = shows_item_data.to_dict()
            shows.append(shows_item)

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "limit": limit,
                "offset": offset,
                "shows": shows,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.show_view import ShowView  # noqa: PLC0415

        d = dict(src_dict)
        limit = d.pop("limit")

        offset = d.pop("offset")

        shows = []
        _shows = d.pop("shows")
        for shows_item_data in _shows:
            shows_item = ShowView.from_dict(shows_item_data)

            shows.append(shows_item)

        total = d.pop("total")

        show_list = cls(
            limit=limit,
            offset=offset,
            shows=shows,
            total=total,
        )

        show_list.additional_properties = d
        return show_list

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
