//! The request pipeline of every keyed endpoint (docs/request-pipeline.md, "The order of checks"),
//! in this order: authentication, rate limit, scope, plan gate. Routing has already happened;
//! request validation and the operation come after.
//!
//! Each endpoint's declaration ([`super::endpoints`]) names the scope it needs; the router
//! runs this pipeline before the handler ([`super::routes`]).
//!
//! A brand refused earlier in the minute on this instance is refused at once, with no count
//! and no read for the operation ([`hosting_app::ratelimit::Refusals`]). Otherwise writes are counted
//! first. A read (`GET`, `HEAD`), and a start (`POST /streams`), that passes everything but
//! the count is counted while its handler runs ([`DeferredCount`]): the handler's cheap reads
//! go alongside the count, and the reads that grow with what they return, and every write,
//! wait for its admission ([`hosting_support::admission`]). When the count refuses, the handler is
//! dropped and `429` answers in its place: the same answer, and its costly reads and its
//! writes never made.
//!
//! Whichever way a request was counted, the standing it was counted at is noted in its
//! [`RequestRecord`], and the edge writes it onto the answer (`RateLimit-Policy`,
//! `RateLimit`): every answer to a request that passed authentication, and no other.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::response::Response;
use chrono::{DateTime, Utc};

use hosting_app::app::App;
use hosting_app::ratelimit::{self, Standing};
use hosting_domain::account::{self, KeyEnvironment};
use hosting_domain::error::{ApiError, ApiResult, StoreError};
use hosting_domain::{Brand, Caller, Scope};
use hosting_support::admission;

use crate::record::RequestRecord;

/// The pipeline of a keyed endpoint's request, recording its standing in `slot`. A request
/// counted `alongside` its handler (every read, and the writes whose declaration says so)
/// that passes everything else comes back with its count still to run.
pub async fn admit(
    app: &App,
    headers: &HeaderMap,
    scope: Scope,
    alongside: bool,
    slot: &RequestRecord,
) -> ApiResult<(Caller, Option<DeferredCount>)> {
    authorize_with(app, headers, scope, slot, alongside).await
}

