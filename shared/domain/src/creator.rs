use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Serialized as the spec's Creator summary: all nine fields, always.
/// A stock creator (AI host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Creator {
    /// The value `POST /streams` takes as `creator_id`.
    #[schemars(pattern("^avt_"))]
    pub id: String,
    pub name: String,
    pub status: Option<String>,
    #[serde(default)]
    pub languages: Vec<String>,
    pub style: Option<String>,
    pub personality: Option<String>,
    pub vibe: Option<String>,
    pub consent: Option<bool>,
    pub photo: Option<String>,
}

/// Response of `GET /creators`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreatorList {
    pub creators: Vec<Creator>,
}

/// Sort order of `GET /creators`: by name case-insensitively, then by id.
pub fn sort_creators(creators: &mut [Creator]) {
    creators.sort_by(|a, b| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then_with(|| a.id.cmp(&b.id))
    });
}
