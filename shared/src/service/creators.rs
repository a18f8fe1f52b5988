use std::collections::HashSet;

use crate::domain::Creator;
use crate::domain::creator::sort_creators;
use crate::error::ApiResult;
use crate::ports::CreatorStore;

/// `GET /creators`: the catalog sorted by name, case-insensitively, then id.
pub async fn list(store: &dyn CreatorStore) -> ApiResult<Vec<Creator>> {
    let mut creators = store.list_creators().await?;
    sort_creators(&mut creators);
    Ok(creators)
}

/// The ids of every existing creator: a stream shows its `creator_id` only while it resolves.
pub async fn existing_ids(store: &dyn CreatorStore) -> ApiResult<HashSet<String>> {
    Ok(store
        .list_creators()
        .await?
        .into_iter()
        .map(|creator| creator.id)
        .collect())
}
