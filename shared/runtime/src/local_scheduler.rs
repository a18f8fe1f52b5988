//! The local server's EventBridge Scheduler and timer queue, on the DynamoDB backend with
//! `SCHEDULER_*` and `TIMER_QUEUE_URL` set (docs/lifecycle.md, "Timers on AWS"). moto keeps
//! schedules but never runs them, and Lambda's SQS trigger is not there, so the local server
//! does both, as AWS does them:
//!
//! - a one-time schedule runs at a random second of the minute its `at()` names (:00 and :59
//!   included; the draws are seeded), sometimes twice (Scheduler runs a target at least once),
//!   with its input as the timer; then it is deleted, as `ActionAfterCompletion: DELETE` does;
//! - the timer queue's messages are received as they become visible and fired, and deleted
//!   once fired (one that fails stays, and comes back after its visibility timeout).
//!
//! The embedded backend keeps its exact in-process timers.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_scheduler::Client;
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use hosting_app::app::App;
use hosting_app::service;
use hosting_domain::ports::Timer;

/// How often the schedules and the queue are looked at.
const POLL: Duration = Duration::from_millis(200);

/// How the emulation draws when a schedule runs.
#[derive(Debug, Clone, Copy)]
pub struct Draws {
    pub seed: u64,
    /// The chance that a schedule runs a second time, in the same minute.
    pub twice: f64,
}

impl Default for Draws {
    fn default() -> Self {
        Self {
            seed: 0,
            twice: 0.25,
        }
    }
}

/// When a schedule of `at(minute)` runs: one or two moments of that minute, in order.
pub fn runs_of(minute: DateTime<Utc>, rng: &mut StdRng, twice: f64) -> Vec<DateTime<Utc>> {
    let at = |rng: &mut StdRng| minute + TimeDelta::milliseconds(rng.random_range(0..60_000));
    let mut runs = vec![at(rng)];
    if rng.random_bool(twice.clamp(0.0, 1.0)) {
        runs.push(at(rng));
    }
    runs.sort();
    runs
}

/// The minute of an `at(yyyy-mm-ddThh:mm:ss)` expression.
fn minute_of(expression: &str) -> Option<DateTime<Utc>> {
    let inner = expression.strip_prefix("at(")?.strip_suffix(')')?;
    Some(
        NaiveDateTime::parse_from_str(inner, "%Y-%m-%dT%H:%M:%S")
            .ok()?
            .and_utc(),
    )
}

struct Planned {
    modified: Option<aws_sdk_scheduler::primitives::DateTime>,
    runs: Vec<DateTime<Utc>>,
    input: String,
}

/// Runs the group's schedules as Scheduler would, forever.
pub async fn run_schedules(app: App, client: Client, group: String, draws: Draws) {
    let mut rng = StdRng::seed_from_u64(draws.seed);
    let mut planned: HashMap<String, Planned> = HashMap::new();
    loop {
        if let Err(err) = plan(&client, &group, &mut planned, &mut rng, draws.twice).await {
            tracing::warn!(error = %err, "local scheduler: schedules unreadable; retrying");
        }
        let now = Utc::now();
        let mut done = Vec::new();
        for (name, schedule) in planned.iter_mut() {
            while schedule.runs.first().is_some_and(|run| *run <= now) {
                schedule.runs.remove(0);
                match serde_json::from_str::<Timer>(&schedule.input) {
                    Ok(timer) => {
                        let app = app.clone();
                        tokio::spawn(async move {
                            if let Err(err) = service::timers::fire(&app, &timer).await {
                                tracing::error!(error = %err, "local scheduler: timer failed");
                            }
                        });
                    }
                    Err(err) => {
                        tracing::error!(schedule = %name, error = %err, "local scheduler: input is not a timer")
                    }
                }
            }
            if schedule.runs.is_empty() {
                done.push(name.clone());
            }
        }
        for name in done {
            planned.remove(&name);
            let _ = client
                .delete_schedule()
                .name(&name)
                .group_name(&group)
                .send()
                .await;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Plans the runs of schedules new or changed since the last look; forgets deleted ones.
async fn plan(
    client: &Client,
    group: &str,
    planned: &mut HashMap<String, Planned>,
    rng: &mut StdRng,
    twice: f64,
) -> Result<(), String> {
    let mut seen = Vec::new();
    let mut pages = client
        .list_schedules()
        .group_name(group)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|err| hosting_aws::describe(&err))?;
        for summary in page.schedules() {
            let Some(name) = summary.name() else { continue };
            seen.push(name.to_owned());
            let modified = summary.last_modification_date().cloned();
            if planned
                .get(name)
                .is_some_and(|known| known.modified == modified)
            {
                continue;
            }
            let schedule = client
                .get_schedule()
                .name(name)
                .group_name(group)
                .send()
                .await
                .map_err(|err| hosting_aws::describe(&err))?;
            let (Some(minute), Some(input)) = (
                schedule.schedule_expression().and_then(minute_of),
                schedule.target().and_then(|target| target.input()),
            ) else {
                continue;
            };
            planned.insert(
                name.to_owned(),
                Planned {
                    modified,
                    runs: runs_of(minute, rng, twice),
                    input: input.to_owned(),
                },
            );
        }
    }
    planned.retain(|name, _| seen.contains(name));
    Ok(())
}

/// Receives the timer queue's messages as they become visible and fires them, forever.
pub async fn run_timer_queue(app: App, client: aws_sdk_sqs::Client, url: String) {
    loop {
        let received = client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .send()
            .await;
        let messages = match received {
            Ok(out) => out.messages.unwrap_or_default(),
            Err(err) => {
                tracing::warn!(error = %hosting_aws::describe(&err), "timer queue unreadable; retrying");
                Vec::new()
            }
        };
        if messages.is_empty() {
            tokio::time::sleep(POLL).await;
            continue;
        }
        for message in messages {
            let (app, client, url) = (app.clone(), client.clone(), url.clone());
            tokio::spawn(async move {
                let fired = match message.body().map(serde_json::from_str::<Timer>) {
                    Some(Ok(timer)) => service::timers::fire_handed(&app, &timer).await.map(drop),
                    // Nothing can read it: dropped rather than received forever.
                    _ => Ok(()),
                };
                match fired {
                    Ok(()) => {
                        if let Some(receipt) = message.receipt_handle() {
                            let _ = client
                                .delete_message()
                                .queue_url(&url)
                                .receipt_handle(receipt)
                                .send()
                                .await;
                        }
                    }
                    Err(err) => tracing::error!(error = %err, "timer failed; received again later"),
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    #[test]
    fn runs_fall_anywhere_in_their_minute_and_sometimes_twice() {
        let minute = minute_of("at(2026-03-02T12:01:00)").unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let (mut seconds, mut twice) = (std::collections::BTreeSet::new(), 0);
        for _ in 0..2_000 {
            let runs = runs_of(minute, &mut rng, 0.25);
            twice += usize::from(runs.len() == 2);
            for run in runs {
                assert!(run >= minute && run < minute + TimeDelta::minutes(1));
                seconds.insert(run.second());
            }
        }
        assert_eq!(seconds.len(), 60, ":00 to :59, each drawn");
        assert!((400..600).contains(&twice), "{twice} of 2,000 twice");
        assert_eq!(minute_of("rate(1 minute)"), None);
    }
}
