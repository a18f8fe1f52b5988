//! The request pipeline of every keyed endpoint (decisions.md section 1), in this order:
//! authentication, rate limit, scope, plan gate. Routing has already happened; request
//! validation and the operation come after.
//!
//! Handlers declare the scope they need in their signature: `Authorized<StreamsRead>`.
//!
//! A read (`GET`, `HEAD`) that passes everything but the count is counted while its handler
//! runs, and [`settle_deferred_count`] answers `429` in place of the handler's response when
//! the count refuses: the same answer, one store round trip sooner. Writes are counted first.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use axum::extract::{FromRequestParts, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::task::JoinHandle;

use crate::app::App;
use crate::domain::account::{self, KeyEnvironment};
use crate::domain::{ApiKey, Brand, Scope};
use crate::error::{ApiError, ApiResult};
use crate::ratelimit;

/// Who is calling: the key's brand and the key itself.
#[derive(Debug, Clone)]
pub struct Caller {
    pub brand: Brand,
    pub key: ApiKey,
    pub environment: KeyEnvironment,
}

impl Caller {
    pub fn is_test(&self) -> bool {
        self.environment == KeyEnvironment::Test
    }
}

/// A scope an endpoint requires, as a type so handlers state it in their signature.
pub trait RequiredScope: Send + Sync + 'static {
    const SCOPE: Scope;
}

macro_rules! scope_marker {
    ($name:ident, $scope:expr) => {
        #[derive(Debug)]
        pub struct $name;
        impl RequiredScope for $name {
            const SCOPE: Scope = $scope;
        }
    };
}

scope_marker!(StreamsRead, Scope::StreamsRead);
scope_marker!(StreamsWrite, Scope::StreamsWrite);
scope_marker!(AnalyticsRead, Scope::AnalyticsRead);
scope_marker!(WebhooksWrite, Scope::WebhooksWrite);

/// A caller that passed the whole pipeline for scope `S`.
#[derive(Debug)]
pub struct Authorized<S>(pub Caller, pub PhantomData<S>);

impl<S: RequiredScope> FromRequestParts<App> for Authorized<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        let deferred = matches!(parts.method, Method::GET | Method::HEAD)
            .then(|| parts.extensions.get::<DeferredCount>())
            .flatten();
        let caller = authorize_with(app, &parts.headers, S::SCOPE, deferred).await?;
        Ok(Authorized(caller, PhantomData))
    }
}

/// Runs authentication, rate limit, scope check and plan gate, in that order.
pub async fn authorize(app: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Caller> {
    authorize_with(app, headers, scope, None).await
}

/// [`authorize`], leaving the count to `deferred` when the request passes everything else.
async fn authorize_with(
    app: &App,
    headers: &HeaderMap,
    scope: Scope,
    deferred: Option<&DeferredCount>,
) -> ApiResult<Caller> {
    let (caller, counted) = authenticate(app, headers).await?;
    let refusal = if !caller.key.has_scope(scope) {
        Some(ApiError::InsufficientScope(scope))
    } else if caller.environment == KeyEnvironment::Live && !caller.brand.plan.allows_live_keys() {
        Some(ApiError::PlanRequired)
    } else {
        None
    };
    if !counted {
        match (deferred, &refusal) {
            (Some(deferred), None) => deferred.start(app, &caller.brand.id),
            // 429 comes before 403 and 402, so a refusal waits for the count.
            _ => count_request(app, &caller.brand.id).await?,
        }
    }
    match refusal {
        Some(refusal) => Err(refusal),
        None => Ok(caller),
    }
}

/// The rate-limit count of a read, running while its handler does.
#[derive(Clone, Default)]
pub struct DeferredCount(Arc<Mutex<Option<JoinHandle<ApiResult<()>>>>>);

impl DeferredCount {
    fn start(&self, app: &App, brand_id: &str) {
        let (app, brand_id) = (app.clone(), brand_id.to_owned());
        let count = tokio::spawn(async move { count_request(&app, &brand_id).await });
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(count);
    }

    /// `response`, unless the count refused the request (or failed).
    async fn settle(self, response: Response) -> Response {
        let count = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(count) = count else {
            return response;
        };
        match count.await {
            Ok(Ok(())) => response,
            Ok(Err(refusal)) => refusal.into_response(),
            Err(err) => {
                ApiError::Db(crate::error::StoreError::Backend(err.to_string())).into_response()
            }
        }
    }
}

/// Middleware of every router: gives each request a slot for a deferred count, and settles it
/// once the handler has answered.
pub async fn settle_deferred_count(mut request: Request, next: Next) -> Response {
    let deferred = DeferredCount::default();
    request.extensions_mut().insert(deferred.clone());
    let response = next.run(request).await;
    deferred.settle(response).await
}

/// Authentication, and on a cold cache the rate limit too (`true` when counted). Every way of
/// failing authentication gives the same `ApiError::Unauthorized`, so the same bytes, and
/// counts for nobody.
async fn authenticate(app: &App, headers: &HeaderMap) -> ApiResult<(Caller, bool)> {
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
                count_request(app, &key.brand_id)
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

async fn count_request(app: &App, brand_id: &str) -> ApiResult<()> {
    ratelimit::check(app.store.as_ref(), brand_id, app.clock.now()).await
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
