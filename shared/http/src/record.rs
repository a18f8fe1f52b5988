//! What [`crate::Edge`] writes about a request once it is answered, noted from inside the
//! router: the standing the pipeline counted it at (the rate-limit headers), and for the
//! access log the route it matched and the brand it was admitted for. The caller the pipeline
//! admitted waits here for the handler ([`crate::routes::Admitted`]).

use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::MatchedPath;
use axum::http::HeaderMap;

use hosting_app::ratelimit::Standing;
use hosting_domain::Caller;
use hosting_domain::account::Brand;

/// One record per request, shared by the edge and the router: one request extension and one
/// allocation, where an extension per fact and the answer's own extensions cost several.
#[derive(Clone, Default)]
pub struct RequestRecord(Arc<Mutex<Noted>>);

#[derive(Default)]
pub(crate) struct Noted {
    pub(crate) standing: Option<Standing>,
    pub(crate) route: Option<MatchedPath>,
    pub(crate) brand: Option<Arc<Brand>>,
    caller: Option<Caller>,
}

impl RequestRecord {
    fn noted(&self) -> MutexGuard<'_, Noted> {
        // A panic while noting leaves nothing half-written: each note is one assignment.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The standing the request was counted at.
    pub(crate) fn note_standing(&self, standing: Standing) {
        self.noted().standing = Some(standing);
    }

    /// The route template the request matched.
    pub(crate) fn note_route(&self, route: Option<MatchedPath>) {
        if route.is_some() {
            self.noted().route = route;
        }
    }

    /// The caller the pipeline admitted, and its brand for the access log.
    pub(crate) fn note_admitted(&self, caller: Caller) {
        let mut noted = self.noted();
        noted.brand = Some(caller.brand.clone());
        noted.caller = Some(caller);
    }

    /// The caller the pipeline admitted, for the handler (once).
    pub(crate) fn take_caller(&self) -> Option<Caller> {
        self.noted().caller.take()
    }

    /// Everything noted, once the request is answered.
    pub(crate) fn take(&self) -> Noted {
        std::mem::take(&mut *self.noted())
    }
}

impl Noted {
    /// `RateLimit-Policy` and `RateLimit` for the standing noted, if the request was counted.
    pub(crate) fn write_standing(&self, headers: &mut HeaderMap) {
        if let Some(standing) = self.standing {
            standing.write(headers);
        }
    }
}
