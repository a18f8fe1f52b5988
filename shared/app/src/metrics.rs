//! Operational metrics in CloudWatch Embedded Metric Format: one JSON line on stdout per
//! measurement. In Lambda, CloudWatch Logs extracts the metric from the line, so counting costs
//! no API call and cannot fail a request. The alarms and the dashboard in `template.yaml` read
//! these names (a check in `scripts/checks/check_template.py` holds the two together).
//!
//! Lines are written only once [`enable`] was called: Lambda always does
//! ([`hosting_runtime::telemetry::init_json`]), the local server with `LOG_FORMAT=json`.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use hosting_domain::Transition;

/// The namespace when `METRICS_NAMESPACE` is unset; the template names one per stack.
pub const DEFAULT_NAMESPACE: &str = "LiveStreamHosting";

/// The dimension of [`Metric::StreamTransitions`].
pub const TRANSITION_DIMENSION: &str = "Transition";

/// Every metric the code emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A webhook delivery the receiver answered with a `2xx`.
    DeliveriesSucceeded,
    /// A delivery attempt that failed (it is retried unless it was the last).
    DeliveriesFailed,
    /// A delivery whose retries ran out, or that could not be retried, sent to the dead-letter
    /// queue.
    DeliveriesDeadLettered,
    /// A stream status change, by [`Transition`].
    StreamTransitions,
    /// A live start whose room, dispatch or token failed.
    LaunchFailures,
    /// A request refused with `429 rate_limited`.
    RateLimitRefusals,
    /// An event the relay gave up putting on the delivery queue.
    RelayEventsSetAside,
    /// Age of the oldest event still waiting for the relay, measured by each outbox sweep.
    OldestPendingEventAge,
    /// Deliveries parked, unattempted, because their brand held every delivery slot.
    DeliveriesParked,
    /// Parked deliveries put back on the queue by a slot's release (or a parker that found one
    /// free): the hand-over.
    ParkedDeliveriesWoken,
    /// Parked deliveries put back on the queue by the parked-delivery sweep: wake-ups that a
    /// release did not make (its process died, or a slot's holder died and its time ran out).
    ParkedDeliveriesSwept,
    /// A room deletion that failed (it is retried until the provider confirms the room gone).
    RoomCleanupRetries,
    /// How long the oldest room cleanup due has been pending, measured by each deadline sweep.
    OldestPendingRoomCleanupAge,
    /// The agent dispatched again: a preparing stream's retry, or in a reconnect window.
    DispatchRetries,
    /// A dispatch retry the room provider refused or did not answer (tried again at the next
    /// retry time while one is left).
    DispatchRetryFailures,
    /// A live stream's agent dropped: a reconnect window opened.
    HostDrops,
    /// An agent joined within a reconnect window: the stream went on.
    HostReconnects,
    /// A room read back from LiveKit for its host (docs/livekit.md, "Read-backs").
    HostReadbacks,
    /// A read-back LiveKit refused or did not answer: it changed nothing.
    HostReadbackFailures,
    /// A second host removed from a room that had one.
    SecondHostsRemoved,
    /// A reconnect window lapsed with no agent back: the stream ended `host_lost`.
    ReconnectLapses,
    /// A delivery queue message that could not be read, moved to the dead-letter queue as it
    /// came.
    UnreadableDeliveryMessages,
    /// A LiveKit webhook that was signed but could not be read as an event (answered `400`).
    UndecodableLiveKitEvents,
    /// An egress started for a live stream's destinations (a restart included).
    EgressStarts,
    /// An egress start that gave up after `EGRESS_START_RETRY_SECS`: its destinations failed
    /// with `egress_unavailable`.
    EgressStartFailures,
    /// A destination that turned `failed`.
    DestinationFailures,
    /// A webhook the service disabled (`failing` or `gone`).
    WebhooksDisabled,
    /// A scheduled show whose stream was started.
    ShowsStarted,
    /// A scheduled show that could not be started.
    ShowsFailed,
    /// A show started or failed more than 60 s after its `starts_at`.
    ShowsLate,
    /// A data key the stack's key (KMS) would not make or unwrap: secrets could not be sealed
    /// or opened, so registrations, rotations, deliveries or egress starts failed (and retry).
    SecretKeyFailures,
    /// A clip cut and stored (docs/clips.md).
    ClipsReady,
    /// A clip that could not be cut (`failed`).
    ClipsFailed,
    /// A cut whose read or write failed (it is tried again, a few times).
    ClipCutRetries,
}

