//! How a process runs the application: the top layer, which wires the adapters to the
//! application and nothing imports.
//!
//! Here, the local runtime: an [`App`] on the backends the configuration names, with embedded
//! fallbacks for whatever is not named, plus the background loops that a single process runs
//! in place of AWS's separate functions: the timers, the deadline sweep, the outbox relay and
//! the delivery worker. The local server and the test suite run on this. Lambda has its own
//! wiring, with no fallback ([`lambda`]), and the SQS batch handler that the delivery function
//! and the local worker share ([`sqs_worker`]).

mod allocator;
pub mod clip_worker;
pub mod lambda;
pub mod local_scheduler;
pub mod sqs_worker;
pub mod telemetry;

pub use allocator::Allocator;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use hosting_app::app::{App, AppParts};
use hosting_app::delivery::{Deliverer, parking, relay, worker};
use hosting_app::secrets::LocalKeyVault;
use hosting_app::service;
use hosting_aws::dynamodb::DynamoStore;
use hosting_aws::kms::KmsKeyVault;
use hosting_aws::s3::S3Recordings;
use hosting_aws::scheduler::{SchedulerTimers, TimerQueue};
use hosting_aws::sqs::{SqsClipQueue, SqsQueue};
use hosting_domain::clock::Clock;
use hosting_domain::ports::{
    ClipQueue, DeliveryQueue, KeyVault, RecordingStorage, RoomProvider, Store, Timers,
};
use hosting_embedded::{
    EmbeddedClipQueue, EmbeddedQueue, EmbeddedStore, EmbeddedTimers, FolderRecordings,
};
use hosting_support::config::{ApiSecret, Config, RECORDING_UPLOAD_KEY_PARAMETER, StoreKind};

/// How often the background loops look again when nothing wakes them.
const POLL: Duration = Duration::from_millis(250);
/// The show sweep's shortest sleep, so that it never spins on a moment it just reached.
const SHOW_SWEEP_MIN_WAIT: Duration = Duration::from_millis(500);
/// Deliveries the local server attempts at once: like the delivery function's instances, a
/// fixed pool that every brand shares, and that no brand can fill (see
/// [`worker::BRAND_DELIVERY_SLOTS`]).
pub const LOCAL_DELIVERIES_IN_FLIGHT: usize = 32;

/// The local server's folder of recordings, its URLs signed for the server's own address
/// (`PUBLIC_BASE_URL` without the API's prefix).
pub fn folder_recordings(config: &Config, clock: Arc<dyn Clock>) -> FolderRecordings {
    let base = config
        .public_base_url
        .as_deref()
        .map(|url| url.trim_end_matches(hosting_domain::API_PREFIX))
        .unwrap_or("http://127.0.0.1:8080");
    FolderRecordings::new(config.recordings.dir.clone(), base, clock)
}

/// Where deliveries wait in this process.
#[derive(Clone)]
pub enum LocalQueue {
    Embedded(EmbeddedQueue),
    Sqs(SqsQueue),
}

/// Where cuts wait (docs/clips.md): in the process, or SQS when `CLIPS_QUEUE_URL` is set.
#[derive(Clone)]
pub enum LocalClipQueue {
    Embedded(EmbeddedClipQueue),
    Sqs(SqsClipQueue),
}

#[derive(Clone)]
pub struct Runtime {
    pub app: App,
    /// In-process timers; `None` when EventBridge Scheduler runs them.
    pub timers: Option<EmbeddedTimers>,
    pub queue: LocalQueue,
    pub clip_queue: LocalClipQueue,
    /// The embedded store, when that is the backend.
    pub embedded: Option<EmbeddedStore>,
    /// Scheduler timers, when they run them: the local server runs their schedules and queue
    /// ([`local_scheduler`]).
    pub scheduler: Option<SchedulerTimers>,
}

pub struct Parts {
    pub store: Arc<dyn Store>,
    pub embedded: Option<EmbeddedStore>,
    pub queue: LocalQueue,
    /// `None`: cuts queued in the process.
    pub clip_queue: Option<SqsClipQueue>,
    /// `None`: in-process timers.
    pub scheduler: Option<SchedulerTimers>,
    /// `None`: the folder of `RECORDINGS_DIR`, served by the local server.
    pub recordings: Option<Arc<dyn RecordingStorage>>,
    /// The stack's key for secrets at rest; `None`: a key of the process
    /// ([`hosting_app::secrets::LocalKeyVault`]), for the embedded store.
    pub vault: Option<Arc<dyn KeyVault>>,
}

