//! Stream deadlines: a timer fired by EventBridge Scheduler (the schedule's input is the timer
//! itself) or handed over to the timer queue for its last seconds (docs/lifecycle.md, "Timers on
//! AWS"), or, every minute, the sweep that ends streams whose timer was lost; and the table's
//! stream, filtered to the stream items that owe an egress start (docs/destinations.md, "Going
//! live"), so that start is made within seconds rather than at the next whole minute.

use hosting_app::App;
use hosting_app::sweep_budget::SweepBudget;
use hosting_domain::TimerKind;
use hosting_domain::ports::Timer;
use serde::{Deserialize, Serialize};

/// What the function is invoked with.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Invocation {
    Timer(Timer),
    /// Stream items that owe an egress start, from the table's stream.
    EgressOwed(StreamChanges),
    /// Timers handed over to the timer queue, as Lambda's SQS trigger delivers them.
    Handed(TimerMessages),
    /// The sweep's schedule (any other input).
    Sweep(serde_json::Value),
}

/// A batch of the table's stream (only the fields read here; the filter lets through only stream
/// items with `egress_due`).
#[derive(Debug, Deserialize)]
pub struct StreamChanges {
    #[serde(rename = "Records")]
    records: Vec<ChangeRecord>,
}

/// A batch of the timer queue: each message's body is a timer.
#[derive(Debug, Deserialize)]
pub struct TimerMessages {
    #[serde(rename = "Records")]
    records: Vec<TimerMessage>,
}

#[derive(Debug, Deserialize)]
struct TimerMessage {
    body: String,
}

#[derive(Debug, Deserialize)]
struct ChangeRecord {
    dynamodb: Change,
}

#[derive(Debug, Deserialize)]
struct Change {
    #[serde(rename = "NewImage")]
    new_image: OwedStart,
}

#[derive(Debug, Deserialize)]
struct OwedStart {
    id: StringValue,
    egress_due: StringValue,
}

#[derive(Debug, Deserialize)]
struct StringValue {
    #[serde(rename = "S")]
    s: String,
}

/// The longest an invocation waits for an owed start that falls due soon (a retry 1, 2 or 4
/// seconds after a failure); later ones are the timer's and the sweep's.
const WAIT_FOR_DUE: std::time::Duration = std::time::Duration::from_secs(10);

impl StreamChanges {
    /// The egress starts these changes owe, as timers.
    fn owed(&self) -> Vec<Timer> {
        self.records
            .iter()
            .filter_map(|record| {
                let image = &record.dynamodb.new_image;
                Some(Timer {
                    stream_id: image.id.s.parse().ok()?,
                    kind: TimerKind::EgressStart,
                    due_at: image.egress_due.s.parse().ok()?,
                })
            })
            .collect()
    }
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Fired {
    /// How many streams it ended: a timer changes at most its own stream, and nothing once
    /// the stream moved on or when it fired early (it is then armed again).
    pub changed: usize,
}

pub async fn handle(
    app: &App,
    invocation: Invocation,
) -> Result<Fired, hosting_domain::error::StoreError> {
    handle_within(app, invocation, SweepBudget::default()).await
}

/// [`handle`], a sweep stopping within `budget` (in Lambda: before the invocation's timeout).
pub async fn handle_within(
    app: &App,
    invocation: Invocation,
    budget: SweepBudget,
) -> Result<Fired, hosting_domain::error::StoreError> {
    let changed = match invocation {
        Invocation::Timer(timer) => {
            usize::from(hosting_app::service::timers::fire(app, &timer).await?)
        }
        Invocation::EgressOwed(changes) => {
            // All at once: each waits for its own moment and LiveKit's answer (up to
            // WAIT_FOR_DUE plus a call's timeout), so a full batch takes about as long as its
            // slowest start, inside the function's timeout however many it holds.
            let starts = changes.owed().into_iter().filter_map(|timer| {
                let wait = (timer.due_at - app.clock.now())
                    .to_std()
                    .unwrap_or_default();
                (wait <= WAIT_FOR_DUE).then_some(async move {
                    tokio::time::sleep(wait).await;
                    hosting_app::service::timers::fire(app, &timer).await
                })
            });
            let fired = futures_util::future::join_all(starts).await;
            // One that failed fails the batch, which Lambda hands over again: the starts
            // made are not made twice (each is a conditional claim).
            let mut changed = 0;
            for result in fired {
                changed += usize::from(result?);
            }
            changed
        }
        Invocation::Handed(messages) => {
            // All at once, each waiting out the fraction of a second it arrived early; one
            // that fails fails the batch, which SQS hands over again after its visibility
            // timeout (a timer fired twice changes its stream once). A body that is no timer
            // cannot become one: it is left out.
            let timers: Vec<Timer> = messages
                .records
                .iter()
                .filter_map(|message| serde_json::from_str(&message.body).ok())
                .collect();
            let fired = futures_util::future::join_all(
                timers
                    .iter()
                    .map(|timer| hosting_app::service::timers::fire_handed(app, timer)),
            )
            .await;
            let mut changed = 0;
            for result in fired {
                changed += usize::from(result?);
            }
            changed
        }
        Invocation::Sweep(_) => hosting_app::service::timers::sweep_within(app, budget).await?,
    };
    Ok(Fired { changed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_queues_batches_are_told_from_the_tables_stream() {
        let timer = r#"{"stream_id":"6f9619ff-8b86-4011-b42d-00cf4fc964ff","kind":"duration_end","due_at":"2026-03-02T12:30:30Z"}"#;
        let sqs = serde_json::json!({"Records": [{"messageId": "m1", "receiptHandle": "r",
            "body": timer, "eventSource": "aws:sqs"}]});
        match serde_json::from_value::<Invocation>(sqs).unwrap() {
            Invocation::Handed(messages) => {
                let parsed: Timer = serde_json::from_str(&messages.records[0].body).unwrap();
                assert_eq!(parsed.kind, TimerKind::DurationEnd);
            }
            other => panic!("{other:?}"),
        }
        let stream = serde_json::json!({"Records": [{"eventName": "MODIFY", "dynamodb": {
            "NewImage": {"id": {"S": "6f9619ff-8b86-4011-b42d-00cf4fc964ff"},
                         "egress_due": {"S": "2026-03-02T12:30:30Z"}}}}]});
        assert!(matches!(
            serde_json::from_value::<Invocation>(stream).unwrap(),
            Invocation::EgressOwed(_)
        ));
        assert!(matches!(
            serde_json::from_value::<Invocation>(serde_json::json!({"sweep": "deadlines"}))
                .unwrap(),
            Invocation::Sweep(_)
        ));
    }
}
