from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ClipRequest")


@_attrs_define
class ClipRequest:
    """Body of `POST /streams/{id}/clips`.

    Attributes:
        end_seconds (float): Where it ends: after `start_seconds`, by 1 to `CLIP_MAX_SECONDS` (180 by default), within
            the recording's duration and in the same part as the start.
        start_seconds (float): Where the clip starts, in seconds from the start of the recording (its first part, then
            its next parts in order); at least 0.
        title (str | Unset): A name for people; `null` or absent for none.
    """

    end_seconds: float
    start_seconds: float
    title: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        end_seconds = self.end_seconds

        start_seconds = self.start_seconds

        title = self.title

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "end_seconds": end_seconds,
                "start_seconds": start_seconds,
            }
        )
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        end_seconds = d.pop("end_seconds")

        start_seconds = d.pop("start_seconds")

        title = d.pop("title", UNSET)

        clip_request = cls(
            end_seconds=end_seconds,
            start_seconds=start_seconds,
            title=title,
        )

        clip_request.additional_properties = d
        return clip_request

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
