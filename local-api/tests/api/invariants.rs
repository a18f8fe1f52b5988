//! The check every `TestApp` makes when dropped (`common/invariants.rs`) is not vacuous: a
//! slot count or an event list that breaks an invariant fails it, on either backend.

use crate::common::invariants::check_store;
use crate::common::{Keys, TestApp};

#[tokio::test]
async fn a_broken_invariant_fails_the_drop_check() {
    let api = TestApp::new().await;
    let id = api.start_test_stream(&Keys::test_a()).await;
    let events = api.emitted_events().await;
    let store = &*api.runtime.app.store;
    assert_eq!(
        check_store(store, &events, |brand| u32::from(brand == "brand_a")).await,
        Vec::<String>::new(),
        "the store as the test left it"
    );

    // A slot count that disagrees with the live stream, and its start emitted twice.
    let doubled = [events.clone(), events].concat();
    let violations = check_store(store, &doubled, |_| 0).await;
    assert!(
        violations.contains(&"brand_a: 0 active slots for 1 preparing or live streams".to_owned()),
        "{violations:?}"
    );
    assert!(
        violations.contains(&format!("stream {id}: 2 stream.started events")),
        "{violations:?}"
    );
}
