//! Reading the egresses back (docs/destinations.md, "Lost, late and early reports"). LiveKit
//! promises no webhook delivery, so a stream's egresses are read back from LiveKit every
//! `EGRESS_RECONCILE_SECS` while they run, and the recording's while its file is `processing`,
//! and what LiveKit says is applied exactly as its webhook would be (the same changes and
//! events, once). A sweep reads LiveKit's active egresses once, whatever the number of streams
//! it checks; only an egress missing from that list (ended, or never known) is read by its id.
//! An egress LiveKit no longer knows after [`LOST_AFTER_READS`] read-backs counts as ended:
//! what it was for fails with `egress_lost`, or is started again while the show is live.

use std::collections::HashMap;

use super::{apply_report, change, egress_ended};
use crate::app::App;
use crate::service::streams;
use hosting_domain::error::StoreError;
use hosting_domain::ports::{EgressError, EgressReport, Outcome, RoomProvider};
use hosting_domain::recording::RecordingStatus;
use hosting_domain::stream::{EGRESS_CALL_TIMEOUT, EGRESS_LOST, EgressKind, LOST_AFTER_READS};
use hosting_domain::{Stream, TimerKind};

/// LiveKit's active egresses, read at most once per sweep (or per timer), on first need, and
/// shared by the sweep's concurrent read-backs.
#[derive(Default)]
pub struct ActiveEgresses {
    read: tokio::sync::OnceCell<Result<HashMap<String, EgressReport>, EgressError>>,
}

impl ActiveEgresses {
    pub fn new() -> Self {
        Self::default()
    }

    /// The active egresses by id; an error when LiveKit could not be read this time.
    async fn by_id(
        &self,
        rooms: &dyn RoomProvider,
    ) -> &Result<HashMap<String, EgressReport>, EgressError> {
        self.read
            .get_or_init(|| async {
                tokio::time::timeout(EGRESS_CALL_TIMEOUT, rooms.active_egresses())
                    .await
                    .unwrap_or_else(|_| {
                        Err(EgressError::Failed(format!(
                            "ListEgress: no answer within {} s",
                            EGRESS_CALL_TIMEOUT.as_secs()
                        )))
                    })
                    .map(|reports| {
                        reports
                            .into_iter()
                            .map(|report| (report.egress_id.clone(), report))
                            .collect()
                    })
            })
            .await
    }
}

/// The read-back `stream` has due: claimed (the next one armed), then each of its egresses
/// read and applied; `true` when this call claimed it.
pub async fn check(
    app: &App,
    stream: &Stream,
    active: &ActiveEgresses,
) -> Result<bool, StoreError> {
    let now = app.clock.now();
    let next = now + chrono::TimeDelta::from_std(app.config.egress_reconcile).unwrap_or_default();
    let Outcome::Applied((_, claimed)) = change(app, stream, None, None, |s| {
        s.with_egress_check_claimed(now, next)
    })
    .await?
    else {
        return Ok(false);
    };
    let Some(rooms) = app.rooms.as_deref() else {
        return Ok(true);
    };
    let listed = match active.by_id(rooms).await {
        Ok(listed) => listed.clone(),
        Err(err) => {
            // Not counted against any egress: LiveKit is read again at the next check.
            tracing::warn!(stream_id = %claimed.id, error = %err, "egresses not read back; tried again later");
            return Ok(true);
        }
    };
    for (kind, egress_id) in claimed.egresses_to_check() {
        let report = match listed.get(&egress_id) {
            Some(report) => Some(report.clone()),
            None => {
                let read = tokio::time::timeout(EGRESS_CALL_TIMEOUT, rooms.egress(&egress_id))
                    .await
                    .unwrap_or_else(|_| {
                        Err(EgressError::Failed("ListEgress: no answer".to_owned()))
                    });
                match read {
                    Ok(report) => report,
                    Err(err) => {
                        tracing::warn!(stream_id = %claimed.id, egress_id, error = %err, "egress not read back; tried again later");
                        continue;
                    }
                }
            }
        };
        match report {
            Some(report) => {
                found(app, &claimed, kind, &egress_id).await?;
                apply_report(app, &claimed, &report, None).await?;
            }
            None => unknown(app, &claimed, kind, &egress_id).await?,
        }
    }
    Ok(true)
}

/// LiveKit knows the egress: a count of reads that did not find it starts again.
async fn found(
    app: &App,
    stream: &Stream,
    kind: EgressKind,
    egress_id: &str,
) -> Result<(), StoreError> {
    change(app, stream, None, None, |s| {
        let mut next = s.clone();
        let counter = lost_reads(&mut next, kind, egress_id)?;
        if *counter == 0 {
            return None;
        }
        *counter = 0;
        next.revision += 1;
        Some(next)
    })
    .await?;
    Ok(())
}

/// LiveKit does not know the egress: counted, and past [`LOST_AFTER_READS`] in a row, ended
/// as lost.
async fn unknown(
    app: &App,
    stream: &Stream,
    kind: EgressKind,
    egress_id: &str,
) -> Result<(), StoreError> {
    let now = app.clock.now();
    let outcome = change(app, stream, None, None, |s| {
        let mut next = s.clone();
        let counter = lost_reads(&mut next, kind, egress_id)?;
        *counter += 1;
        if *counter >= LOST_AFTER_READS {
            if kind == EgressKind::Recording
                && let Some(file) = next
                    .egress
                    .recording
                    .as_mut()
                    .and_then(|r| r.file_of_egress_mut(egress_id))
            {
                file.fail(EGRESS_LOST);
            }
            egress_ended(&mut next, kind, false, Some(EGRESS_LOST), now);
        }
        next.revision += 1;
        Some(next)
    })
    .await?;
    if let Outcome::Applied((before, after)) = &outcome {
        if after.egress.due_at.is_some() && before.egress.due_at.is_none() {
            streams::schedule_kinds(app, after, &[TimerKind::EgressStart]).await;
        }
        if before.egress_kind(egress_id).is_some() && after.egress_kind(egress_id).is_none() {
            tracing::error!(stream_id = %after.id, egress_id, "egress lost: LiveKit no longer knows it");
        }
    }
    Ok(())
}

/// The count of read-backs that did not find `egress_id`, when it is still the stream's egress
/// of `kind`.
fn lost_reads<'a>(
    stream: &'a mut Stream,
    kind: EgressKind,
    egress_id: &str,
) -> Option<&'a mut u32> {
    match kind {
        EgressKind::Destinations => (stream.egress.id.as_deref() == Some(egress_id))
            .then_some(&mut stream.egress.lost_reads),
        EgressKind::Recording => stream
            .egress
            .recording
            .as_mut()?
            .file_of_egress_mut(egress_id)
            .filter(|f| {
                matches!(
                    f.status,
                    RecordingStatus::Recording | RecordingStatus::Processing
                )
            })
            .map(|f| &mut f.lost_reads),
    }
}
