from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.stream_status import StreamStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.destination import Destination
    from ..models.recording_view import RecordingView


T = TypeVar("T", bound="StreamCreated")


@_attrs_define
class StreamCreated:
    """Response of `POST /streams`.

    Attributes:
        created_at (datetime.datetime):
        destinations (list[Destination]): The destinations, in the order given (`[]` when none): `pending` for a live
            key, `active` for a test key.
        room_name (str):
        status (StreamStatus):
        stream_id (UUID):
        viewer_token (None | str):
        ws_url (None | str):
        agent_dispatched (bool | None | Unset): Live keys only.
        dispatch_method (None | str | Unset): Live keys only.
        recording (None | RecordingView | Unset): The recording, present when the stream was started with `record:
            true`: its first file, and every file in `parts` when there is more than one.
        test (bool | Unset): Present, and `true`, only on test-key streams.
    """

    created_at: datetime.datetime
    destinations: list[Destination]
    room_name: str
    status: StreamStatus
    stream_id: UUID
    viewer_token: None | str
    ws_url: None | str
    agent_dispatched: bool | None | Unset = UNSET
    dispatch_method: None | str | Unset = UNSET
    recording: None | RecordingView | Unset = UNSET
    test: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.recording_view import RecordingView  # noqa: PLC0415

        created_at = self.created_at.isoformat()

        destinations = []
        for destinations_item_data in self.destinations:
            destinations_item = destinations_item_data.to_dict()
            destinations.append(destinations_item)

        room_name = self.room_name

        status = self.status.value

        stream_id = str(self.stream_id)

        viewer_token: None | str
        viewer_token = self.viewer_token

        ws_url: None | str
        ws_url = self.ws_url

        agent_dispatched: bool | None | Unset
        if isinstance(self.agent_dispatched, Unset):
            agent_dispatched = UNSET
        else:
            agent_dispatched = self.agent_dispatched

        dispatch_method: None | str | Unset
        if isinstance(self.dispatch_method, Unset):
            dispatch_method = UNSET
        else:
            dispatch_method = self.dispatch_method

        recording: dict[str, Any] | None | Unset
        if isinstance(self.recording, Unset):
            recording = UNSET
        elif isinstance(self.recording, RecordingView):
            recording = self.recording.to_dict()
        else:
            recording = self.recording

        test = self.test

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "destinations": destinations,
                "room_name": room_name,
                "status": status,
                "stream_id": stream_id,
                "viewer_token": viewer_token,
                "ws_url": ws_url,
            }
        )
        if agent_dispatched is not UNSET:
            field_dict["agent_dispatched"] = agent_dispatched
        if dispatch_method is not UNSET:
            field_dict["dispatch_method"] = dispatch_method
        if recording is not UNSET:
            field_dict["recording"] = recording
        if test is not UNSET:
            field_dict["test"] = test

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.destination import Destination  # noqa: PLC0415
        from ..models.recording_view import RecordingView  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        destinations = []
        _destinations = d.pop("destinations")
        for destinations_item_data in _destinations:
            destinations_item = Destination.from_dict(destinations_item_data)

            destinations.append(destinations_item)

        room_name = d.pop("room_name")

        status = StreamStatus(d.pop("status"))

        stream_id = UUID(d.pop("stream_id"))

        def _parse_viewer_token(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        viewer_token = _parse_viewer_token(d.pop("viewer_token"))

        def _parse_ws_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        ws_url = _parse_ws_url(d.pop("ws_url"))

        def _parse_agent_dispatched(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        agent_dispatched = _parse_agent_dispatched(d.pop("agent_dispatched", UNSET))

        def _parse_dispatch_method(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dispatch_method = _parse_dispatch_method(d.pop("dispatch_method", UNSET))

        def _parse_recording(data: object) -> None | RecordingView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                recording_type_0 = RecordingView.from_dict(data)

                return recording_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RecordingView | Unset, data)

        recording = _parse_recording(d.pop("recording", UNSET))

        test = d.pop("test", UNSET)

        stream_created = cls(
            created_at=created_at,
            destinations=destinations,
            room_name=room_name,
            status=status,
            stream_id=stream_id,
            viewer_token=viewer_token,
            ws_url=ws_url,
            agent_dispatched=agent_dispatched,
            dispatch_method=dispatch_method,
            recording=recording,
            test=test,
        )

        stream_created.additional_properties = d
        return stream_created

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
