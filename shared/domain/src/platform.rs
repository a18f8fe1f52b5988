//! The platforms a stream is for and a destination airs on: one list, below both the request
//! checks and the destinations, so every message naming them comes from it.

pub const PLATFORMS: [&str; 6] = [
    "youtube",
    "tiktok",
    "twitch",
    "kick",
    "facebook",
    "instagram",
];
