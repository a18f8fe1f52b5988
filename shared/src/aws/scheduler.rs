//! Stream timers on EventBridge Scheduler: one-time `at()` schedules that invoke the timers
//! function with the [`Timer`] as input and delete themselves after running. Names derive
//! from the stream and the timer kind, so scheduling twice is harmless.

use async_trait::async_trait;
use aws_sdk_scheduler::Client;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, FlexibleTimeWindow, FlexibleTimeWindowMode, Target,
};
use uuid::Uuid;

use super::describe;
use crate::domain::TimerKind;
use crate::error::StoreError;
use crate::ports::{StoreResult, Timer, Timers};

#[derive(Clone)]
pub struct SchedulerTimers {
    client: Client,
    group: String,
    target_arn: String,
    role_arn: String,
}

/// The schedule's name: at most 64 characters of `[0-9a-zA-Z-_.]`.
pub fn schedule_name(stream_id: Uuid, kind: TimerKind) -> String {
    format!("{}-{}", kind.as_str(), stream_id.simple())
}

fn backend<E: std::error::Error>(err: E) -> StoreError {
    StoreError::Backend(describe(&err))
}

impl SchedulerTimers {
    pub fn new(client: Client, group: String, target_arn: String, role_arn: String) -> Self {
        Self {
            client,
            group,
            target_arn,
            role_arn,
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
            .build()
            .map_err(backend)?;
        let result = self
            .client
            .create_schedule()
            .name(schedule_name(timer.stream_id, timer.kind))
            .group_name(&self.group)
            .schedule_expression(format!("at({})", timer.due_at.format("%Y-%m-%dT%H:%M:%S")))
            .schedule_expression_timezone("UTC")
            .flexible_time_window(
                FlexibleTimeWindow::builder()
                    .mode(FlexibleTimeWindowMode::Off)
                    .build()
                    .map_err(backend)?,
            )
            .action_after_completion(ActionAfterCompletion::Delete)
            .target(target)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(err)
                if err
                    .as_service_error()
                    .is_some_and(|e| e.is_conflict_exception()) =>
            {
                Ok(())
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
