//! The four stream endpoints: `POST`/`GET`/`DELETE /streams` as docs/streams.md and
//! docs/request-pipeline.md ("Order of checks per endpoint", "Errors") state them; safe retries of a start; the test helpers;
//! and the lifecycle that ends every stream by its deadline.

mod end;
mod get;
mod history;
mod idempotency;
mod lifecycle;
mod list;
mod start;
mod test_helpers;

use crate::common::Response;

/// The ids a `GET /streams` answer lists, in order.
fn listed_ids(r: &Response) -> Vec<String> {
    r.body["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}
