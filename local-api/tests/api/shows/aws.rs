//! What only DynamoDB and EventBridge Scheduler do for shows, against the emulator behind the
//! fault proxy (scripts/test.sh runs these in its DynamoDB stage): a show's schedules created
//! at its moments, moved by `PATCH`, deleted by `DELETE`, fired as Scheduler fires them; a
//! Scheduler that fails leaves the show to the sweep; starts racing under DynamoDB's faults
//! still make one stream per show.

use std::sync::Arc;

use ::timers as timers_lambda;
use chrono::Timelike;
use hosting_app::App;
use hosting_app::app::AppParts;
use hosting_app::service::shows;
use hosting_aws::scheduler::{SchedulerTimers, TimerQueue, schedule_name};
use hosting_domain::TimerKind;

use super::service::caller;
use super::*;

pub(super) const LEAD: TimeDelta = TimeDelta::seconds(60);

/// A schedule group of its own, and the test's app with its timers on Scheduler.
async fn on_scheduler(api: &TestApp) -> (App, aws_sdk_scheduler::Client, String) {
    let (app, client, group, _) = on_scheduler_with(api, api.runtime.app.clock.clone()).await;
    (app, client, group)
}

/// [`on_scheduler`] on `clock`, with the timer queue its timers are handed to.
pub(super) async fn on_scheduler_with(
    api: &TestApp,
    clock: Arc<dyn hosting_domain::clock::Clock>,
) -> (App, aws_sdk_scheduler::Client, String, TimerQueue) {
    let sdk = hosting_aws::sdk_config().await.expect("SDK configuration");
    let client = aws_sdk_scheduler::Client::new(&sdk);
    let group = format!("shows-{}", uuid::Uuid::new_v4().simple());
    client
        .create_schedule_group()
        .name(&group)
        .send()
        .await
        .unwrap();
    let queue = backend::timer_queue(clock.clone()).await;
    let timers = SchedulerTimers::new(
        client.clone(),
        group.clone(),
        "arn:aws:lambda:us-east-1:123456789012:function:stack-timers".into(),
        "arn:aws:iam::123456789012:role/stack-scheduler".into(),
        "arn:aws:sqs:us-east-1:123456789012:stack-timers-dlq".into(),
        queue.clone(),
    );
    let app = &api.runtime.app;
    let app = App::new(AppParts {
        config: app.config.clone(),
        clock,
        store: app.store.clone(),
        timers: Arc::new(timers),
        queue: app.queue.clone(),
        clip_queue: app.clip_queue.clone(),
        rooms: app.rooms.clone(),
        recordings: app.recordings.clone(),
        vault: app.vault.clone(),
    });
    (app, client, group, queue)
}

/// The schedule's `at(...)` expression and input, or `None` when there is none.
async fn schedule_of(
    client: &aws_sdk_scheduler::Client,
    group: &str,
    id: &str,
    kind: TimerKind,
) -> Option<(String, String)> {
    let name = schedule_name(uuid_of(id), kind);
    assert!(name.len() <= 64, "{name}");
    match client
        .get_schedule()
        .name(&name)
        .group_name(group)
        .send()
        .await
    {
        Ok(schedule) => Some((
            schedule.schedule_expression().unwrap().to_owned(),
            schedule.target().unwrap().input().unwrap().to_owned(),
        )),
        Err(err)
            if err
                .as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            None
        }
        Err(err) => panic!("{err:?}"),
    }
}

/// `at(...)` of the whole minute at least 60 s before `minutes` from now (Scheduler fires
/// anywhere in a minute; the rest of the way is the timer queue's).
fn at_expression(api: &TestApp, minutes: i64) -> String {
    let due = api.now() + TimeDelta::minutes(minutes) - TimeDelta::minutes(1);
    let rounded = due.with_second(0).unwrap().with_nanosecond(0).unwrap();
    format!("at({})", rounded.format("%Y-%m-%dT%H:%M:%S"))
}

