//! The creators catalog, read through the per-instance cache.

use std::collections::HashSet;
use std::sync::Arc;

use crate::app::App;
use hosting_domain::domain::Creator;
use hosting_domain::domain::creator::sort_creators;
use hosting_domain::error::ApiResult;

/// `GET /creators`: the catalog sorted by name, case-insensitively, then id.
pub async fn catalog(app: &App) -> ApiResult<Arc<Vec<Creator>>> {
    let now = app.clock.now();
    if let Some(cached) = app.caches().creators.get(&(), now) {
        return Ok(cached);
    }
    let mut creators = app.store.list_creators().await?;
    sort_creators(&mut creators);
    let creators = Arc::new(creators);
    app.caches().creators.put((), creators.clone(), now);
    Ok(creators)
}

/// Whether `creator_id` is exactly the id of a creator in the catalog.
pub async fn exists(app: &App, creator_id: &str) -> ApiResult<bool> {
    Ok(catalog(app).await?.iter().any(|c| c.id == creator_id))
}

/// The ids of every existing creator: a stream shows its `creator_id` only while it resolves.
pub async fn existing_ids(app: &App) -> ApiResult<HashSet<String>> {
    Ok(catalog(app).await?.iter().map(|c| c.id.clone()).collect())
}