impl Runtime {
    /// Everything in memory.
    pub fn embedded(
        config: Config,
        clock: Arc<dyn Clock>,
        rooms: Option<Arc<dyn RoomProvider>>,
    ) -> Self {
        let store = EmbeddedStore::new();
        Self::assemble(
            config,
            clock,
            rooms,
            Parts {
                store: Arc::new(store.clone()),
                embedded: Some(store),
                queue: LocalQueue::Embedded(EmbeddedQueue::new()),
                clip_queue: None,
                scheduler: None,
                recordings: None,
                vault: None,
            },
        )
    }

    pub fn assemble(
        config: Config,
        clock: Arc<dyn Clock>,
        rooms: Option<Arc<dyn RoomProvider>>,
        parts: Parts,
    ) -> Self {
        let memory_timers = parts.scheduler.is_none().then(EmbeddedTimers::new);
        let scheduler = parts.scheduler.clone();
        let timers: Arc<dyn Timers> = match (&parts.scheduler, &memory_timers) {
            (Some(scheduler), _) => Arc::new(scheduler.clone()),
            (None, Some(embedded)) => Arc::new(embedded.clone()),
            (None, None) => unreachable!("one of them is set"),
        };
        let queue: Arc<dyn DeliveryQueue> = match &parts.queue {
            LocalQueue::Embedded(queue) => Arc::new(queue.clone()),
            LocalQueue::Sqs(queue) => Arc::new(queue.clone()),
        };
        let clip_queue = match parts.clip_queue {
            Some(queue) => LocalClipQueue::Sqs(queue),
            None => LocalClipQueue::Embedded(EmbeddedClipQueue::new()),
        };
        let clip_queue_port: Arc<dyn ClipQueue> = match &clip_queue {
            LocalClipQueue::Embedded(queue) => Arc::new(queue.clone()),
            LocalClipQueue::Sqs(queue) => Arc::new(queue.clone()),
        };
        let recordings = parts.recordings.unwrap_or_else(|| {
            Arc::new(folder_recordings(&config, clock.clone())) as Arc<dyn RecordingStorage>
        });
        let vault = parts
            .vault
            .unwrap_or_else(|| Arc::new(LocalKeyVault::new()) as Arc<dyn KeyVault>);
        let app = App::new(AppParts {
            config,
            clock,
            store: parts.store,
            timers,
            queue,
            clip_queue: clip_queue_port,
            rooms,
            recordings,
            vault,
        });
        Self {
            app,
            timers: memory_timers,
            queue: parts.queue,
            clip_queue,
            embedded: parts.embedded,
            scheduler,
        }
    }

