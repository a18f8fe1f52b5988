//! The backend the suite runs on: `TEST_BACKEND=embedded` (the default) or `dynamodb` (DynamoDB
//! and SQS at `AWS_ENDPOINT_URL`, e.g. moto server). Each test gets its own table and queues.

use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use hosting_aws::dynamodb::{DynamoStore, event_from_item};
use hosting_aws::s3::S3Recordings;
use hosting_aws::sqs::SqsQueue;
use hosting_domain::StreamEvent;
use hosting_domain::ports::DeadLetter;
use hosting_embedded::{EmbeddedQueue, EmbeddedStore};
use hosting_runtime::{LocalQueue, Parts, Runtime};

use super::store_log::{QueueLog, Recorder, StoreLog};

pub fn is_dynamodb() -> bool {
    match std::env::var("TEST_BACKEND").as_deref() {
        Ok("dynamodb") => true,
        Ok("embedded" | "memory") | Err(_) => false,
        Ok(other) => panic!("TEST_BACKEND={other}: expected embedded or dynamodb"),
    }
}

async fn sdk() -> aws_config::SdkConfig {
    assert!(
        std::env::var("AWS_ENDPOINT_URL").is_ok(),
        "TEST_BACKEND=dynamodb needs AWS_ENDPOINT_URL (scripts/test.sh starts moto server)"
    );
    hosting_aws::sdk_config().await.expect("SDK configuration")
}

/// The recordings bucket of the DynamoDB/SQS backend, shared by every test: keys hold a stream's
/// id, so tests never share an object.
pub const TEST_RECORDINGS_BUCKET: &str = "hosting-test-recordings";

/// The shared recordings bucket, made on first use.
async fn recordings_bucket(sdk: &aws_config::SdkConfig) -> S3Recordings {
    let s3 = hosting_aws::s3::client(sdk);
    static MADE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    MADE.get_or_init(|| async {
        // Made already by an earlier run against the same server: as good.
        let _ = s3
            .create_bucket()
            .bucket(TEST_RECORDINGS_BUCKET)
            .send()
            .await;
    })
    .await;
    S3Recordings::new(s3, TEST_RECORDINGS_BUCKET.to_owned())
}

/// A recordings bucket of a test's own (one whose requests a fault scope names), made now.
pub async fn own_recordings_bucket(name: &str) -> S3Recordings {
    let s3 = hosting_aws::s3::client(&sdk().await);
    s3.create_bucket()
        .bucket(name)
        .send()
        .await
        .expect("create bucket");
    S3Recordings::new(s3, name.to_owned())
}

/// The parts of a fresh backend, and the DynamoDB store when that is the backend.
pub async fn parts() -> (Parts, Option<DynamoStore>) {
    let (parts, dynamo, _, _, _) = parts_logged(None).await;
    (parts, dynamo)
}

/// [`parts`], and the logs of the store, queue and (on DynamoDB) KMS requests made through
/// them; on DynamoDB with a live stream's viewer shards under `viewer_partitions` partition
/// keys when given. On DynamoDB, secrets are sealed with a KMS key of the test's table, made
/// as `admin create-table` makes it.
pub async fn parts_logged(
    viewer_partitions: Option<u32>,
) -> (
    Parts,
    Option<DynamoStore>,
    StoreLog,
    QueueLog,
    Option<Recorder>,
) {
    if !is_dynamodb() {
        let store = EmbeddedStore::new();
        let log = StoreLog::Embedded {
            store: store.clone(),
            seen: Default::default(),
        };
        let queue = EmbeddedQueue::new();
        let parts = Parts {
            store: Arc::new(store.clone()),
            embedded: Some(store),
            queue: LocalQueue::Embedded(queue.clone()),
            clip_queue: None,
            scheduler: None,
            recordings: None,
            vault: None,
        };
        return (parts, None, log, QueueLog::Embedded(queue), None);
    }
    let sdk = sdk().await;
    let name = format!("test-{}", uuid::Uuid::new_v4().simple());
    let recorder = Recorder::default();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .interceptor(recorder.clone())
            .build(),
    );
    let mut store = DynamoStore::new(client, name.clone());
    if let Some(partitions) = viewer_partitions {
        store = store.with_viewer_partitions(partitions);
    }
    store.create_table().await.expect("create table");
    let queue_recorder = Recorder::default();
    let key_recorder = Recorder::default();
    let sqs = aws_sdk_sqs::Client::from_conf(
        aws_sdk_sqs::config::Builder::from(&sdk)
            .interceptor(queue_recorder.clone())
            .build(),
    );
    let mut urls = Vec::new();
    for queue in [
        format!("{name}-delivery"),
        format!("{name}-dlq"),
        format!("{name}-clips"),
    ] {
        let out = sqs
            .create_queue()
            .queue_name(queue)
            .send()
            .await
            .expect("create queue");
        urls.push(out.queue_url.unwrap());
    }
    let parts = Parts {
        store: Arc::new(store.clone()),
        embedded: None,
        queue: LocalQueue::Sqs(SqsQueue::new(sqs.clone(), urls[0].clone(), urls[1].clone())),
        clip_queue: Some(hosting_aws::sqs::SqsClipQueue::new(sqs, urls[2].clone())),
        scheduler: None,
        recordings: Some(Arc::new(recordings_bucket(&sdk).await)),
        vault: Some(Arc::new(kms_vault(&sdk, &name, key_recorder.clone()).await)),
    };
    (
        parts,
        Some(store),
        StoreLog::Dynamo(recorder),
        QueueLog::Sqs(queue_recorder),
        Some(key_recorder),
    )
}

