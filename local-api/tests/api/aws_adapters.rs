//! What only the AWS adapters do, against the emulator (scripts/test.sh runs these in its
//! DynamoDB stage): Scheduler timers created with their retry policy and dead-letter queue,
//! at the whole minute at least 60 s before their moment, moved, deleted and fired; a timer
//! due soon handed to the timer queue, and a queue that fails reported; SQS delays beyond 15
//! minutes carried hop by hop; bodies SQS accepts.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use hosting_app::seed::Seed;
use hosting_aws::scheduler::{SchedulerTimers, schedule_name};
use hosting_aws::sqs::{QueuedDelivery, SqsQueue};
use hosting_domain::ports::{Delivery, Timer, Timers};
use hosting_domain::{EventType, TimerKind};
use serde_json::json;

use crate::common::*;

async fn sdk() -> aws_config::SdkConfig {
    hosting_aws::sdk_config().await.expect("SDK configuration")
}

const DLQ: &str = "arn:aws:sqs:us-east-1:123456789012:stack-timers-dlq";

#[tokio::test]
#[ignore = "needs Scheduler and DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_scheduler_timers_are_created_moved_deleted_and_fired() {
    let sdk = sdk().await;
    let client = aws_sdk_scheduler::Client::new(&sdk);
    let group = format!("timers-{}", uuid::Uuid::new_v4().simple());
    client
        .create_schedule_group()
        .name(&group)
        .send()
        .await
        .unwrap();
    let target = "arn:aws:lambda:us-east-1:123456789012:function:stack-timers";
    let role = "arn:aws:iam::123456789012:role/stack-scheduler";
    let api = TestApp::new().await;
    let timers = SchedulerTimers::new(
        client.clone(),
        group.clone(),
        target.into(),
        role.into(),
        DLQ.into(),
        crate::common::backend::timer_queue(api.runtime.app.clock.clone()).await,
    );

    let id = api.start_test_stream(&Keys::test_a()).await;
    let stream_id: uuid::Uuid = id.parse().unwrap();
    let due_at = api.now() + chrono::Duration::minutes(30);
    let timer = Timer {
        stream_id,
        kind: TimerKind::DurationEnd,
        due_at,
    };
    // Scheduled later first, then moved to its due time: scheduling again replaces it.
    timers
        .schedule(Timer {
            due_at: due_at + chrono::Duration::minutes(5),
            ..timer
        })
        .await
        .unwrap();
    timers.schedule(timer).await.unwrap();

    let name = schedule_name(stream_id, TimerKind::DurationEnd);
    assert!(name.len() <= 64);
    let schedule = client
        .get_schedule()
        .name(&name)
        .group_name(&group)
        .send()
        .await
        .unwrap();
    // Due at 12:30:30; `at()` runs anywhere in its minute, so the whole minute at least 60 s
    // before, whose run hands the timer to the queue for the rest.
    assert_eq!(
        schedule.schedule_expression(),
        Some("at(2026-03-02T12:29:00)")
    );
    assert_eq!(schedule.schedule_expression_timezone(), Some("UTC"));
    assert_eq!(
        schedule.action_after_completion().map(|a| a.as_str()),
        Some("DELETE")
    );
    let target = schedule.target().unwrap();
    assert_eq!(
        target.arn(),
        "arn:aws:lambda:us-east-1:123456789012:function:stack-timers"
    );
    assert_eq!(target.role_arn(), role);
    // An invocation Scheduler cannot make is retried, then kept in the dead-letter queue.
    let retry = target.retry_policy().expect("a retry policy");
    assert_eq!(retry.maximum_event_age_in_seconds(), Some(86_400));
    assert_eq!(retry.maximum_retry_attempts(), Some(185));
    assert_eq!(target.dead_letter_config().and_then(|d| d.arn()), Some(DLQ));

    // Fire it as Scheduler would: the timers function with the schedule's input.
    let fired_timer: timers::Invocation = serde_json::from_str(target.input().unwrap()).unwrap();
    assert!(matches!(fired_timer, timers::Invocation::Timer(t) if t == timer));
    api.advance(chrono::Duration::minutes(30));
    let fired = timers::handle(&api.runtime.app, fired_timer).await.unwrap();
    assert_eq!(fired.changed, 1);
    assert_eq!(api.events_of(&id).await, ["stream.started", "stream.ended"]);

    // Cancelling deletes it; cancelling again is harmless.
    timers
        .cancel(stream_id, TimerKind::DurationEnd)
        .await
        .unwrap();
    let gone = client
        .get_schedule()
        .name(&name)
        .group_name(&group)
        .send()
        .await;
    assert!(gone.is_err_and(|e| {
        e.as_service_error()
            .is_some_and(|e| e.is_resource_not_found_exception())
    }));
    timers
        .cancel(stream_id, TimerKind::DurationEnd)
        .await
        .unwrap();
}

