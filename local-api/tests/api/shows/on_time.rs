//! Timers on AWS fire within 2 s of their moment (docs/lifecycle.md, "Timers on AWS"), on
//! the wall clock against the emulator: the local Scheduler runs each schedule at a random
//! second of its minute, here always twice, and the timer queue hands each timer over for its
//! last seconds. No sweep runs, so only the timers can start, remind and end.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DurationRound, Utc};
use hosting_app::service::shows;
use hosting_runtime::local_scheduler::{Draws, run_schedules, run_timer_queue};

use super::aws::{LEAD, body_of, on_scheduler_with};
use super::service::caller;
use super::*;

/// How late a timer may act, plus the 100 ms between this test's looks.
const ON_TIME: TimeDelta = TimeDelta::milliseconds(2_100);

/// When something was first seen, against its moment.
fn lateness(seen: chrono::DateTime<Utc>, moment: chrono::DateTime<Utc>) -> TimeDelta {
    seen - moment
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs Scheduler, SQS and DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_starts_reminders_and_deadlines_fire_within_2_s_of_their_moment() {
    slow_by_design(
        "timers_on_time",
        "up to 4 minutes: shows two minutes ahead on the wall clock, then a 1-minute stream",
    );
    let api = TestApp::new().await;
    let (app, client, group, queue) =
        on_scheduler_with(&api, Arc::new(hosting_domain::clock::SystemClock)).await;
    let loops = [
        tokio::spawn(run_schedules(
            app.clone(),
            client.clone(),
            group.clone(),
            Draws {
                seed: 11,
                twice: 1.0,
            },
        )),
        tokio::spawn(run_timer_queue(
            app.clone(),
            queue.client().clone(),
            queue.url().to_owned(),
        )),
    ];
    let caller = caller(&api, &Keys::test_a()).await;
    // At :00, :30 and :59 of a minute far enough ahead that Scheduler takes the starts (the
    // whole minute 60 s before each is still to come); the :30 one reminds a minute before,
    // close enough that its reminder goes to the queue at once; the :00 one runs a minute.
    let base = Utc::now().duration_trunc(TimeDelta::minutes(1)).unwrap() + TimeDelta::minutes(2);
    let mut shows_due = Vec::new();
    for (offset, extra) in [
        (0, json!({"duration_minutes": 1})),
        (30, json!({"remind_minutes_before": 1})),
        (59, json!({})),
    ] {
        let starts_at = base + TimeDelta::seconds(offset);
        let mut body = show_body(&api, extra);
        body["starts_at"] = json!(starts_at.to_rfc3339());
        let answer = shows::schedule(&app, &caller, &body_of(body), None, LEAD)
            .await
            .unwrap();
        assert_eq!(answer.stored.status, 201, "{}", answer.stored.body);
        let id = serde_json::from_str::<Value>(&answer.stored.body).unwrap()["show_id"]
            .as_str()
            .unwrap()
            .to_owned();
        shows_due.push((id, starts_at));
    }
    let reminder_due = shows_due[1].1 - TimeDelta::minutes(1);

    let store = api.runtime.app.store.clone();
    // Looked at every 100 ms until everything happened (or 70 s past the last moment).
    let (mut reminded, mut started, mut ended) = (None, vec![None; 3], None);
    let mut first_stream = None;
    let give_up = Instant::now()
        + (base - Utc::now()).to_std().unwrap()
        + std::time::Duration::from_secs(130);
    while Instant::now() < give_up
        && (reminded.is_none() || ended.is_none() || started.contains(&None))
    {
        let now = Utc::now();
        if reminded.is_none()
            && !show_events(&api, "show.reminder", &shows_due[1].0)
                .await
                .is_empty()
        {
            reminded = Some(now);
        }
        // Read from the store: the API's rate limit would refuse this many looks.
        for (i, (id, _)) in shows_due.iter().enumerate() {
            if started[i].is_none() {
                let show = store
                    .get_show("brand_a", uuid_of(id))
                    .await
                    .unwrap()
                    .unwrap();
                if let (hosting_domain::show::ShowStatus::Started, Some(stream_id)) =
                    (show.status, show.stream_id)
                {
                    let stream = store.get_stream(stream_id).await.unwrap().unwrap();
                    started[i] = Some(stream.created_at);
                    if i == 0 {
                        first_stream = Some((stream_id, stream.created_at));
                    }
                }
            }
        }
        if let (None, Some((stream_id, _))) = (ended, &first_stream) {
            let stream = store.get_stream(*stream_id).await.unwrap().unwrap();
            if stream.status == hosting_domain::StreamStatus::Ended {
                ended = Some(now);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for task in loops {
        task.abort();
    }

    let reminded = reminded.expect("the reminder was sent");
    eprintln!(
        "reminder: {} ms late",
        lateness(reminded, reminder_due).num_milliseconds()
    );
    assert!(lateness(reminded, reminder_due) >= TimeDelta::zero());
    assert!(lateness(reminded, reminder_due) <= ON_TIME, "the reminder");
    for ((id, due), created) in shows_due.iter().zip(&started) {
        let created = created.unwrap_or_else(|| panic!("show {id} started"));
        let late = lateness(created, *due);
        eprintln!(
            "show at :{:02}: started {} ms late",
            due.timestamp() % 60,
            late.num_milliseconds()
        );
        // Its stream is created at the start: never before the moment, at most 2 s after.
        assert!(
            late >= TimeDelta::zero() && late <= TimeDelta::seconds(2),
            "{late}"
        );
        assert_eq!(show_events(&api, "show.started", id).await.len(), 1);
    }
    let (_, created) = first_stream.unwrap();
    let deadline = created + TimeDelta::minutes(1);
    let ended = ended.expect("the 1-minute stream ended");
    eprintln!(
        "deadline: ended {} ms late",
        lateness(ended, deadline).num_milliseconds()
    );
    assert!(lateness(ended, deadline) <= ON_TIME, "the deadline");
    // Every schedule ran twice: still one stream per show.
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 3);
}
