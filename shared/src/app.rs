//! The application: configuration, clock and ports, assembled once per process and shared by
//! every handler.

use std::ops::Deref;
use std::sync::Arc;

use crate::clock::Clock;
use crate::config::Config;
use crate::ports::{DeliveryQueue, RoomProvider, Store, Timers};

pub struct AppParts {
    pub config: Config,
    pub clock: Arc<dyn Clock>,
    pub store: Arc<dyn Store>,
    pub timers: Arc<dyn Timers>,
    pub queue: Arc<dyn DeliveryQueue>,
    /// `None` when no room provider is configured: live-key starts fail with `launch_failed`.
    pub rooms: Option<Arc<dyn RoomProvider>>,
}

/// Cheap to clone; handlers receive it as axum state.
#[derive(Clone)]
pub struct App(Arc<AppParts>);

impl App {
    pub fn new(parts: AppParts) -> Self {
        Self(Arc::new(parts))
    }
}

impl Deref for App {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0
    }
}