pub(super) fn body_of(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
#[ignore = "needs Scheduler and DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_shows_schedules_are_made_moved_deleted_and_fired() {
    let api = TestApp::new().await;
    let (app, client, group) = on_scheduler(&api).await;
    let caller = caller(&api, &Keys::test_a()).await;
    let body = show_body(
        &api,
        json!({"starts_at": at(&api, 60), "remind_minutes_before": 15}),
    );
    let answer = shows::schedule(&app, &caller, &body_of(body), None, LEAD)
        .await
        .unwrap();
    let id = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let start = schedule_of(&client, &group, &id, TimerKind::ShowStart).await;
    assert_eq!(start.unwrap().0, at_expression(&api, 60));
    let reminder = schedule_of(&client, &group, &id, TimerKind::ShowReminder).await;
    assert_eq!(reminder.unwrap().0, at_expression(&api, 45));

    // Moved by PATCH, its reminder with it.
    shows::change(
        &app,
        &caller,
        &id,
        &body_of(json!({"starts_at": at(&api, 120)})),
        LEAD,
    )
    .await
    .unwrap();
    let (expression, input) = schedule_of(&client, &group, &id, TimerKind::ShowStart)
        .await
        .unwrap();
    assert_eq!(expression, at_expression(&api, 120));
    let reminder = schedule_of(&client, &group, &id, TimerKind::ShowReminder).await;
    assert_eq!(reminder.unwrap().0, at_expression(&api, 105));

    // Fired as Scheduler fires it: the timers function with the schedule's input, twice.
    let invocation = || serde_json::from_str::<timers_lambda::Invocation>(&input).unwrap();
    api.advance(TimeDelta::minutes(121));
    let fired = timers_lambda::handle(&app, invocation()).await.unwrap();
    assert_eq!(fired.changed, 1);
    let again = timers_lambda::handle(&app, invocation()).await.unwrap();
    assert_eq!(again.changed, 0);
    let started = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(started["status"], "started");
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 1);

    // DELETE removes a scheduled show's schedules.
    let body = show_body(
        &api,
        json!({"starts_at": at(&api, 60), "remind_minutes_before": 15}),
    );
    let answer = shows::schedule(&app, &caller, &body_of(body), None, LEAD)
        .await
        .unwrap();
    let other = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        schedule_of(&client, &group, &other, TimerKind::ShowStart)
            .await
            .is_some()
    );
    shows::cancel(&app, &caller, &other).await.unwrap();
    for kind in [TimerKind::ShowStart, TimerKind::ShowReminder] {
        assert!(schedule_of(&client, &group, &other, kind).await.is_none());
    }
}

#[tokio::test]
#[ignore = "needs Scheduler and DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_a_failing_scheduler_leaves_the_show_to_the_sweep() {
    let api = TestApp::new().await;
    let (app, client, group) = on_scheduler(&api).await;
    faults::set(&group, json!({"fail_ops": ["CreateSchedule"]})).await;
    let caller = caller(&api, &Keys::test_a()).await;
    let body = show_body(&api, json!({"starts_at": at(&api, 5)}));
    let answer = shows::schedule(&app, &caller, &body_of(body), None, LEAD)
        .await
        .unwrap();
    assert_eq!(answer.stored.status, 201);
    let id = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(faults::injected(&faults::stats(&group).await) > 0);
    faults::clear(&group).await;
    assert!(
        schedule_of(&client, &group, &id, TimerKind::ShowStart)
            .await
            .is_none()
    );
    api.advance(TimeDelta::minutes(5));
    assert_eq!(shows::sweep(&app).await.unwrap(), 1);
    assert_eq!(show(&api, &Keys::test_a(), &id).await["status"], "started");
}

#[tokio::test]
#[ignore = "needs DynamoDB (moto) behind the fault proxy: scripts/test.sh runs it"]
async fn dynamodb_only_racing_starts_under_faults_make_one_stream_per_show() {
    let api = TestApp::new().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, 5)})).await);
    }
    api.advance(TimeDelta::minutes(5));
    let table = api.table().expect("DynamoDB").to_owned();
    faults::set(
        &table,
        json!({"throttling": 0.1, "internal_error": 0.05, "transaction_throttled": 0.1,
               "lost_response": 0.1, "gsi_stale": 0.2, "conflicts": {"hold_ms": 20}}),
    )
    .await;
    let app = &api.runtime.app;
    let mut racers = Vec::new();
    for _ in 0..4 {
        let sweeper = app.clone();
        racers.push(tokio::spawn(async move { shows::sweep(&sweeper).await }));
        for id in &ids {
            let app = app.clone();
            let show_id = uuid_of(id);
            racers.push(tokio::spawn(async move {
                shows::act_on_due(&app, show_id).await.map(usize::from)
            }));
        }
    }
    for racer in racers {
        // A racer may give up on a fault; the next sweep finishes its work.
        let _ = racer.await.unwrap();
    }
    faults::clear(&table).await;
    // A racer that gave up holding its claim is a starter that died: the sweep takes the
    // claim over once it runs out (the launch timeout plus 30 s).
    api.advance(TimeDelta::minutes(5));
    for _ in 0..5 {
        shows::sweep(app).await.unwrap();
    }
    // Each show first (what became of it says where a start was lost), then the total.
    let mut stream_ids = std::collections::BTreeSet::new();
    for id in &ids {
        let started = show(&api, &Keys::test_a(), id).await;
        assert_eq!(started["status"], "started", "{started}");
        stream_ids.insert(started["stream_id"].as_str().unwrap().to_owned());
        assert_eq!(show_events(&api, "show.started", id).await.len(), 1);
    }
    assert_eq!(stream_ids.len(), 3);
    let streams = api.get("/streams?limit=100", &Keys::test_a()).await;
    assert_eq!(streams.body["total"], 3, "{}", streams.body);
}