async fn queue(sdk: &aws_config::SdkConfig) -> SqsQueue {
    let client = aws_sdk_sqs::Client::new(sdk);
    let name = format!("q-{}", uuid::Uuid::new_v4().simple());
    let mut urls = Vec::new();
    for suffix in ["", "-dlq"] {
        urls.push(
            client
                .create_queue()
                .queue_name(format!("{name}{suffix}"))
                .send()
                .await
                .unwrap()
                .queue_url
                .unwrap(),
        );
    }
    SqsQueue::new(client, urls[0].clone(), urls[1].clone())
}

/// Enqueues `delivery` for now and receives the raw message body SQS holds.
async fn enqueue_and_receive(queue: &SqsQueue, delivery: Delivery) -> String {
    hosting_domain::ports::DeliveryQueue::enqueue(queue, delivery, Duration::ZERO)
        .await
        .unwrap();
    let out = queue
        .client()
        .receive_message()
        .queue_url(queue.queue_url())
        .send()
        .await
        .unwrap();
    out.messages()[0].body().unwrap().to_owned()
}

async fn delayed_count(queue: &SqsQueue) -> (String, String) {
    let out = queue
        .client()
        .get_queue_attributes()
        .queue_url(queue.queue_url())
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let attributes = out.attributes.unwrap_or_default();
    let get = |name: aws_sdk_sqs::types::QueueAttributeName| {
        attributes.get(&name).cloned().unwrap_or_default()
    };
    (
        get(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages),
        get(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesDelayed),
    )
}

fn delivery() -> Delivery {
    Delivery {
        event_id: "evt_00000000000000000000000000000001".into(),
        event_type: EventType::StreamEnded,
        brand_id: "brand_a".into(),
        webhook_id: "7f1c0000-0000-4000-8000-00000000000a".parse().unwrap(),
        attempt: 5,
        body: json!({"id": "evt_00000000000000000000000000000001"}).to_string(),
    }
}

#[tokio::test]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_delays_beyond_15_minutes_travel_in_the_message() {
    let sdk = sdk().await;
    let queue = queue(&sdk).await;
    // A retry due in 8 hours: SQS holds it for 15 minutes, the message carries the rest.
    hosting_domain::ports::DeliveryQueue::enqueue(
        &queue,
        delivery(),
        Duration::from_secs(8 * 3600),
    )
    .await
    .unwrap();
    assert_eq!(delayed_count(&queue).await, ("0".into(), "1".into()));

    // A hop that arrives early goes back for the time that remains.
    let early = QueuedDelivery {
        delivery: delivery(),
        not_before: Utc::now() + chrono::Duration::hours(7),
    };
    let remaining = queue
        .defer_if_early(&early, Utc::now())
        .await
        .unwrap()
        .unwrap();
    assert!(remaining > Duration::from_secs(6 * 3600));
    assert_eq!(delayed_count(&queue).await, ("0".into(), "2".into()));
    // A due one is not deferred.
    let due = QueuedDelivery {
        delivery: delivery(),
        not_before: Utc::now(),
    };
    assert_eq!(queue.defer_if_early(&due, Utc::now()).await.unwrap(), None);
    assert_eq!(delayed_count(&queue).await, ("0".into(), "2".into()));
}

