use thiserror::Error;

/// Why a cut did not finish. [`CutError::is_permanent`] tells a clip that can never be cut
/// (`failed`, with the message as its `error`) from a read or a write worth trying again.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CutError {
    #[error("reading the recording failed: {0}")]
    Read(String),
    #[error("writing the clip failed: {0}")]
    Write(String),
    #[error("the recording is not an MP4 that can be cut: {0}")]
    Unreadable(String),
    #[error("the recording has no video keyframe at or before the clip's start")]
    NoKeyframe,
    #[error("the clip's range is not within the recording")]
    OutOfRange,
}

impl CutError {
    pub fn is_permanent(&self) -> bool {
        !matches!(self, Self::Read(_) | Self::Write(_))
    }

    pub(crate) fn unreadable(what: impl std::fmt::Display) -> Self {
        Self::Unreadable(what.to_string())
    }
}

impl From<shiguredo_mp4::Error> for CutError {
    fn from(error: shiguredo_mp4::Error) -> Self {
        // The library's message names the box and what was wrong with it; never a secret.
        Self::Unreadable(error.to_string())
    }
}
