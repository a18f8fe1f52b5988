//! The request pipeline of every keyed endpoint (decisions.md section 1), in this order:
//! authentication, rate limit, scope, plan gate. Routing has already happened; request
//! validation and the operation come after.
//!
//! Handlers declare the scope they need in their signature: `Authorized<StreamsRead>`.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

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
        let caller = authorize(app, &parts.headers, S::SCOPE).await?;
        Ok(Authorized(caller, PhantomData))
    }
}

/// Runs authentication, rate limit, scope check and plan gate, in that order.
pub async fn authorize(app: &App, headers: &HeaderMap, scope: Scope) -> ApiResult<Caller> {
    let caller = authenticate_and_count(app, headers).await?;
    if !caller.key.has_scope(scope) {
        return Err(ApiError::InsufficientScope(scope));
    }
    if caller.environment == KeyEnvironment::Live && !caller.brand.plan.allows_live_keys() {
        return Err(ApiError::PlanRequired);
    }
    Ok(caller)
}

/// Authentication, then the rate limit. Every way of failing authentication gives the same
/// `ApiError::Unauthorized`, so the same bytes, and counts for nobody.
async fn authenticate_and_count(app: &App, headers: &HeaderMap) -> ApiResult<Caller> {
    let raw_key = bearer_token(headers).ok_or(ApiError::Unauthorized)?;
    // Malformed keys never reach the store.
    let environment = account::parse_key(raw_key).ok_or(ApiError::Unauthorized)?;
    let now = app.clock.now();
    let key_hash = account::hash_key(raw_key);
    let cache = &app.caches().keys;
    let (key, brand) = match cache.get(&key_hash, now) {
        // Warm: the key and its brand come from the cache (revocations apply within its TTL).
        Some(cached) => {
            let (key, brand) = cached
                .filter(|(key, _)| key.is_usable_at(now))
                .ok_or(ApiError::Unauthorized)?;
            count_request(app, &brand.id).await?;
            (key, brand)
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
            (key, brand)
        }
    };
    Ok(Caller {
        brand,
        key,
        environment,
    })
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