    /// The backends `config` names: `STORE=embedded`, or DynamoDB with SQS deliveries when
    /// `DELIVERY_QUEUE_URL` is set and Scheduler timers when `SCHEDULER_GROUP` is set;
    /// in-process ones otherwise.
    pub async fn from_config(mut config: Config, clock: Arc<dyn Clock>) -> Result<Self, String> {
        if config.store == StoreKind::Embedded {
            let rooms = hosting_livekit::rooms_from_config(&config);
            return Ok(Self::embedded(config, clock, rooms));
        }
        let sdk = hosting_aws::sdk_config().await.map_err(|e| e.to_string())?;
        // The egress's upload key pair, as in Lambda: from SSM only, never from a variable.
        if let Some(parameter) = std::env::var(RECORDING_UPLOAD_KEY_PARAMETER)
            .ok()
            .filter(|name| !name.trim().is_empty())
        {
            let ssm = hosting_aws::ssm::client(&sdk).map_err(|e| e.to_string())?;
            let pair = hosting_aws::ssm::read_secure_string(&ssm, parameter.trim())
                .await
                .map_err(|e| e.to_string())?;
            config.recordings.upload_key = Some(ApiSecret::known(pair));
        }
        let rooms = hosting_livekit::rooms_from_config(&config);
        let table = config
            .table_name
            .clone()
            .ok_or("TABLE_NAME is required with STORE=dynamodb")?;
        let vault = KmsKeyVault::new(
            hosting_aws::kms::client(&sdk),
            config
                .secrets_key_id
                .clone()
                .unwrap_or_else(|| hosting_aws::kms::default_alias(&table)),
            table.clone(),
        );
        let store = DynamoStore::new(hosting_aws::dynamodb_client(&sdk), table);
        let queue = match (&config.delivery_queue_url, &config.delivery_dlq_url) {
            (Some(queue), Some(dlq)) => LocalQueue::Sqs(SqsQueue::new(
                aws_sdk_sqs::Client::new(&sdk),
                queue.clone(),
                dlq.clone(),
            )),
            (Some(_), None) => {
                return Err("DELIVERY_DLQ_URL is required with DELIVERY_QUEUE_URL".into());
            }
            _ => LocalQueue::Embedded(EmbeddedQueue::new()),
        };
        let scheduler = match (
            &config.scheduler_group,
            &config.scheduler_target_arn,
            &config.scheduler_role_arn,
            &config.scheduler_dlq_arn,
            &config.timer_queue_url,
        ) {
            (Some(group), Some(target), Some(role), Some(dlq), Some(handover)) => {
                Some(SchedulerTimers::new(
                    aws_sdk_scheduler::Client::new(&sdk),
                    group.clone(),
                    target.clone(),
                    role.clone(),
                    dlq.clone(),
                    TimerQueue::new(
                        aws_sdk_sqs::Client::new(&sdk),
                        handover.clone(),
                        clock.clone(),
                    ),
                ))
            }
            (None, None, None, None, None) => None,
            _ => {
                return Err(
                    "SCHEDULER_GROUP, SCHEDULER_TARGET_ARN, SCHEDULER_ROLE_ARN, \
                     SCHEDULER_DLQ_ARN and TIMER_QUEUE_URL go together"
                        .into(),
                );
            }
        };
        let clip_queue = config
            .clips_queue_url
            .clone()
            .map(|url| SqsClipQueue::new(aws_sdk_sqs::Client::new(&sdk), url));
        let recordings = match config.recordings.bucket.clone() {
            Some(bucket) => {
                let recordings = S3Recordings::new(hosting_aws::s3::client(&sdk), bucket);
                let recordings = match &config.recordings.download_role {
                    Some(role) => recordings.signing_as(&sdk, role),
                    None => recordings.signing_with(&sdk),
                };
                Some(Arc::new(recordings) as Arc<dyn RecordingStorage>)
            }
            None => None,
        };
        Ok(Self::assemble(
            config,
            clock,
            rooms,
            Parts {
                store: Arc::new(store),
                embedded: None,
                queue,
                clip_queue,
                scheduler,
                recordings,
                vault: Some(Arc::new(vault)),
            },
        ))
    }

    /// Fires every in-process timer due by the app's clock; returns how many changed a stream.
    pub async fn fire_due_timers(&self) -> usize {
        let Some(timers) = &self.timers else {
            return 0;
        };
        let mut changed = 0;
        for timer in timers.take_due(self.app.clock.now()) {
            match service::timers::fire(&self.app, &timer).await {
                Ok(true) => changed += 1,
                Ok(false) => {}
                Err(err) => {
                    tracing::error!(stream_id = %timer.stream_id, error = %err, "timer failed; retrying");
                    // Put it back so the next pass retries it.
                    let _ = timers.schedule(timer).await;
                }
            }
        }
        changed
    }

