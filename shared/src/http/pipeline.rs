//! The request pipeline of every keyed endpoint (decisions.md section 1), in this order:
//! authentication, rate limit, scope, plan gate. Routing has already happened; request
//! validation and the operation come after.
//!
//! Each endpoint's declaration ([`super::endpoints`]) names the scope it needs; the router
//! runs this pipeline before the handler ([`super::routes`]).
//!
//! A read (`GET`, `HEAD`) that passes everything but the count is counted while its handler
//! runs, and [`settle_count`] answers `429` in place of the handler's response when the count
//! refuses: the same answer, one store round trip sooner. Writes are counted first.
//!
//! Whichever way a request was counted, [`settle_count`] writes the standing it was counted at
//! onto the answer (`RateLimit-Policy`, `RateLimit`): every answer to a request that passed
//! authentication, and no other.

use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::task::JoinHandle;

use crate::app::App;
use crate::domain::account::{self, KeyEnvironment};
use crate::domain::{Caller, Scope};
use crate::error::{ApiError, ApiResult, StoreError};
use crate::ratelimit::{self, Standing};

/// The pipeline of a keyed endpoint's request, recording its count in `slot`. A read (`GET`,
/// `HEAD`) that passes everything else is counted while its handler runs.
pub async fn admit(
    app: &App,
    headers: &HeaderMap,
    method: &Method,
    scope: Scope,
    slot: &RequestCount,
) -> ApiResult<Caller> {
    let defer = matches!(*method, Method::GET | Method::HEAD);
    authorize_with(app, headers, scope, slot, defer).await
}

/// Runs authentication, rate limit, scope check and plan gate, in that order.
pub async fn authorize(app: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Caller> {
    authorize_with(app, headers, scope, &RequestCount::default(), false).await
}

/// [`authorize`], recording the count in `slot`; a read (`defer`) that passes everything
/// else is counted while its handler runs.
async fn authorize_with(
    app: &App,
    headers: &HeaderMap,
    scope: Scope,
    slot: &RequestCount,
    defer: bool,
) -> ApiResult<Caller> {
    let (caller, counted) = authenticate(app, headers, slot).await?;
    let refusal = if !caller.key.has_scope(scope) {
        Some(ApiError::InsufficientScope(scope))
    } else if caller.environment == KeyEnvironment::Live && !caller.brand.plan.allows_live_keys() {
        Some(ApiError::PlanRequired)
    } else {
        None
    };
    if !counted {
        match (defer, &refusal) {
            (true, None) => slot.start(app, &caller.brand.id),
            // 429 comes before 403 and 402, so a refusal waits for the count.
            _ => count_request(app, &caller.brand.id, slot).await?,
        }
    }
    match refusal {
        Some(refusal) => Err(refusal),
        None => Ok(caller),
    }
}

/// The rate-limit count of one request: its standing once counted, or the count of a read
/// still running while its handler does.
#[derive(Clone, Default)]
pub struct RequestCount(Arc<Mutex<CountState>>);

#[derive(Default)]
struct CountState {
    standing: Option<Standing>,
    running: Option<JoinHandle<Result<Standing, StoreError>>>,
}

impl RequestCount {
    fn lock(&self) -> std::sync::MutexGuard<'_, CountState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, standing: Standing) {
        self.lock().standing = Some(standing);
    }

    fn start(&self, app: &App, brand_id: &str) {
        let (app, brand_id) = (app.clone(), brand_id.to_owned());
        let count = tokio::spawn(async move {
            ratelimit::count(app.store.as_ref(), &brand_id, app.clock.now()).await
        });
        self.lock().running = Some(count);
    }

    /// `response` with the standing's headers, or `429` in its place when a read's count
    /// refused it (a failed count: `500`).
    async fn settle(self, response: Response) -> Response {
        let running = self.lock().running.take();
        let mut response = match running {
            None => response,
            Some(count) => match count.await {
                Ok(Ok(standing)) => {
                    self.record(standing);
                    match standing.admit() {
                        Ok(()) => response,
                        Err(refusal) => refusal.into_response(),
                    }
                }
                Ok(Err(err)) => return ApiError::Db(err).into_response(),
                Err(err) => {
                    return ApiError::Db(StoreError::Backend(err.to_string())).into_response();
                }
            },
        };
        if let Some(standing) = self.lock().standing {
            standing.write(response.headers_mut());
        }
        response
    }
}

/// Middleware of every router: gives each request a slot for its count, and settles it once
/// the handler has answered.
pub async fn settle_count(mut request: Request, next: Next) -> Response {
    let slot = RequestCount::default();
    request.extensions_mut().insert(slot.clone());
    let response = next.run(request).await;
    slot.settle(response).await
}

/// Authentication, and on a cold cache the rate limit too (`true` when counted). Every way of
/// failing authentication gives the same `ApiError::Unauthorized`, so the same bytes, and
/// counts for nobody.
async fn authenticate(
    app: &App,
    headers: &HeaderMap,
    slot: &RequestCount,
) -> ApiResult<(Caller, bool)> {
    let raw_key = bearer_token(headers).ok_or(ApiError::Unauthorized)?;
    // Malformed keys never reach the store.
    let environment = account::parse_key(raw_key).ok_or(ApiError::Unauthorized)?;
    let now = app.clock.now();
    let key_hash = account::hash_key(raw_key);
    let cache = &app.caches().keys;
    let (key, brand, counted) = match cache.get(&key_hash, now) {
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
            let Some(key) = app.store.find_api_key(&key_hash).await? else {
                cache.put(key_hash, None, now);
                return Err(ApiError::Unauthorized);
            };
            // Revoked and expired keys never become usable again: remembered as absent.
            if !key.is_usable_at(now) {
                cache.put(key_hash, None, now);
                return Err(ApiError::Unauthorized);
            }
            let (brand, counted) = tokio::join!(
                app.store.get_brand(&key.brand_id),
                count_request(app, &key.brand_id, slot)
            );
            let found = brand?.map(|brand| (key, brand));
            cache.put(key_hash, found.clone(), now);
            let (key, brand) = found.ok_or(ApiError::Unauthorized)?;
            counted?;
            (key, brand, true)
        }
    };
    let caller = Caller {
        brand,
        key,
        environment,
    };
    Ok((caller, counted))
}

/// Counts the request now, recording its standing in `slot`.
async fn count_request(app: &App, brand_id: &str, slot: &RequestCount) -> ApiResult<()> {
    let standing = ratelimit::count(app.store.as_ref(), brand_id, app.clock.now()).await?;
    slot.record(standing);
    standing.admit()
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
