from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.end_reason import EndReason
from ..models.stream_status import StreamStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.destination import Destination
    from ..models.recording_view import RecordingView
    from ..models.stream_event_entry import StreamEventEntry
    from ..models.stream_usage import StreamUsage


T = TypeVar("T", bound="StreamDetail")


@_attrs_define
class StreamDetail:
    """Response of `GET /streams/{id}`, also the `data.stream` of webhook events.

    Attributes:
        created_at (datetime.datetime):
        creator_id (None | str):
        destinations (list[Destination]): The channels the show is pushed to, in the order given (`[]` when none).
        ended_at (datetime.datetime | None):
        events (list[StreamEventEntry]): Reserved: always empty in this release.
        platform (str):
        product_name (str):
        room_name (str): `""` for a stream that never had a room.
        started_at (datetime.datetime | None):
        status (StreamStatus):
        stream_id (UUID):
        vertical (str):
        viewer_count (int):
        end_reason (EndReason | Unset): Why the stream reached `ended` or `error`, recorded with that change; absent
            while it is `preparing` or `live` and on history that never recorded one. `requested`: `DELETE /streams/{id}`
            (ended). `duration_elapsed`: its duration passed (ended). `host_left`: the AI host left the room (ended).
            `room_finished`: the room provider finished the room (ended). `preparing_timeout`: still preparing 5 minutes
            after creation (error). `launch_failed`: room, dispatch or token failed at start, the `502 launch_failed`
            (error). `provider_error`: the room provider failed while live (error). `host_lost`: the AI host dropped while
            live and no host joined again within the reconnect window (error). Values may be added: treat an unknown one as
            a generic end.
        recording (None | RecordingView | Unset): The recording, present when the stream was started with `record:
            true`: its first file, and every file in `parts` when there is more than one.
        test (bool | Unset): Present, and `true`, only on test-key streams.
        usage (None | StreamUsage | Unset): The stream's metered live time as of the answer: on `GET /streams/{id}` and
            the test helpers' answers, never in an event.
    """

    created_at: datetime.datetime
    creator_id: None | str
    destinations: list[Destination]
    ended_at: datetime.datetime | None
    events: list[StreamEventEntry]
    platform: str
    product_name: str
    room_name: str
    started_at: datetime.datetime | None
    status: StreamStatus
    stream_id: UUID
    vertical: str
    viewer_count: int
    end_reason: EndReason | Unset = UNSET
    recording: None | RecordingView | Unset = UNSET
    test: bool | Unset = UNSET
    usage: None | StreamUsage | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.recording_view import RecordingView  # noqa: PLC0415
        from ..models.stream_usage import StreamUsage  # noqa: PLC0415

        created_at = self.created_at.isoformat()

        creator_id: None | str
        creator_id = self.creator_id

        destinations = []
        for destinations_item_data in self.destinations:
            destinations_item = destinations_item_data.to_dict()
            destinations.append(destinations_item)

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        platform = self.platform

        product_name = self.product_name

        room_name = self.room_name

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        status = self.status.value

        stream_id = str(self.stream_id)

        vertical = self.vertical

        viewer_count = self.viewer_count

        end_reason: str | Unset = UNSET
        if not isinstance(self.end_reason, Unset):
            end_reason = self.end_reason.value

        recording: dict[str, Any] | None | Unset
        if isinstance(self.recording, Unset):
            recording = UNSET
        elif isinstance(self.recording, RecordingView):
            recording = self.recording.to_dict()
        else:
            recording = self.recording

        test = self.test

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, StreamUsage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "creator_id": creator_id,
                "destinations": destinations,
                "ended_at": ended_at,
                "events": events,
                "platform": platform,
                "product_name": product_name,
                "room_name": room_name,
                "started_at": started_at,
                "status": status,
                "stream_id": stream_id,
                "vertical": vertical,
                "viewer_count": viewer_count,
            }
        )
        if end_reason is not UNSET:
            field_dict["end_reason"] = end_reason
        if recording is not UNSET:
            field_dict["recording"] = recording
        if test is not UNSET:
            field_dict["test"] = test
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.destination import Destination  # noqa: PLC0415
        from ..models.recording_view import RecordingView  # noqa: PLC0415
        from ..models.stream_event_entry import StreamEventEntry  # noqa: PLC0415
        from ..models.stream_usage import StreamUsage  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_creator_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        creator_id = _parse_creator_id(d.pop("creator_id"))

        destinations = []
        _destinations = d.pop("destinations")
        for destinations_item_data in _destinations:
            destinations_item = Destination.from_dict(destinations_item_data)

            destinations.append(destinations_item)

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

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = StreamEventEntry.from_dict(events_item_data)

            events.append(events_item)

        platform = d.pop("platform")

        product_name = d.pop("product_name")

        room_name = d.pop("room_name")

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

        status = StreamStatus(d.pop("status"))

        stream_id = UUID(d.pop("stream_id"))

        vertical = d.pop("vertical")

        viewer_count = d.pop("viewer_count")

        _end_reason = d.pop("end_reason", UNSET)
        end_reason: EndReason | Unset
        if isinstance(_end_reason, Unset):
            end_reason = UNSET
        else:
            end_reason = EndReason(_end_reason)

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

        def _parse_usage(data: object) -> None | StreamUsage | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_0 = StreamUsage.from_dict(data)

                return usage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StreamUsage | Unset, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        stream_detail = cls(
            created_at=created_at,
            creator_id=creator_id,
            destinations=destinations,
            ended_at=ended_at,
            events=events,
            platform=platform,
            product_name=product_name,
            room_name=room_name,
            started_at=started_at,
            status=status,
            stream_id=stream_id,
            vertical=vertical,
            viewer_count=viewer_count,
            end_reason=end_reason,
            recording=recording,
            test=test,
            usage=usage,
        )

        stream_detail.additional_properties = d
        return stream_detail

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
