//! On DynamoDB a 30-day call reads a bounded number of items, however many streams its window holds.

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use super::{ended_at, ids};
use crate::common::*;

/// Items each DynamoDB request asks for, counted by an SDK interceptor from the request: a
/// `GetItem` one, a `BatchGetItem` or `TransactGetItems` its keys; any other read (`Query`,
/// `Scan`) is recorded by name.
#[derive(Debug, Clone, Default)]
struct ItemsRead(std::sync::Arc<std::sync::Mutex<Vec<(String, usize)>>>);

impl aws_sdk_dynamodb::config::Intercept for ItemsRead {
    fn name(&self) -> &'static str {
        "ItemsRead"
    }

    fn read_before_transmit(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        _: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (operation, body) = crate::common::store_log::operation_and_body(context);
        let items = match operation.as_str() {
            "GetItem" => 1,
            "TransactGetItems" => body["TransactItems"].as_array().map_or(0, Vec::len),
            "BatchGetItem" => body["RequestItems"].as_object().map_or(0, |tables| {
                tables
                    .values()
                    .map(|t| t["Keys"].as_array().map_or(0, Vec::len))
                    .sum()
            }),
            _ => 0,
        };
        self.0.lock().unwrap().push((operation, items));
        Ok(())
    }
}

/// A 30-day call reads the aggregates, the listed streams and a constant: the same with 2,000
/// streams in the window as with 200, where reading the window would read them all.
#[tokio::test]
#[ignore = "needs DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_30_day_call_reads_a_bounded_number_of_items() {
    use hosting_runtime::{LocalQueue, Parts, Runtime};
    let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
    let recorder = ItemsRead::default();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .interceptor(recorder.clone())
            .build(),
    );
    let mut reads = Vec::new();
    for (brand, key, window) in [
        ("brand_a", Keys::test_a(), 200u32),
        ("brand_b", Keys::test_b(), 2_000),
    ] {
        let store = hosting_aws::dynamodb::DynamoStore::new(
            client.clone(),
            format!("items-{}", uuid::Uuid::new_v4().simple()),
        );
        store.create_table().await.unwrap();
        let config = hosting_support::config::Config::from_lookup(
            hosting_support::config::StoreKind::Embedded,
            |_| None,
        )
        .unwrap();
        let runtime = Runtime::assemble(
            config,
            std::sync::Arc::new(hosting_domain::clock::SystemClock),
            None,
            Parts {
                store: std::sync::Arc::new(store),
                embedded: None,
                queue: LocalQueue::Embedded(hosting_embedded::EmbeddedQueue::new()),
                clip_queue: None,
                scheduler: None,
                recordings: None,
                vault: None,
            },
        );
        // The window's streams, one every 20 minutes back from now, and history before it.
        let now = Utc::now();
        let mut seed = base_seed(now);
        seed["streams"] = (0..window + 50)
            .map(|i| {
                let created = now
                    - Duration::minutes(20 * i64::from(i) + 1)
                    - if i >= window {
                        Duration::days(31)
                    } else {
                        Duration::zero()
                    };
                let mut stream = ended_at(
                    &format!("e0000000-0000-4000-8000-{i:012}"),
                    created,
                    3,
                    ["kick", "tiktok"][i as usize % 2],
                );
                stream["brand_id"] = json!(brand);
                stream
            })
            .collect();
        hosting_app::seed::Seed::from_json(&seed.to_string())
            .unwrap()
            .load(&*runtime.app.store)
            .await
            .unwrap();
        let service = local_api::service(runtime.app.clone());
        let get = || {
            let service = service.clone();
            let key = key.clone();
            async move {
                use tower::ServiceExt;
                let request = axum::http::Request::builder()
                    .uri("/api/v1/analytics?period=30d")
                    .header("authorization", format!("Bearer {key}"))
                    .body(axum::body::Body::empty())
                    .unwrap();
                let response = service.oneshot(request).await.unwrap();
                assert_eq!(response.status().as_u16(), 200);
                let bytes = http_body_util::BodyExt::collect(response.into_body())
                    .await
                    .unwrap()
                    .to_bytes();
                serde_json::from_slice::<Value>(&bytes).unwrap()
            }
        };
        // A warm instance: its key is cached.
        get().await;
        recorder.0.lock().unwrap().clear();
        let b = get().await;
        let requests = std::mem::take(&mut *recorder.0.lock().unwrap());
        assert_eq!(b["total_streams"], window);
        assert_eq!(b["total_viewers"], 3 * window);
        assert_eq!(b["total_minutes"], window);
        assert_eq!(
            b["by_platform"],
            json!({"kick": window / 2, "tiktok": window / 2})
        );
        assert_eq!(ids(&b).len(), window.min(1000) as usize);
        for (operation, _) in &requests {
            assert!(
                ["GetItem", "BatchGetItem", "TransactGetItems", "UpdateItem"]
                    .contains(&operation.as_str()),
                "{operation}: {requests:?}"
            );
        }
        let items: usize = requests.iter().map(|(_, items)| items).sum();
        // The listed streams, the brand's counters, the hour of `since`, 32 days, the stream
        // of the partial minute, and the key and brand if the instance's cache expired.
        assert!(
            items <= window.min(1000) as usize + 40,
            "{window} streams in the window: {items} items read ({requests:?})"
        );
        reads.push(items);
    }
    // Beyond the 1,000 listed, nothing grows with the window.
    assert!(reads[1] <= reads[0] + 800 + 5, "{reads:?}");
}
