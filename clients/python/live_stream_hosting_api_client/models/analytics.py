from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.period import Period

if TYPE_CHECKING:
    from ..models.analytics_by_platform import AnalyticsByPlatform
    from ..models.analytics_stream import AnalyticsStream


T = TypeVar("T", bound="Analytics")


@_attrs_define
class Analytics:
    """Response of `GET /analytics`.

    Attributes:
        avg_viewers_per_stream (float): Rounded to two decimals.
        brand_id (str):
        by_platform (AnalyticsByPlatform): Streams per platform (`unknown` when none was recorded).
        live_now (int):
        period (Period): The analytics window.
        streams (list[AnalyticsStream]): Newest first, at most 1,000; the totals cover every stream of the window.
        total_minutes (int): Whole minutes of the window's completed streams.
        total_streams (int):
        total_viewers (int):
    """

    avg_viewers_per_stream: float
    brand_id: str
    by_platform: AnalyticsByPlatform
    live_now: int
    period: Period
    streams: list[AnalyticsStream]
    total_minutes: int
    total_streams: int
    total_viewers: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        avg_viewers_per_stream = self.avg_viewers_per_stream

        brand_id = self.brand_id

        by_platform = self.by_platform.to_dict()

        live_now = self.live_now

        period = self.period.value

        streams = []
        for streams_item_data in self.streams:
            streams_item = streams_item_data.to_dict()
            streams.append(streams_item)

        total_minutes = self.total_minutes

        total_streams = self.total_streams

        total_viewers = self.total_viewers

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "avg_viewers_per_stream": avg_viewers_per_stream,
                "brand_id": brand_id,
                "by_platform": by_platform,
                "live_now": live_now,
                "period": period,
                "streams": streams,
                "total_minutes": total_minutes,
                "total_streams": total_streams,
                "total_viewers": total_viewers,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.analytics_by_platform import AnalyticsByPlatform  # noqa: PLC0415
        from ..models.analytics_stream import AnalyticsStream  # noqa: PLC0415

        d = dict(src_dict)
        avg_viewers_per_stream = d.pop("avg_viewers_per_stream")

        brand_id = d.pop("brand_id")

        by_platform = AnalyticsByPlatform.from_dict(d.pop("by_platform"))

        live_now = d.pop("live_now")

        period = Period(d.pop("period"))

        streams = []
        _streams = d.pop("streams")
        for streams_item_data in _streams:
            streams_item = AnalyticsStream.from_dict(streams_item_data)

            streams.append(streams_item)

        total_minutes = d.pop("total_minutes")

        total_streams = d.pop("total_streams")

        total_viewers = d.pop("total_viewers")

        analytics = cls(
            avg_viewers_per_stream=avg_viewers_per_stream,
            brand_id=brand_id,
            by_platform=by_platform,
            live_now=live_now,
            period=period,
            streams=streams,
            total_minutes=total_minutes,
            total_streams=total_streams,
            total_viewers=total_viewers,
        )

        analytics.additional_properties = d
        return analytics

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
