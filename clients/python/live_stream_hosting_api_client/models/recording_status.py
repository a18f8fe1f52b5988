from enum import StrEnum


class RecordingStatus(StrEnum):
    EXPIRED = "expired"
    FAILED = "failed"
    PENDING = "pending"
    PROCESSING = "processing"
    READY = "ready"
    RECORDING = "recording"

    def __str__(self) -> str:
        return str(self.value)
