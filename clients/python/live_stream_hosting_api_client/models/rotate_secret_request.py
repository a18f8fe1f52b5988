from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RotateSecretRequest")


@_attrs_define
class RotateSecretRequest:
    """Body of `POST /webhooks/{id}/rotate-secret`; the body itself is optional.

    Attributes:
        expire_previous_in_seconds (int | Unset): How long the replaced secret keeps signing beside the new one; 86400
            when absent.
    """

    expire_previous_in_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expire_previous_in_seconds = self.expire_previous_in_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if expire_previous_in_seconds is not UNSET:
            field_dict["expire_previous_in_seconds"] = expire_previous_in_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        expire_previous_in_seconds = d.pop("expire_previous_in_seconds", UNSET)

        rotate_secret_request = cls(
            expire_previous_in_seconds=expire_previous_in_seconds,
        )

        rotate_secret_request.additional_properties = d
        return rotate_secret_request

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
