from enum import StrEnum


class DestinationPlatform(StrEnum):
    FACEBOOK = "facebook"
    INSTAGRAM = "instagram"
    KICK = "kick"
    TIKTOK = "tiktok"
    TWITCH = "twitch"
    YOUTUBE = "youtube"

    def __str__(self) -> str:
        return str(self.value)
