//! The scheduled shows' part of what every test leaves true (`invariants.rs`).

use std::collections::BTreeSet;

use hosting_domain::ports::{
    ShowStartStore, ShowStore, StreamKeyStore, StreamListStore, StreamStore,
};
use hosting_domain::show::ShowStatus;

/// Scheduled shows (docs/shows.md): none left `starting` (a starter that died is taken over
/// by the sweep, which a test that kills one runs), and every `started` show's stream exists.
pub async fn check_shows<
    S: StreamStore + StreamListStore + StreamKeyStore + ShowStore + ShowStartStore + ?Sized,
>(
    store: &S,
    brands: &BTreeSet<String>,
) -> Vec<String> {
    let mut violations = Vec::new();
    for brand in brands {
        match store
            .list_shows(brand, Some(ShowStatus::Starting), 100, 0)
            .await
        {
            Ok(page) => violations.extend(
                page.shows
                    .iter()
                    .map(|show| format!("show {}: left starting", show.public_id())),
            ),
            Err(err) => violations.push(format!("{brand}: shows unreadable: {err}")),
        }
        let started = match store
            .list_shows(brand, Some(ShowStatus::Started), 100, 0)
            .await
        {
            Ok(page) => page.shows,
            Err(err) => {
                violations.push(format!("{brand}: shows unreadable: {err}"));
                continue;
            }
        };
        for show in started {
            let exists = match show.stream_id {
                Some(id) => matches!(store.get_stream(id).await, Ok(Some(_))),
                None => false,
            };
            if !exists {
                violations.push(format!(
                    "show {}: started, and its stream is missing",
                    show.public_id()
                ));
            }
        }
    }
    violations
}
