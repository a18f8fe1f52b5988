//! The creators catalog, read through the per-instance cache.

use std::collections::HashSet;
use std::sync::Arc;

use crate::app::App;
use hosting_domain::Creator;
use hosting_domain::creator::sort_creators;
use hosting_domain::error::ApiResult;

/// The catalog as the instance caches it: sorted for `GET /creators`, with its ids ready for
/// the lookups of every start and every stream shown, so that a page does not gather them
/// again for each request.
pub struct Catalog {
    sorted: Vec<Creator>,
    ids: HashSet<String, foldhash::fast::RandomState>,
}

impl Catalog {
    fn new(mut creators: Vec<Creator>) -> Self {
        sort_creators(&mut creators);
        let ids = creators.iter().map(|c| c.id.clone()).collect();
        Self {
            sorted: creators,
            ids,
        }
    }

    /// Sorted by name, case-insensitively, then id.
    pub fn creators(&self) -> &[Creator] {
        &self.sorted
    }

    /// Whether `creator_id` is exactly the id of a creator in the catalog.
    pub fn contains(&self, creator_id: &str) -> bool {
        self.ids.contains(creator_id)
    }
}

/// The catalog, from the cache when it is fresh.
pub async fn catalog(app: &App) -> ApiResult<Arc<Catalog>> {
    let now = app.clock.now();
    if let Some(cached) = app.caches().creators.get(&(), now) {
        return Ok(cached);
    }
    let catalog = Arc::new(Catalog::new(app.creators().list_creators().await?));
    app.caches().creators.put((), catalog.clone(), now);
    Ok(catalog)
}

/// Whether `creator_id` is exactly the id of a creator in the catalog.
pub async fn exists(app: &App, creator_id: &str) -> ApiResult<bool> {
    Ok(catalog(app).await?.contains(creator_id))
}
