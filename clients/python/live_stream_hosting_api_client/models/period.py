from enum import StrEnum


class Period(StrEnum):
    DAYS_30 = "30d"
    DAYS_7 = "7d"
    HOURS_24 = "24h"

    def __str__(self) -> str:
        return str(self.value)
