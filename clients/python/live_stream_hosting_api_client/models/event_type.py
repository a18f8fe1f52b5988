from enum import StrEnum


class EventType(StrEnum):
    STREAM_ENDED = "stream.ended"
    STREAM_ERROR = "stream.error"
    STREAM_STARTED = "stream.started"

    def __str__(self) -> str:
        return str(self.value)
