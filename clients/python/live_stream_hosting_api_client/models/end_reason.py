from enum import StrEnum


class EndReason(StrEnum):
    DURATION_ELAPSED = "duration_elapsed"
    HOST_LEFT = "host_left"
    HOST_LOST = "host_lost"
    LAUNCH_FAILED = "launch_failed"
    PREPARING_TIMEOUT = "preparing_timeout"
    PROVIDER_ERROR = "provider_error"
    REQUESTED = "requested"
    ROOM_FINISHED = "room_finished"

    def __str__(self) -> str:
        return str(self.value)
