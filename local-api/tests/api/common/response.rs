//! A response as the suite sees it, with the assertions every test makes on it.

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
    pub body: Value,
}

impl Response {
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an error envelope with this status and code, and nothing else in it.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status.as_u16(), self.code()),
            (status, code),
            "body: {}",
            self.body
        );
        let error = self.body["error"].as_object().expect("error object");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(error.len(), 2, "error has exactly code and message");
        assert_eq!(self.body.as_object().unwrap().len(), 1);
        assert_eq!(self.header("content-type"), Some("application/json"));
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
    }
}
