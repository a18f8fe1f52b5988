from enum import StrEnum


class ClipStatus(StrEnum):
    DELETED = "deleted"
    EXPIRED = "expired"
    FAILED = "failed"
    PENDING = "pending"
    PROCESSING = "processing"
    READY = "ready"

    def __str__(self) -> str:
        return str(self.value)
