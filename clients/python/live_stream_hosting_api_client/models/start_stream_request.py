from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.start_stream_request_platform import StartStreamRequestPlatform
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.destination_request import DestinationRequest


T = TypeVar("T", bound="StartStreamRequest")


@_attrs_define
class StartStreamRequest:
    """Body of `POST /streams`.

    Attributes:
        creator_id (str): The `avt_` id of a creator from `GET /creators`.
        platform (StartStreamRequestPlatform):
        product_name (str): The product featured; not blank.
        destinations (list[DestinationRequest] | Unset): Channels to push the show to once live: at most 5; absent,
            `null` or `[]` for none. Checked after the creator.
        duration_minutes (int | Unset): Required for live keys. Optional for test keys (validated when sent); without it
            a test stream ends after the longest duration allowed.
        record (bool | Unset): Record the show to an MP4 kept for `RECORDING_RETENTION_DAYS` (docs/recordings.md);
            `false` when absent. Checked after `destinations`.
        script (str | Unset): Talking points for the host.
        vertical (str | Unset): Must match the brand's vertical (`live-commerce`); the brand's when omitted.
    """

    creator_id: str
    platform: StartStreamRequestPlatform
    product_name: str
    destinations: list[DestinationRequest] | Unset = UNSET
    duration_minutes: int | Unset = UNSET
    record: bool | Unset = UNSET
    script: str | Unset = UNSET
    vertical: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        creator_id = self.creator_id

        platform = self.platform.value

        product_name = self.product_name

        destinations: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.destinations, Unset):
            destinations = []
            for destinations_item_data in self.destinations:
                destinations_item = destinations_item_data.to_dict()
                destinations.append(destinations_item)

        duration_minutes = self.duration_minutes

        record = self.record

        script = self.script

        vertical = self.vertical

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "creator_id": creator_id,
                "platform": platform,
                "product_name": product_name,
            }
        )
        if destinations is not UNSET:
            field_dict["destinations"] = destinations
        if duration_minutes is not UNSET:
            field_dict["duration_minutes"] = duration_minutes
        if record is not UNSET:
            field_dict["record"] = record
        if script is not UNSET:
            field_dict["script"] = script
        if vertical is not UNSET:
            field_dict["vertical"] = vertical

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.destination_request import DestinationRequest  # noqa: PLC0415

        d = dict(src_dict)
        creator_id = d.pop("creator_id")

        platform = StartStreamRequestPlatform(d.pop("platform"))

        product_name = d.pop("product_name")

        _destinations = d.pop("destinations", UNSET)
        destinations: list[DestinationRequest] | Unset = UNSET
        if _destinations is not UNSET:
            destinations = []
            for destinations_item_data in _destinations:
                destinations_item = DestinationRequest.from_dict(destinations_item_data)

                destinations.append(destinations_item)

        duration_minutes = d.pop("duration_minutes", UNSET)

        record = d.pop("record", UNSET)

        script = d.pop("script", UNSET)

        vertical = d.pop("vertical", UNSET)

        start_stream_request = cls(
            creator_id=creator_id,
            platform=platform,
            product_name=product_name,
            destinations=destinations,
            duration_minutes=duration_minutes,
            record=record,
            script=script,
            vertical=vertical,
        )

        start_stream_request.additional_properties = d
        return start_stream_request

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