impl Metric {
    pub const ALL: [Metric; 34] = [
        Metric::DeliveriesSucceeded,
        Metric::DeliveriesFailed,
        Metric::DeliveriesDeadLettered,
        Metric::StreamTransitions,
        Metric::LaunchFailures,
        Metric::RateLimitRefusals,
        Metric::RelayEventsSetAside,
        Metric::OldestPendingEventAge,
        Metric::DeliveriesParked,
        Metric::ParkedDeliveriesWoken,
        Metric::ParkedDeliveriesSwept,
        Metric::RoomCleanupRetries,
        Metric::OldestPendingRoomCleanupAge,
        Metric::DispatchRetries,
        Metric::DispatchRetryFailures,
        Metric::HostDrops,
        Metric::HostReconnects,
        Metric::HostReadbacks,
        Metric::HostReadbackFailures,
        Metric::SecondHostsRemoved,
        Metric::ReconnectLapses,
        Metric::UnreadableDeliveryMessages,
        Metric::UndecodableLiveKitEvents,
        Metric::EgressStarts,
        Metric::EgressStartFailures,
        Metric::DestinationFailures,
        Metric::WebhooksDisabled,
        Metric::ShowsStarted,
        Metric::ShowsFailed,
        Metric::ShowsLate,
        Metric::SecretKeyFailures,
        Metric::ClipsReady,
        Metric::ClipsFailed,
        Metric::ClipCutRetries,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::DeliveriesSucceeded => "DeliveriesSucceeded",
            Metric::DeliveriesFailed => "DeliveriesFailed",
            Metric::DeliveriesDeadLettered => "DeliveriesDeadLettered",
            Metric::StreamTransitions => "StreamTransitions",
            Metric::LaunchFailures => "LaunchFailures",
            Metric::RateLimitRefusals => "RateLimitRefusals",
            Metric::RelayEventsSetAside => "RelayEventsSetAside",
            Metric::OldestPendingEventAge => "OldestPendingEventAge",
            Metric::DeliveriesParked => "DeliveriesParked",
            Metric::ParkedDeliveriesWoken => "ParkedDeliveriesWoken",
            Metric::ParkedDeliveriesSwept => "ParkedDeliveriesSwept",
            Metric::RoomCleanupRetries => "RoomCleanupRetries",
            Metric::OldestPendingRoomCleanupAge => "OldestPendingRoomCleanupAge",
            Metric::DispatchRetries => "DispatchRetries",
            Metric::DispatchRetryFailures => "DispatchRetryFailures",
            Metric::HostDrops => "HostDrops",
            Metric::HostReconnects => "HostReconnects",
            Metric::HostReadbacks => "HostReadbacks",
            Metric::HostReadbackFailures => "HostReadbackFailures",
            Metric::SecondHostsRemoved => "SecondHostsRemoved",
            Metric::ReconnectLapses => "ReconnectLapses",
            Metric::UnreadableDeliveryMessages => "UnreadableDeliveryMessages",
            Metric::UndecodableLiveKitEvents => "UndecodableLiveKitEvents",
            Metric::EgressStarts => "EgressStarts",
            Metric::EgressStartFailures => "EgressStartFailures",
            Metric::DestinationFailures => "DestinationFailures",
            Metric::WebhooksDisabled => "WebhooksDisabled",
            Metric::ShowsStarted => "ShowsStarted",
            Metric::ShowsFailed => "ShowsFailed",
            Metric::ShowsLate => "ShowsLate",
            Metric::SecretKeyFailures => "SecretKeyFailures",
            Metric::ClipsReady => "ClipsReady",
            Metric::ClipsFailed => "ClipsFailed",
            Metric::ClipCutRetries => "ClipCutRetries",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Metric::OldestPendingEventAge | Metric::OldestPendingRoomCleanupAge => "Seconds",
            _ => "Count",
        }
    }
}

