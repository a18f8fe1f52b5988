//! What the app did (events, counters, dead letters) and the backends' state and faults.

use serde_json::Value;

use super::{TestApp, backend, faults};

impl TestApp {
    /// Types of every event emitted for `stream_id`, in order.
    pub async fn events_of(&self, stream_id: &str) -> Vec<String> {
        self.emitted_events()
            .await
            .into_iter()
            .filter(|e| e.stream_id.map(|id| id.to_string()).unwrap_or_default() == stream_id)
            .map(|e| e.event_type.as_str().to_owned())
            .collect()
    }

    /// The stream's `end_reason` as its detail, its list item and (once it is final) its one
    /// final event's `data.stream` show it (docs/lifecycle.md, "Why a stream ended"): `None` means absent from
    /// all three.
    pub async fn assert_end_reason(&self, key: &str, id: &str, status: &str, reason: Option<&str>) {
        let detail = self.get(&format!("/streams/{id}"), key).await;
        detail.assert_status(200);
        assert_eq!(detail.body["status"], status, "{id}");
        assert_eq!(
            detail.body.get("end_reason").and_then(|r| r.as_str()),
            reason,
            "detail of {id}"
        );
        let list = self
            .get(&format!("/streams?status={status}&limit=100"), key)
            .await;
        let item = list.body["streams"]
            .as_array()
            .and_then(|items| items.iter().find(|item| item["id"] == id))
            .unwrap_or_else(|| panic!("{id} not listed as {status}"));
        assert_eq!(
            item.get("end_reason").and_then(|r| r.as_str()),
            reason,
            "list item of {id}"
        );
        if matches!(status, "ended" | "error") {
            let event_type = format!("stream.{status}");
            let finals: Vec<_> = self
                .emitted_events()
                .await
                .into_iter()
                .filter(|e| {
                    e.stream_id.map(|id| id.to_string()).unwrap_or_default() == id
                        && e.event_type.as_str() == event_type
                })
                .collect();
            assert_eq!(finals.len(), 1, "one {event_type} of {id}");
            let body: Value = serde_json::from_str(&finals[0].body).unwrap();
            assert_eq!(body["data"]["stream"]["status"], status);
            assert_eq!(
                body["data"]["stream"]
                    .get("end_reason")
                    .and_then(|r| r.as_str()),
                reason,
                "event of {id}"
            );
        }
    }

    /// Leaves the store unchecked when the test ends: for a test that breaks it on purpose.
    pub fn skip_invariants(&self) {
        self.check_invariants
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Leaves outbox records undrained when the test ends (`invariants.rs`): for a test that
    /// makes relaying or a room deletion fail for good on purpose, `because` saying how.
    pub fn skip_outbox_check(&self, because: &'static str) {
        let _ = self.skipped_outbox_check.set(because);
    }

    /// Leaves rooms of finished streams in the fake LiveKit when the test ends
    /// (`invariants.rs`): for a test that keeps LiveKit from deleting them on purpose,
    /// `because` saying how.
    pub fn skip_rooms_check(&self, because: &'static str) {
        let _ = self.skipped_rooms_check.set(because);
    }

    /// Every event emitted so far, in order.
    pub async fn emitted_events(&self) -> Vec<hosting_domain::StreamEvent> {
        backend::emitted_events(&self.runtime, self.dynamo.as_ref()).await
    }

    /// Active slots the brand's counter holds.
    pub async fn active_streams(&self, brand_id: &str) -> u32 {
        backend::active_streams(&self.runtime, self.dynamo.as_ref(), brand_id).await
    }

    /// Makes every later store request fail, as an outage would.
    pub async fn set_failing(&self) {
        self.skip_invariants();
        backend::set_failing(&self.runtime, self.dynamo.as_ref()).await
    }

    /// The DynamoDB store, when that is the backend.
    pub fn dynamo(&self) -> Option<&hosting_aws::dynamodb::DynamoStore> {
        self.dynamo.as_ref()
    }

    /// The DynamoDB table, when that is the backend (its name scopes fault rules).
    pub fn table(&self) -> Option<&str> {
        self.dynamo.as_ref().map(|d| d.table())
    }

    /// Makes store writes fail for a while, as a transient outage would: on DynamoDB every
    /// transaction answers `InternalServerError` (reads still work); on the embedded store
    /// every call fails.
    /// The drop check is off only while the outage lasts: a test that ends it is checked.
    pub async fn store_outage(&self, on: bool) {
        self.in_outage
            .store(on, std::sync::atomic::Ordering::SeqCst);
        match (&self.runtime.embedded, self.table()) {
            (Some(embedded), _) => embedded.set_failing(on),
            (None, Some(table)) if on => {
                faults::set(
                    table,
                    serde_json::json!({"fail_ops": ["TransactWriteItems"]}),
                )
                .await
            }
            (None, Some(table)) => faults::clear(table).await,
            (None, None) => unreachable!("one backend or the other"),
        }
    }

    /// Makes the delivery queue refuse messages whose body contains `needle`, as SQS refuses
    /// one it cannot take (`None`: accepts all again).
    pub async fn refuse_queue_bodies_containing(&self, needle: Option<&str>) {
        match (&self.runtime.queue, self.table()) {
            (hosting_runtime::LocalQueue::Embedded(queue), _) => {
                queue.refuse_bodies_containing(needle)
            }
            (_, Some(table)) => match needle {
                Some(needle) => {
                    faults::set(
                        table,
                        serde_json::json!({"refuse_bodies_containing": needle}),
                    )
                    .await
                }
                None => faults::clear(table).await,
            },
            (_, None) => unreachable!("SQS runs with DynamoDB"),
        }
    }

    pub async fn dead_letters(&self) -> Vec<hosting_domain::ports::DeadLetter> {
        backend::dead_letters(&self.runtime).await
    }

    /// Waits until something is dead-lettered (panics after `limit`).
    pub async fn wait_for_dead_letters(
        &self,
        limit: std::time::Duration,
    ) -> Vec<hosting_domain::ports::DeadLetter> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let dead = self.dead_letters().await;
            if !dead.is_empty() {
                return dead;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "nothing was dead-lettered"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Adds a live key of `brand_id` holding only `scopes`, as an operator would.
    pub async fn add_live_key(
        &self,
        raw_key: &str,
        brand_id: &str,
        scopes: &[hosting_domain::Scope],
    ) {
        let key = hosting_domain::ApiKey {
            key_hash: hosting_domain::account::hash_key(raw_key),
            brand_id: brand_id.to_owned(),
            environment: hosting_domain::KeyEnvironment::Live,
            scopes: scopes.to_vec(),
            revoked: false,
            expires_at: None,
        };
        self.runtime.app.store.put_api_key(&key).await.unwrap();
    }

    /// Changes a stored key in place (revocation, expiry), as an operator would.
    pub async fn update_key(
        &self,
        raw_key: &str,
        change: impl FnOnce(&mut hosting_domain::ApiKey),
    ) {
        let store = &self.runtime.app.store;
        let hash = hosting_domain::account::hash_key(raw_key);
        let mut key = store
            .find_api_key(&hash)
            .await
            .unwrap()
            .expect("a seeded key");
        change(&mut key);
        store.put_api_key(&key).await.unwrap();
    }

    /// The in-process timers (the suite drives them with its clock on every backend).
    pub fn timers(&self) -> &hosting_embedded::EmbeddedTimers {
        self.runtime.timers.as_ref().expect("in-process timers")
    }
}