#[tokio::test]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_short_delays_are_sqs_delays_and_dead_letters_are_intact() {
    let sdk = sdk().await;
    let queue = queue(&sdk).await;
    let raw = enqueue_and_receive(&queue, delivery()).await;
    let message: QueuedDelivery = serde_json::from_str(&raw).unwrap();
    assert_eq!(message.delivery, delivery());

    let dead = hosting_domain::ports::DeadLetter {
        delivery: delivery(),
        last_error: "receiver answered 500".into(),
        failed_at: Utc::now(),
    };
    hosting_domain::ports::DeliveryQueue::dead_letter(&queue, dead.clone())
        .await
        .unwrap();
    let out = queue
        .client()
        .receive_message()
        .queue_url(queue.dlq_url())
        .send()
        .await
        .unwrap();
    let stored: hosting_domain::ports::DeadLetter =
        serde_json::from_str(out.messages()[0].body().unwrap()).unwrap();
    assert_eq!(stored, dead);
}

#[tokio::test]
#[ignore = "needs DynamoDB and SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_the_runtime_uses_scheduler_and_sqs_from_configuration() {
    let sdk = sdk().await;
    let queue = queue(&sdk).await;
    let group = format!("timers-{}", uuid::Uuid::new_v4().simple());
    aws_sdk_scheduler::Client::new(&sdk)
        .create_schedule_group()
        .name(&group)
        .send()
        .await
        .unwrap();
    let table = format!("cfg-{}", uuid::Uuid::new_v4().simple());
    let vars = [
        ("STORE", "dynamodb"),
        ("TABLE_NAME", table.as_str()),
        ("DELIVERY_QUEUE_URL", queue.queue_url()),
        ("DELIVERY_DLQ_URL", queue.dlq_url()),
        ("SCHEDULER_GROUP", group.as_str()),
        (
            "SCHEDULER_TARGET_ARN",
            "arn:aws:lambda:us-east-1:123456789012:function:t",
        ),
        ("SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/r"),
        ("SCHEDULER_DLQ_ARN", DLQ),
        (
            "TIMER_QUEUE_URL",
            "https://sqs.us-east-1.amazonaws.com/123456789012/timers",
        ),
    ];
    let config = hosting_support::config::Config::from_lookup(
        hosting_support::config::StoreKind::Embedded,
        |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        },
    )
    .unwrap();
    let runtime =
        hosting_runtime::Runtime::from_config(config, Arc::new(hosting_domain::clock::SystemClock))
            .await
            .unwrap();
    assert!(runtime.timers.is_none(), "timers run on Scheduler");
    assert!(
        runtime.scheduler.is_some(),
        "the local server runs its schedules"
    );
    assert!(matches!(runtime.queue, hosting_runtime::LocalQueue::Sqs(_)));
    hosting_aws::dynamodb::DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table)
        .create_table()
        .await
        .unwrap();
    Seed::from_json(&base_seed(Utc::now()).to_string())
        .unwrap()
        .load(&*runtime.app.store)
        .await
        .unwrap();
    // A test stream's duration end lands in Scheduler.
    let service = local_api::service(runtime.app.clone());
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/api/v1/streams")
        .header("authorization", format!("Bearer {}", Keys::test_a()))
        .body(axum::body::Body::from(
            json!({"creator_id": CREATOR_AVA, "product_name": "P", "platform": "kick", "duration_minutes": 5}).to_string(),
        ))
        .unwrap();
    let response = tower::ServiceExt::oneshot(service, request).await.unwrap();
    assert_eq!(response.status().as_u16(), 201);
    let listed = aws_sdk_scheduler::Client::new(&sdk)
        .list_schedules()
        .group_name(&group)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.schedules().len(), 1);
    assert!(
        listed.schedules()[0]
            .name()
            .unwrap()
            .starts_with("duration_end-")
    );
}

