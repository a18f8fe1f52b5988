from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Creator")


@_attrs_define
class Creator:
    """A stock creator (AI host).

    Attributes:
        consent (bool | None):
        id (str): The value `POST /streams` takes as `creator_id`.
        languages (list[str]):
        name (str):
        personality (None | str):
        photo (None | str):
        status (None | str):
        style (None | str):
        vibe (None | str):
    """

    consent: bool | None
    id: str
    languages: list[str]
    name: str
    personality: None | str
    photo: None | str
    status: None | str
    style: None | str
    vibe: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        consent: bool | None
        consent = self.consent

        id = self.id

        languages = self.languages

        name = self.name

        personality: None | str
        personality = self.personality

        photo: None | str
        photo = self.photo

        status: None | str
        status = self.status

        style: None | str
        style = self.style

        vibe: None | str
        vibe = self.vibe

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "consent": consent,
                "id": id,
                "languages": languages,
                "name": name,
                "personality": personality,
                "photo": photo,
                "status": status,
                "style": style,
                "vibe": vibe,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_consent(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        consent = _parse_consent(d.pop("consent"))

        id = d.pop("id")

        languages = cast(list[str], d.pop("languages"))

        name = d.pop("name")

        def _parse_personality(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        personality = _parse_personality(d.pop("personality"))

        def _parse_photo(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        photo = _parse_photo(d.pop("photo"))

        def _parse_status(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        status = _parse_status(d.pop("status"))

        def _parse_style(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        style = _parse_style(d.pop("style"))

        def _parse_vibe(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        vibe = _parse_vibe(d.pop("vibe"))

        creator = cls(
            consent=consent,
            id=id,
            languages=languages,
            name=name,
            personality=personality,
            photo=photo,
            status=status,
            style=style,
            vibe=vibe,
        )

        creator.additional_properties = d
        return creator

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
