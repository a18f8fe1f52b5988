from enum import StrEnum


class StreamStatus(StrEnum):
    ENDED = "ended"
    ERROR = "error"
    LIVE = "live"
    PREPARING = "preparing"

    def __str__(self) -> str:
        return str(self.value)
