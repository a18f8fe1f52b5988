//! Scheduled shows on DynamoDB. Work in progress on this branch: the embedded store holds
//! shows; here every operation answers that shows are not stored yet, so nothing is half
//! written. The layout to build is in docs/shows.md, "Storage".

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::DynamoStore;
use hosting_domain::destination::StreamKeys;
use hosting_domain::error::StoreError;
use hosting_domain::ports::*;
use hosting_domain::show::{Show, ShowError, ShowStatus};
use hosting_domain::{EventType, Stream, StreamEvent};

fn not_yet<T>() -> StoreResult<T> {
    Err(StoreError::Backend(
        "scheduled shows are not stored on DynamoDB yet".into(),
    ))
}

#[async_trait]
impl ShowStore for DynamoStore {
    async fn create_show(
        &self,
        _show: &Show,
        _keys: &StreamKeys,
        _script: Option<&str>,
        _binding: Option<&IdempotencyBinding>,
    ) -> StoreResult<CreateShowOutcome> {
        not_yet()
    }

    async fn get_show(&self, _brand_id: &str, _show_id: Uuid) -> StoreResult<Option<Show>> {
        not_yet()
    }

    async fn list_shows(
        &self,
        _brand_id: &str,
        _status: Option<ShowStatus>,
        _limit: usize,
        _offset: usize,
    ) -> StoreResult<ShowPage> {
        // Nothing is scheduled here yet: no page holds a show.
        Ok(ShowPage {
            shows: Vec::new(),
            total: 0,
        })
    }

    async fn update_scheduled_show(
        &self,
        _changed: &Show,
        _keys: Option<&StreamKeys>,
        _script: Option<Option<&str>>,
    ) -> StoreResult<ShowChange> {
        not_yet()
    }

    async fn cancel_show(&self, _brand_id: &str, _show_id: Uuid) -> StoreResult<ShowChange> {
        not_yet()
    }

    async fn claim_show(
        &self,
        _brand_id: &str,
        _show_id: Uuid,
        _now: DateTime<Utc>,
        _until: DateTime<Utc>,
    ) -> StoreResult<Option<Show>> {
        not_yet()
    }

    async fn show_inputs(&self, _show_id: Uuid) -> StoreResult<(StreamKeys, Option<String>)> {
        not_yet()
    }

    async fn start_show_stream(
        &self,
        _show: &Show,
        _stream: &Stream,
        _announce: Option<EventType>,
        _max_active: u32,
    ) -> StoreResult<ShowStart> {
        not_yet()
    }

    async fn settle_show(
        &self,
        _show: &Show,
        _error: Option<&ShowError>,
        _event: &StreamEvent,
    ) -> StoreResult<bool> {
        not_yet()
    }

    async fn remind_show(&self, _show: &Show, _event: &StreamEvent) -> StoreResult<bool> {
        not_yet()
    }

    async fn due_shows(&self, _now: DateTime<Utc>, _limit: usize) -> StoreResult<Vec<Show>> {
        // Nothing is scheduled here yet: the sweep finds nothing due.
        Ok(Vec::new())
    }

    async fn find_show(&self, _show_id: Uuid) -> StoreResult<Option<Show>> {
        Ok(None)
    }
}
