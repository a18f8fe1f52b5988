from enum import StrEnum


class ErrorCode(StrEnum):
    CONCURRENCY_LIMIT = "concurrency_limit"
    DB_ERROR = "db_error"
    IDEMPOTENCY_KEY_IN_USE = "idempotency_key_in_use"
    IDEMPOTENCY_KEY_MISMATCH = "idempotency_key_mismatch"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    INVALID_CREATOR = "invalid_creator"
    INVALID_EVENTS = "invalid_events"
    INVALID_FIELDS = "invalid_fields"
    INVALID_URL = "invalid_url"
    LAUNCH_FAILED = "launch_failed"
    MISSING_FIELDS = "missing_fields"
    NOT_FOUND = "not_found"
    PLAN_REQUIRED = "plan_required"
    RATE_LIMITED = "rate_limited"
    RECORDING_NOT_READY = "recording_not_ready"
    UNAUTHORIZED = "unauthorized"
    VERTICAL_MISMATCH = "vertical_mismatch"

    def __str__(self) -> str:
        return str(self.value)
