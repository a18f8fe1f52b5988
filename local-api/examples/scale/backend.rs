//! The store a size is measured on: a brand's history written into a fresh embedded store or
//! DynamoDB table, and the items DynamoDB reads for a request.

use super::*;

/// Items read from DynamoDB: `ScannedCount` of queries, the items of gets, batch gets and
/// transactional gets.
#[derive(Debug, Clone, Default)]
pub struct ItemsRead(pub Arc<AtomicU64>);

impl Intercept for ItemsRead {
    fn name(&self) -> &'static str {
        "ItemsRead"
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let Some(body) = context.response().body().bytes() else {
            return Ok(());
        };
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
            return Ok(());
        };
        let read = if let Some(scanned) = json["ScannedCount"].as_u64() {
            scanned
        } else if let Some(responses) = json["Responses"].as_object() {
            responses
                .values()
                .filter_map(|items| items.as_array())
                .map(|items| items.len() as u64)
                .sum()
        } else if let Some(responses) = json["Responses"].as_array() {
            responses
                .iter()
                .filter(|response| response.get("Item").is_some())
                .count() as u64
        } else {
            u64::from(json.get("Item").is_some())
        };
        self.0.fetch_add(read, Ordering::Relaxed);
        Ok(())
    }
}

/// `size` streams, the newest `in_window` of them spread over the last 30 days.
pub fn history(size: usize, in_window: usize, now: chrono::DateTime<Utc>) -> Vec<Stream> {
    // From an hour ago to half a day before the window starts.
    let spacing_ms = (Duration::days(30) - Duration::hours(13)).num_milliseconds()
        / i64::try_from(in_window.max(1)).unwrap_or(i64::MAX);
    (0..size)
        .map(|i| {
            let created_at = if i < in_window {
                now - Duration::hours(1) - Duration::milliseconds(spacing_ms * i as i64)
            } else {
                now - Duration::days(31) - Duration::minutes(10 * (i - in_window) as i64)
            };
            let status = if i % 5 == 3 {
                StreamStatus::Error
            } else {
                StreamStatus::Ended
            };
            let id = Uuid::new_v4();
            Stream {
                id,
                brand_id: BRAND.into(),
                status,
                platform: Some(["tiktok", "instagram", "youtube"][i % 3].into()),
                vertical: "live-commerce".into(),
                creator_id: Some(CREATOR.into()),
                product_name: format!("Product {i}"),
                source: "api".into(),
                room_name: Some(Stream::room_name_for(id)),
                viewer_count: (i % 50) as u64,
                test: false,
                created_at,
                started_at: Some(created_at + Duration::minutes(1)),
                ended_at: Some(created_at + Duration::minutes(31)),
                duration_minutes: Some(30),
                script: None,
                end_reason: None,
                dispatches: 0,
                next_dispatch_at: None,
                agents: Vec::new(),
                host_check_at: None,
                host_lost_at: None,
                reconnect_until: None,
                revision: 0,
                deadline: None,
                destinations: Vec::new(),
                egress: Default::default(),
                stream_keys: Default::default(),
            }
        })
        .collect()
}

/// A fresh runtime on `backend`; on DynamoDB, a table of its own for this size.
pub async fn runtime(
    backend: &str,
    size: usize,
    items_read: &ItemsRead,
    clock: ManualClock,
) -> Runtime {
    let config = Config::from_lookup(StoreKind::Embedded, |_| None).expect("config");
    let clock: Arc<dyn Clock> = Arc::new(clock);
    match backend {
        "embedded" | "memory" => Runtime::embedded(config, clock, None),
        "dynamodb" => {
            let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
            let client = aws_sdk_dynamodb::Client::from_conf(
                aws_sdk_dynamodb::config::Builder::from(&sdk)
                    .interceptor(items_read.clone())
                    .build(),
            );
            let table = format!("scale-{size}-{}", Uuid::new_v4().simple());
            let store = DynamoStore::new(client, table);
            store.create_table().await.expect("create table");
            let parts = Parts {
                store: Arc::new(store),
                embedded: None,
                queue: LocalQueue::Embedded(EmbeddedQueue::new()),
                clip_queue: None,
                scheduler: None,
                recordings: None,
                vault: None,
            };
            Runtime::assemble(config, clock, None, parts)
        }
        other => panic!("--backend {other}: expected embedded or dynamodb"),
    }
}

pub async fn seed(runtime: &Runtime, streams: &[Stream]) {
    let store = &runtime.app.store;
    store
        .put_brand(&Brand::new(BRAND, "Scale", Plan::Growth, "live-commerce"))
        .await
        .unwrap();
    store
        .put_api_key(&ApiKey {
            key_hash: hash_key(KEY),
            brand_id: BRAND.into(),
            environment: KeyEnvironment::Test,
            scopes: vec![Scope::StreamsRead, Scope::AnalyticsRead],
            revoked: false,
            expires_at: None,
        })
        .await
        .unwrap();
    store
        .put_creator(&Creator {
            id: CREATOR.into(),
            name: "Bench".into(),
            status: Some("active".into()),
            languages: vec!["en".into()],
            style: None,
            personality: None,
            vibe: None,
            consent: Some(true),
            photo: None,
        })
        .await
        .unwrap();
    // Oldest first, as history accumulates: each chunk is then newer than the last.
    let mut oldest_first = streams.to_vec();
    oldest_first.sort_by_key(|s| (s.created_at, s.id));
    for chunk in oldest_first.chunks(5_000) {
        store.put_streams(chunk).await.unwrap();
    }
}