/// Runs authentication, rate limit, scope check and plan gate, in that order.
pub async fn authorize(app: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Caller> {
    let (caller, _) = authorize_with(app, headers, scope, &RequestRecord::default(), false).await?;
    Ok(caller)
}

/// [`authorize`], recording the standing in `slot`; a read (`defer`) that passes everything
/// else is given its count to run alongside the handler.
async fn authorize_with(
    app: &App,
    headers: &HeaderMap,
    scope: Scope,
    slot: &RequestRecord,
    defer: bool,
) -> ApiResult<(Caller, Option<DeferredCount>)> {
    // The request's time: its key's validity, its rate-limit window and any refusal
    // remembered are all judged at the one instant, read once.
    let now = app.clock.now();
    let (caller, counted) = authenticate(app, headers, slot, now).await?;
    let refusal = if !caller.key.has_scope(scope) {
        Some(ApiError::InsufficientScope(scope))
    } else if caller.environment == KeyEnvironment::Live && !caller.brand.plan.allows_live_keys() {
        Some(ApiError::PlanRequired)
    } else {
        None
    };
    let mut deferred = None;
    if !counted {
        // 429 comes before 403 and 402.
        if let Some(standing) = remembered_refusal(app, &caller.brand.id, slot, now) {
            standing.admit()?;
        }
        match (defer, &refusal) {
            (true, None) => {
                deferred = Some(DeferredCount {
                    app: app.clone(),
                    brand: caller.brand.clone(),
                    slot: slot.clone(),
                    now,
                })
            }
            // A refusal waits for the count.
            _ => count_request(app, &caller.brand.id, slot, now).await?,
        }
    }
    match refusal {
        Some(refusal) => Err(refusal),
        None => Ok((caller, deferred)),
    }
}

/// The standing of a brand this instance saw refused earlier in the minute, recorded in
/// `slot`: the request is refused without a count.
fn remembered_refusal(
    app: &App,
    brand_id: &str,
    slot: &RequestRecord,
    now: DateTime<Utc>,
) -> Option<Standing> {
    let standing = app.caches().refusals.standing(brand_id, now)?;
    slot.note_standing(standing);
    Some(standing)
}

/// The count of a read that passed everything else, to run alongside its handler.
pub struct DeferredCount {
    app: App,
    /// Shared with the caller: the count needs only its id.
    brand: Arc<Brand>,
    slot: RequestRecord,
    now: DateTime<Utc>,
}

impl DeferredCount {
    /// Runs `handler` alongside the count, in this task. The handler's reads that wait for
    /// admission ([`admission::admitted`]) run once the count admits the request. A refused
    /// count drops the handler wherever it is and answers `429` (a failed count: `500`).
    pub async fn alongside(self, handler: impl Future<Output = Response>) -> Response {
        let (admission, gate) = admission::gate();
        let mut handler = pin!(admission::behind(gate, handler));
        let mut count = pin!(count(&self.app, &self.brand.id, self.now));
        let mut answered = None;
        // The handler goes first, up to its first gated read, so that its cheap reads leave
        // with the count.
        let counted = loop {
            tokio::select! {
                biased;
                response = &mut handler, if answered.is_none() => answered = Some(response),
                counted = &mut count => break counted,
            }
        };
        let standing = match counted {
            Ok(standing) => standing,
            Err(err) => return crate::error_response(&ApiError::Db(err)),
        };
        self.slot.note_standing(standing);
        if let Err(refusal) = standing.admit() {
            return crate::error_response(&refusal);
        }
        // Admitted from this task, which polls the handler next itself: its waits are not
        // woken (`Admission::admit`).
        std::future::poll_fn(|cx| {
            admission.admit(cx.waker());
            std::task::Poll::Ready(())
        })
        .await;
        match answered {
            Some(response) => response,
            None => handler.await,
        }
    }
}

/// Authentication, and on a cold cache the rate limit too (`true` when counted). Every way of
/// failing authentication gives the same `ApiError::Unauthorized`, so the same bytes, and
/// counts for nobody.
async fn authenticate(
    app: &App,
    headers: &HeaderMap,
    slot: &RequestRecord,
    now: DateTime<Utc>,
) -> ApiResult<(Caller, bool)> {
    let raw_key = bearer_token(headers).ok_or(ApiError::Unauthorized)?;
    // Malformed keys never reach the store.
    let environment = account::parse_key(raw_key).ok_or(ApiError::Unauthorized)?;
    let key_digest = account::key_digest(raw_key);
    let cache = &app.caches().keys;
    let (key, brand, counted) = match cache.get(&key_digest, now) {
        // Warm: the key and its brand come from the cache (revocations apply within its TTL).
        Some(cached) => {
            let (key, brand) = cached
                .filter(|(key, _)| key.is_usable_at(now))
                .ok_or(ApiError::Unauthorized)?;
            (key, brand, false)
        }
        // Cold: once the key names its brand, the brand is read while the request is counted,
        // one round trip instead of two. A key whose brand is gone counts for a brand that
        // does not exist, so still for nobody.
        None => {
            let key_hash = account::key_hash_text(&key_digest);
            let Some(key) = app.accounts().find_api_key(&key_hash).await? else {
                cache.put(key_digest, None, now);
                return Err(ApiError::Unauthorized);
            };
            // Revoked and expired keys never become usable again: remembered as absent.
            if !key.is_usable_at(now) {
                cache.put(key_digest, None, now);
                return Err(ApiError::Unauthorized);
            }
            // A brand refused earlier in the minute is not counted: only the brand is read.
            let refused = app.caches().refusals.standing(&key.brand_id, now).is_some();
            let counting = async {
                match refused {
                    true => Ok(false),
                    false => count_request(app, &key.brand_id, slot, now)
                        .await
                        .map(|()| true),
                }
            };
            let (brand, counted) = tokio::join!(app.accounts().get_brand(&key.brand_id), counting);
            let found = brand?.map(|brand| (Arc::new(key), Arc::new(brand)));
            cache.put(key_digest, found.clone(), now);
            let (key, brand) = found.ok_or(ApiError::Unauthorized)?;
            (key, brand, counted?)
        }
    };
    let caller = Caller {
        brand,
        key,
        environment,
    };
    Ok((caller, counted))
}

/// Counts the request (made at `now`) now, recording its standing in `slot`.
async fn count_request(
    app: &App,
    brand_id: &str,
    slot: &RequestRecord,
    now: DateTime<Utc>,
) -> ApiResult<()> {
    let standing = count(app, brand_id, now).await?;
    slot.note_standing(standing);
    standing.admit()
}

/// Counts one request of `brand_id` made at `now`; a refusal is remembered for the rest of
/// its minute.
async fn count(app: &App, brand_id: &str, now: DateTime<Utc>) -> Result<Standing, StoreError> {
    let standing = ratelimit::count(app.rate_limits(), brand_id, now).await?;
    if standing.refuses() {
        app.caches().refusals.remember(brand_id, now);
    }
    Ok(standing)
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, value.parse().unwrap());
        h
    }

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("BEARER  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic abc")), None);
        assert_eq!(bearer_token(&headers("Bearer")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
