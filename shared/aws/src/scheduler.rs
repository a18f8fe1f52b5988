//! Timers on EventBridge Scheduler and an SQS hand-over, so that each fires within about a
//! second of its moment (docs/lifecycle.md, "Timers on AWS").
//!
//! - Scheduler's one-time `at()` schedules run anywhere in the minute they name ("60 second
//!   precision"). So a timer is scheduled at the whole minute at least 60 s before its moment,
//!   which always runs before it; that invocation finds the timer early, and arms it again,
//!   which hands it to the timer queue: an SQS message delayed by the whole seconds that
//!   remain, rounded down, so it arrives less than a second early and the receiver waits out
//!   the rest (the timers service's `fire_handed`). A timer due within about two minutes goes
//!   to the queue at once. The timers function receives the queue's messages and fires them.
//! - Schedules invoke the timers function with the [`Timer`] as input and delete themselves
//!   after running. Names derive from the stream and the timer kind, so scheduling again
//!   replaces the timer. A message already on the queue cannot be taken back: a timer moved or
//!   cancelled after its hand-over still fires, and changes nothing, as every timer that fires
//!   checks the stored state (the timers service).
//! - Scheduler invokes the function asynchronously. Each target carries a retry policy and a
//!   dead-letter queue, so an invocation Scheduler could not make is kept, not dropped; the
//!   function's own failures go to its on-failure destination (`template.yaml`), and the
//!   deadline sweep ends any stream whose timer was lost all the same.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_scheduler::Client;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, DeadLetterConfig, FlexibleTimeWindow, FlexibleTimeWindowMode,
    RetryPolicy, Target,
};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use uuid::Uuid;

use super::describe;
use hosting_domain::TimerKind;
use hosting_domain::clock::Clock;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{StoreResult, Timer, Timers};

/// How long, and how often, Scheduler keeps trying an invocation it could not make.
const RETRY_FOR_SECS: i32 = 86_400;
const RETRY_ATTEMPTS: i32 = 185;

#[derive(Clone)]
pub struct SchedulerTimers {
    client: crate::LazyClient<Client>,
    group: String,
    target_arn: String,
    role_arn: String,
    dead_letter_arn: String,
    handover: TimerQueue,
}

/// The queue a timer travels its last stretch on.
#[derive(Clone)]
pub struct TimerQueue {
    client: crate::LazyClient<aws_sdk_sqs::Client>,
    url: String,
    clock: Arc<dyn Clock>,
}

