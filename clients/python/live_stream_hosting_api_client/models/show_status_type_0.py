from enum import StrEnum


class ShowStatusType0(StrEnum):
    CANCELLED = "cancelled"
    FAILED = "failed"
    SCHEDULED = "scheduled"
    STARTED = "started"

    def __str__(self) -> str:
        return str(self.value)
