from enum import StrEnum


class EventType(StrEnum):
    SHOW_FAILED = "show.failed"
    SHOW_REMINDER = "show.reminder"
    SHOW_STARTED = "show.started"
    STREAM_CLIP_FAILED = "stream.clip_failed"
    STREAM_CLIP_READY = "stream.clip_ready"
    STREAM_DESTINATION_ACTIVE = "stream.destination_active"
    STREAM_DESTINATION_FAILED = "stream.destination_failed"
    STREAM_ENDED = "stream.ended"
    STREAM_ERROR = "stream.error"
    STREAM_RECORDING_FAILED = "stream.recording_failed"
    STREAM_RECORDING_READY = "stream.recording_ready"
    STREAM_STARTED = "stream.started"
    WEBHOOK_DISABLED = "webhook.disabled"

    def __str__(self) -> str:
        return str(self.value)