impl TimerQueue {
    pub fn new(
        client: impl Into<crate::LazyClient<aws_sdk_sqs::Client>>,
        url: impl Into<String>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            client: client.into(),
            url: url.into(),
            clock,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn client(&self) -> &aws_sdk_sqs::Client {
        &self.client
    }

    /// Sends `timer` to arrive just before its moment: delayed by the whole seconds that
    /// remain, rounded down, so the receiver waits out the fraction left and acts on the
    /// millisecond rather than up to a second late (SQS delays by whole seconds, at most 15
    /// minutes; the hand-over is never more than about two).
    async fn send(&self, timer: &Timer) -> StoreResult<()> {
        let body = crate::sqs::message_body(timer)?;
        let remaining = (timer.due_at - self.clock.now()).num_milliseconds().max(0) as u64;
        let delay_secs = (remaining / 1000).min(crate::sqs::MAX_DELAY.as_secs());
        self.client
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .delay_seconds(delay_secs as i32)
            .send()
            .await
            .map_err(backend)?;
        Ok(())
    }
}

/// The whole minute a timer due at `due_at` is scheduled at: at least 60 s before it, so that
/// Scheduler, which runs a schedule anywhere in its minute, runs it before the moment.
pub fn schedule_minute(due_at: DateTime<Utc>) -> DateTime<Utc> {
    let before = due_at - TimeDelta::minutes(1);
    before
        .duration_trunc(TimeDelta::minutes(1))
        .unwrap_or(before)
}

/// The `at()` expression of a timer due at `due_at` ([`schedule_minute`]).
pub fn at_expression(due_at: DateTime<Utc>) -> String {
    format!(
        "at({})",
        schedule_minute(due_at).format("%Y-%m-%dT%H:%M:%S")
    )
}

/// The schedule's name: at most 64 characters of `[0-9a-zA-Z-_.]`.
pub fn schedule_name(stream_id: Uuid, kind: TimerKind) -> String {
    format!("{}-{}", kind.as_str(), stream_id.simple())
}

fn backend<E: std::error::Error>(err: E) -> StoreError {
    StoreError::Backend(describe(&err))
}

impl SchedulerTimers {
    pub fn new(
        client: impl Into<crate::LazyClient<Client>>,
        group: String,
        target_arn: String,
        role_arn: String,
        dead_letter_arn: String,
        handover: TimerQueue,
    ) -> Self {
        Self {
            client: client.into(),
            group,
            target_arn,
            role_arn,
            dead_letter_arn,
            handover,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn group(&self) -> &str {
        &self.group
    }

    pub fn handover(&self) -> &TimerQueue {
        &self.handover
    }
}

#[async_trait]
impl Timers for SchedulerTimers {
    async fn schedule(&self, timer: Timer) -> StoreResult<()> {
        // Too close for a whole minute at least 60 s ahead: the queue at once.
        if schedule_minute(timer.due_at) <= self.handover.clock.now() {
            return self.handover.send(&timer).await;
        }
        let input =
            serde_json::to_string(&timer).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let target = Target::builder()
            .arn(&self.target_arn)
            .role_arn(&self.role_arn)
            .input(input)
            .retry_policy(
                RetryPolicy::builder()
                    .maximum_event_age_in_seconds(RETRY_FOR_SECS)
                    .maximum_retry_attempts(RETRY_ATTEMPTS)
                    .build(),
            )
            .dead_letter_config(
                DeadLetterConfig::builder()
                    .arn(&self.dead_letter_arn)
                    .build(),
            )
            .build()
            .map_err(backend)?;
        let window = FlexibleTimeWindow::builder()
            .mode(FlexibleTimeWindowMode::Off)
            .build()
            .map_err(backend)?;
        let name = schedule_name(timer.stream_id, timer.kind);
        let expression = at_expression(timer.due_at);
        let created = self
            .client
            .create_schedule()
            .name(&name)
            .group_name(&self.group)
            .schedule_expression(&expression)
            .schedule_expression_timezone("UTC")
            .flexible_time_window(window.clone())
            .action_after_completion(ActionAfterCompletion::Delete)
            .target(target.clone())
            .send()
            .await;
        match created {
            Ok(_) => Ok(()),
            // It exists (a re-armed timer, or one scheduled again): move it.
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conflict_exception()) =>
            {
                self.client
                    .update_schedule()
                    .name(&name)
                    .group_name(&self.group)
                    .schedule_expression(&expression)
                    .schedule_expression_timezone("UTC")
                    .flexible_time_window(window)
                    .action_after_completion(ActionAfterCompletion::Delete)
                    .target(target)
                    .send()
                    .await
                    .map(drop)
                    .map_err(backend)
            }
            Err(err) => Err(backend(err)),
        }
    }

    async fn cancel(&self, stream_id: Uuid, kind: TimerKind) -> StoreResult<()> {
        let result = self
            .client
            .delete_schedule()
            .name(schedule_name(stream_id, kind))
            .group_name(&self.group)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                Ok(())
            }
            Err(err) => Err(backend(err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_run_in_a_whole_minute_at_least_60_s_before_the_moment() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        assert_eq!(
            at_expression(at("2026-03-02T12:00:30Z")),
            "at(2026-03-02T11:59:00)"
        );
        assert_eq!(
            at_expression(at("2026-03-02T12:00:00Z")),
            "at(2026-03-02T11:59:00)"
        );
        assert_eq!(
            at_expression(at("2026-03-02T12:00:59.999Z")),
            "at(2026-03-02T11:59:00)"
        );
        assert_eq!(
            at_expression(at("2026-03-03T00:00:00.001Z")),
            "at(2026-03-02T23:59:00)"
        );
        // Whatever second of its minute it runs, it runs before the moment.
        for second in 0..60 {
            let due = at("2026-03-02T12:00:00Z") + TimeDelta::seconds(second);
            assert!(schedule_minute(due) + TimeDelta::seconds(60) <= due);
        }
    }
}