static NAMESPACE: OnceLock<String> = OnceLock::new();

/// Starts writing metric lines, under `METRICS_NAMESPACE` (or [`DEFAULT_NAMESPACE`]).
pub fn enable() {
    let namespace = std::env::var("METRICS_NAMESPACE")
        .ok()
        .filter(|value| !value.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
    let _ = NAMESPACE.set(namespace);
}

/// Counts one occurrence of `metric`.
pub fn count(metric: Metric) {
    emit(metric, 1.0, None);
}

/// Counts `times` occurrences of `metric` in one line (nothing when zero).
pub fn count_many(metric: Metric, times: usize) {
    if times > 0 {
        emit(metric, times as f64, None);
    }
}

/// Counts one stream status change.
pub fn transition(transition: Transition) {
    emit(
        Metric::StreamTransitions,
        1.0,
        Some((TRANSITION_DIMENSION, transition.name())),
    );
}

/// Records the age of the oldest pending outbox event (zero when none waits).
pub fn oldest_pending_event_age(age: Duration) {
    emit(Metric::OldestPendingEventAge, age.as_secs_f64(), None);
}

/// Records how long the oldest room cleanup due has been pending (zero when none is due).
pub fn oldest_pending_room_cleanup_age(age: Duration) {
    emit(Metric::OldestPendingRoomCleanupAge, age.as_secs_f64(), None);
}

fn emit(metric: Metric, value: f64, dimension: Option<(&str, &str)>) {
    let Some(namespace) = NAMESPACE.get() else {
        return;
    };
    let line = line(namespace, metric, value, dimension, now_millis());
    // One write per line, so lines of concurrent tasks never interleave.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

fn now_millis() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default()
}

/// One EMF document, newline-terminated. A metric without a dimension is published under the
/// empty dimension set, so an alarm names it by namespace and name alone.
fn line(
    namespace: &str,
    metric: Metric,
    value: f64,
    dimension: Option<(&str, &str)>,
    timestamp_ms: u128,
) -> String {
    let dimension_names: Vec<&str> = dimension.iter().map(|(name, _)| *name).collect();
    let mut document = serde_json::json!({
        "_aws": {
            "Timestamp": timestamp_ms as u64,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": [dimension_names],
                "Metrics": [{"Name": metric.name(), "Unit": metric.unit()}],
            }],
        },
        (metric.name()): value,
    });
    if let Some((name, dimension_value)) = dimension {
        document[name] = dimension_value.into();
    }
    let mut line = document.to_string();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_an_emf_document_without_dimensions() {
        let line = line(
            "Ns",
            Metric::DeliveriesSucceeded,
            1.0,
            None,
            1_700_000_000_000,
        );
        assert!(line.ends_with('\n'));
        let document: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            document,
            serde_json::json!({
                "_aws": {
                    "Timestamp": 1_700_000_000_000u64,
                    "CloudWatchMetrics": [{
                        "Namespace": "Ns",
                        "Dimensions": [[]],
                        "Metrics": [{"Name": "DeliveriesSucceeded", "Unit": "Count"}],
                    }],
                },
                "DeliveriesSucceeded": 1.0,
            })
        );
    }

    #[test]
    fn a_transition_carries_its_dimension() {
        let line = line(
            "Ns",
            Metric::StreamTransitions,
            1.0,
            Some((TRANSITION_DIMENSION, Transition::AgentJoined.name())),
            0,
        );
        let document: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            document["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            serde_json::json!([["Transition"]])
        );
        assert_eq!(document["Transition"], "agent_joined");
        assert_eq!(document["StreamTransitions"], 1.0);
    }

    #[test]
    fn ages_are_in_seconds() {
        let line = line(
            "Ns",
            Metric::OldestPendingEventAge,
            Duration::from_millis(2500).as_secs_f64(),
            None,
            0,
        );
        let document: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            document["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Unit"],
            "Seconds"
        );
        assert_eq!(document["OldestPendingEventAge"], 2.5);
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Metric::ALL.len());
    }
}