    /// Runs the in-process timers on the app's clock, forever.
    async fn run_timers(self, timers: EmbeddedTimers) {
        let changed = timers.changed();
        loop {
            self.fire_due_timers().await;
            let wait = timers
                .next_due()
                .and_then(|due| (due - self.app.clock.now()).to_std().ok())
                .map_or(POLL, |until| until.min(POLL));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = changed.notified() => {}
            }
        }
    }

    /// Ends streams past their deadline whose timer was lost (a restart loses in-process
    /// timers), every `SWEEP_INTERVAL_SECS`, forever.
    async fn run_deadline_sweep(self) {
        loop {
            tokio::time::sleep(self.app.config.sweep_interval).await;
            if let Err(err) = service::timers::sweep(&self.app).await {
                tracing::error!(error = %err, "deadline sweep failed; retrying");
            }
        }
    }

    /// Starts scheduled shows and sends their reminders when their timers are lost (a restart
    /// loses in-process timers), waking at the next show's moment and at least every
    /// `SWEEP_INTERVAL_SECS`: with the sweep alone a show starts at its time.
    async fn run_show_sweep(self) {
        let interval = self.app.config.sweep_interval;
        loop {
            if let Err(err) = service::shows::sweep(&self.app).await {
                tracing::error!(error = %err, "show sweep failed; retrying");
            }
            let wait = match service::shows::next_moment(&self.app, interval).await {
                Ok(Some(at)) => (at - self.app.clock.now()).to_std().unwrap_or_default(),
                Ok(None) => interval,
                Err(err) => {
                    tracing::error!(error = %err, "show sweep could not look ahead; retrying");
                    interval
                }
            };
            tokio::time::sleep(wait.clamp(SHOW_SWEEP_MIN_WAIT, interval)).await;
        }
    }

    /// Hands parked deliveries whose wake-up is due to their brand's free slots, every
    /// `SWEEP_INTERVAL_SECS`, forever: the hand-overs a release did not make (a process killed
    /// holding a slot).
    async fn run_parked_sweep(self) {
        loop {
            tokio::time::sleep(self.app.config.sweep_interval).await;
            if let Err(err) = parking::sweep(&self.app).await {
                tracing::error!(error = %err, "parked-delivery sweep failed; retrying");
            }
        }
    }

    /// Relays the outbox to the delivery queue, forever. In one process nothing else relays,
    /// so events are taken as soon as they are written.
    async fn run_relay(self) {
        let ready = self.embedded.as_ref().map(EmbeddedStore::outbox_ready);
        loop {
            if let Err(err) = relay::sweep(&self.app, Duration::ZERO).await {
                tracing::error!(error = %err, "outbox relay failed; retrying");
            }
            match &ready {
                Some(ready) => {
                    tokio::select! {
                        _ = tokio::time::sleep(POLL) => {}
                        _ = ready.notified() => {}
                    }
                }
                None => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// Delivers queued deliveries, each in its own task, at most
    /// [`LOCAL_DELIVERIES_IN_FLIGHT`] at once (the local counterpart of the delivery
    /// function's concurrency): one slow receiver holds one worker, and a brand at most
    /// [`worker::BRAND_DELIVERY_SLOTS`] of them.
    async fn run_deliveries(self, deliverer: Deliverer) {
        let in_flight = Arc::new(Semaphore::new(LOCAL_DELIVERIES_IN_FLIGHT));
        match self.queue.clone() {
            LocalQueue::Embedded(queue) => {
                let Some(mut ready) = queue.take_receiver() else {
                    tracing::error!("the delivery loop is already running");
                    return;
                };
                while let Some(delivery) = ready.recv().await {
                    let Ok(permit) = in_flight.clone().acquire_owned().await else {
                        return;
                    };
                    let (app, deliverer) = (self.app.clone(), deliverer.clone());
                    tokio::spawn(async move {
                        let _permit = permit;
                        if let Err(err) = worker::process(&app, &deliverer, delivery.clone()).await
                        {
                            tracing::error!(event_id = %delivery.event_id, error = %err, "delivery failed; requeued");
                            let _ = app.queue.enqueue(delivery, POLL).await;
                        }
                    });
                }
            }
            LocalQueue::Sqs(queue) => loop {
                if let Err(err) =
                    sqs_worker::poll_once(&self.app, &queue, &deliverer, &in_flight).await
                {
                    tracing::error!(error = %err, "delivery queue poll failed");
                    tokio::time::sleep(POLL).await;
                }
            },
        }
    }

    /// Starts every background loop; they stop when the returned handles are aborted.
    pub fn spawn_background(&self, deliverer: Deliverer) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = vec![
            tokio::spawn(self.clone().run_relay()),
            tokio::spawn(self.clone().run_deliveries(deliverer)),
            tokio::spawn(self.clone().run_deadline_sweep()),
            tokio::spawn(self.clone().run_parked_sweep()),
            tokio::spawn(self.clone().run_show_sweep()),
            tokio::spawn(clip_worker::run_local(
                self.app.clone(),
                self.clip_queue.clone(),
            )),
        ];
        if let Some(timers) = self.timers.clone() {
            tasks.push(tokio::spawn(self.clone().run_timers(timers)));
        }
        if let Some(scheduler) = &self.scheduler {
            tasks.push(tokio::spawn(local_scheduler::run_schedules(
                self.app.clone(),
                scheduler.client().clone(),
                scheduler.group().to_owned(),
                local_scheduler::Draws::default(),
            )));
            tasks.push(tokio::spawn(local_scheduler::run_timer_queue(
                self.app.clone(),
                scheduler.handover().client().clone(),
                scheduler.handover().url().to_owned(),
            )));
        }
        tasks
    }
}
