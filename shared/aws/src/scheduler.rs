//! Stream timers on EventBridge Scheduler: one-time `at()` schedules that invoke the timers
//! function with the [`Timer`] as input and delete themselves after running. Names derive
//! from the stream and the timer kind, so scheduling again replaces the timer.
//!
//! - `at()` has minute granularity (a schedule at 12:00:30 may run any time in 12:00), so the
//!   expression is rounded up to the next whole minute and a timer never runs early; the
//!   handler checks the due time anyway (the timers service re-arms an early one).
//! - Scheduler invokes the function asynchronously. Each target carries a retry policy and a
//!   dead-letter queue, so an invocation Scheduler could not make is kept, not dropped; the
//!   function's own failures go to its on-failure destination (`template.yaml`), and the
//!   deadline sweep ends any stream whose timer was lost all the same.

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
}

/// The `at()` expression of a timer due at `due_at`: the next whole minute at or after it.
pub fn at_expression(due_at: DateTime<Utc>) -> String {
    let minute = TimeDelta::minutes(1);
    let floor = due_at.duration_trunc(minute).unwrap_or(due_at);
    let at = if floor == due_at {
        due_at
    } else {
        floor + minute
    };
    format!("at({})", at.format("%Y-%m-%dT%H:%M:%S"))
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
    ) -> Self {
        Self {
            client: client.into(),
            group,
            target_arn,
            role_arn,
            dead_letter_arn,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn group(&self) -> &str {
        &self.group
    }
}

#[async_trait]
impl Timers for SchedulerTimers {
    async fn schedule(&self, timer: Timer) -> StoreResult<()> {
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
    fn schedules_are_rounded_up_to_the_minute() {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        assert_eq!(
            at_expression(at("2026-03-02T12:00:30Z")),
            "at(2026-03-02T12:01:00)"
        );
        assert_eq!(
            at_expression(at("2026-03-02T12:00:00Z")),
            "at(2026-03-02T12:00:00)"
        );
        assert_eq!(
            at_expression(at("2026-03-02T23:59:00.001Z")),
            "at(2026-03-03T00:00:00)"
        );
    }
}