#[tokio::test]
#[ignore = "needs SQS (moto, behind the fault proxy's character rule): scripts/test.sh runs it"]
async fn dynamodb_only_bodies_sqs_refuses_are_escaped_and_read_back_exactly() {
    let sdk = sdk().await;
    let queue = queue(&sdk).await;
    let body = json!({"product_name": "Glow \u{FFFF} Serum \u{1F600}"}).to_string();
    let with_odd_text = Delivery {
        body: body.clone(),
        ..delivery()
    };
    let raw = enqueue_and_receive(&queue, with_odd_text).await;
    assert!(raw.is_ascii(), "{raw}");
    let message: QueuedDelivery = serde_json::from_str(&raw).unwrap();
    assert_eq!(
        message.delivery.body, body,
        "the signed body, byte for byte"
    );
}

#[tokio::test]
#[ignore = "needs DynamoDB (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_the_table_is_created_and_waited_for_before_its_ttl_is_set() {
    let sdk = sdk().await;
    let table = format!("create-{}", uuid::Uuid::new_v4().simple());
    // As DynamoDB does: CREATING for a while, and TTL refused until it is ACTIVE.
    crate::common::faults::set(&table, json!({"table_creating_ms": 1500})).await;
    let store =
        hosting_aws::dynamodb::DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table.clone());
    let started = std::time::Instant::now();
    store.create_table().await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "waited for ACTIVE"
    );
    let ttl = store
        .client()
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let ttl = ttl.time_to_live_description().unwrap();
    assert_eq!(ttl.attribute_name(), Some("ttl"));
    assert_eq!(
        ttl.time_to_live_status().map(|s| s.as_str()),
        Some("ENABLED")
    );
    let stats = crate::common::faults::stats(&table).await;
    assert!(
        stats["injected"]["table_creating_ms"].as_u64() >= Some(1),
        "{stats}"
    );
    crate::common::faults::clear(&table).await;
}

/// A timer due within two minutes goes to the timer queue at once, delayed by what remains;
/// when SQS fails it, the caller hears of it (and leaves the stream to the sweep), rather
/// than the timer vanishing unnoticed.
#[tokio::test]
#[ignore = "needs Scheduler and SQS (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_a_timer_due_soon_is_handed_to_the_queue_and_a_failed_send_is_reported() {
    let sdk = sdk().await;
    let api = TestApp::new().await;
    let queue = backend::timer_queue(api.runtime.app.clock.clone()).await;
    let timers = SchedulerTimers::new(
        aws_sdk_scheduler::Client::new(&sdk),
        format!("timers-{}", uuid::Uuid::new_v4().simple()),
        "arn:aws:lambda:us-east-1:123456789012:function:stack-timers".into(),
        "arn:aws:iam::123456789012:role/stack-scheduler".into(),
        DLQ.into(),
        queue.clone(),
    );
    let timer = Timer {
        stream_id: uuid::Uuid::new_v4(),
        kind: TimerKind::DurationEnd,
        // The whole minute 60 s before it has begun: no schedule, the queue at once.
        due_at: api.now() + chrono::Duration::seconds(60),
    };
    assert!(hosting_aws::scheduler::schedule_minute(timer.due_at) <= api.now());
    let scope = queue.url().rsplit('/').next().unwrap().to_owned();
    faults::set(&scope, json!({"sqs_500": 1.0})).await;
    let refused = timers.schedule(timer).await;
    assert!(refused.is_err(), "a send SQS failed is an error");
    assert!(faults::injected(&faults::stats(&scope).await) > 0);
    faults::clear(&scope).await;

    timers.schedule(timer).await.unwrap();
    let sqs = queue.client();
    let attributes = sqs
        .get_queue_attributes()
        .queue_url(queue.url())
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesDelayed)
        .send()
        .await
        .unwrap();
    let delayed = attributes
        .attributes()
        .and_then(|a| {
            a.get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesDelayed)
        })
        .cloned();
    assert_eq!(
        delayed.as_deref(),
        Some("1"),
        "one message, delayed until it is due"
    );
}
