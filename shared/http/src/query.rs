//! Query strings, read leniently: a malformed query never rejects a request by itself.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use std::convert::Infallible;

#[derive(Debug, Clone, Default)]
pub struct QueryParams(pub Vec<(String, String)>);

impl QueryParams {
    pub fn parse(query: &str) -> Self {
        Self(
            url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(Self::parse(parts.uri.query().unwrap_or("")))
    }
}