/// The tables' secrets key of the DynamoDB backend, shared by every test (a key per table would
/// be four more KMS requests per test on the one moto server): made once, as `admin
/// create-table` makes a table's, under the alias of a table named `hosting-test`. Each
/// table's data keys still carry its own name in their encryption context.
pub const TEST_SECRETS_KEY: &str = "alias/hosting-test-secrets";

/// The vault of `table`'s secrets under [`TEST_SECRETS_KEY`], the client's requests recorded
/// by `recorder`.
pub async fn kms_vault(
    sdk: &aws_config::SdkConfig,
    table: &str,
    recorder: Recorder,
) -> hosting_aws::kms::KmsKeyVault {
    let client = aws_sdk_kms::Client::from_conf(
        aws_sdk_kms::config::Builder::from(sdk)
            .interceptor(recorder)
            .build(),
    );
    static MADE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    MADE.get_or_init(|| async {
        let plain = hosting_aws::kms::client(sdk);
        hosting_aws::kms::ensure_table_key(&plain, "hosting-test")
            .await
            .expect("the tests' secrets key");
    })
    .await;
    hosting_aws::kms::KmsKeyVault::new(client, TEST_SECRETS_KEY.to_owned(), table.to_owned())
}

pub async fn emitted_events(runtime: &Runtime, dynamo: Option<&DynamoStore>) -> Vec<StreamEvent> {
    if let Some(embedded) = &runtime.embedded {
        return embedded.emitted_events();
    }
    scan_events(dynamo.expect("dynamodb backend")).await
}

/// Every event the table's outbox holds, in order. Tests may scan their own small table; the
/// product never does.
pub async fn scan_events(store: &DynamoStore) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    let mut start = None;
    loop {
        // The suite's own read, not the product's: a page the fault proxy throttles past the
        // SDK's attempts is asked again.
        let mut attempts = 0;
        let out = loop {
            let page = store
                .client()
                .scan()
                .table_name(store.table())
                .filter_expression("begins_with(pk, :event)")
                .expression_attribute_values(":event", AttributeValue::S("EVENT#".into()))
                .consistent_read(true)
                .set_exclusive_start_key(start.clone())
                .send()
                .await;
            match page {
                Ok(out) => break out,
                Err(error) if attempts < 20 => {
                    attempts += 1;
                    eprintln!("-- the events' scan asked again: {error}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                Err(error) => panic!("the events' scan: {error:?}"),
            }
        };
        for item in out.items() {
            events.push(event_from_item(item).unwrap());
        }
        start = out.last_evaluated_key;
        if start.is_none() {
            break;
        }
    }
    // A stream's start precedes its end even within one instant.
    let rank = |e: &StreamEvent| (e.event_type != hosting_domain::EventType::StreamStarted) as u8;
    events.sort_by_key(|e| (e.created_at, rank(e)));
    events
}

pub async fn active_streams(
    runtime: &Runtime,
    dynamo: Option<&DynamoStore>,
    brand_id: &str,
) -> u32 {
    if let Some(embedded) = &runtime.embedded {
        return embedded.active_streams(brand_id);
    }
    let item = dynamo
        .expect("dynamodb backend")
        .brand_counters(brand_id)
        .await
        .unwrap();
    match item.get("active") {
        Some(AttributeValue::N(n)) => n.parse().unwrap(),
        _ => 0,
    }
}

pub async fn set_failing(runtime: &Runtime, dynamo: Option<&DynamoStore>) {
    match &runtime.embedded {
        Some(embedded) => embedded.set_failing(true),
        // Every request against a deleted table fails.
        None => dynamo
            .expect("dynamodb backend")
            .delete_table()
            .await
            .unwrap(),
    }
}

pub async fn dead_letters(runtime: &Runtime) -> Vec<DeadLetter> {
    match &runtime.queue {
        LocalQueue::Embedded(queue) => queue.dead_letters(),
        LocalQueue::Sqs(queue) => {
            let out = queue
                .client()
                .receive_message()
                .queue_url(queue.dlq_url())
                .max_number_of_messages(10)
                // Peek: leave them in the queue.
                .visibility_timeout(0)
                .send()
                .await
                .unwrap();
            out.messages()
                .iter()
                .map(|m| serde_json::from_str(m.body().unwrap()).unwrap())
                .collect()
        }
    }
}

/// A timer queue of its own on the test's SQS (moto), for Scheduler timers' hand-overs.
pub async fn timer_queue(
    clock: Arc<dyn hosting_domain::clock::Clock>,
) -> hosting_aws::scheduler::TimerQueue {
    let sqs = aws_sdk_sqs::Client::new(&sdk().await);
    let url = sqs
        .create_queue()
        .queue_name(format!("timers-{}", uuid::Uuid::new_v4().simple()))
        .send()
        .await
        .expect("create the timer queue")
        .queue_url
        .unwrap();
    hosting_aws::scheduler::TimerQueue::new(sqs, url, clock)
}
