from enum import StrEnum


class DestinationStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"
    FAILED = "failed"
    PENDING = "pending"
    REMOVED = "removed"
    STARTING = "starting"

    def __str__(self) -> str:
        return str(self.value)
