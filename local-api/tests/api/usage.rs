//! Usage (docs/usage.md): a brand's billing cycle, kept on both backends and checked on the way
//! in. A stream's own `usage` is tested with its detail (streams/get.rs).

use hosting_app::seed::{Seed, SeedError};
use hosting_domain::usage::period::{BillingCycle, BillingCycleError};
use serde_json::json;

use crate::common::*;

fn brand_id() -> String {
    format!("brand_{}", &uuid::Uuid::new_v4().simple().to_string()[..12])
}

#[tokio::test]
async fn a_brands_billing_cycle_is_kept_and_defaults_to_the_utc_month() {
    let api = TestApp::new().await;
    let (zoned, plain) = (brand_id(), brand_id());
    api.seed(json!({"brands": [
        {"id": zoned, "name": "Z", "plan": "growth", "vertical": "live-commerce",
         "billing_time_zone": "Europe/Berlin", "billing_anchor_day": 15},
        {"id": plain, "name": "P", "plan": "growth", "vertical": "live-commerce"}]}))
        .await;
    let store = &api.runtime.app.store;
    let zoned = store.get_brand(&zoned).await.unwrap().unwrap();
    assert_eq!(
        (zoned.billing_time_zone.as_str(), zoned.billing_anchor_day),
        ("Europe/Berlin", 15)
    );
    let cycle = BillingCycle::of(&zoned).unwrap();
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-04T12:00:00Z")
        .unwrap()
        .to_utc();
    let period = cycle.period_containing(at);
    assert_eq!(period.id(), "per_20261115");
    assert_eq!(period.start.to_rfc3339(), "2026-11-14T23:00:00+00:00");
    let plain = store.get_brand(&plain).await.unwrap().unwrap();
    assert_eq!(
        (plain.billing_time_zone.as_str(), plain.billing_anchor_day),
        ("UTC", 1)
    );
    assert_eq!(
        BillingCycle::of(&plain).unwrap().period_containing(at).id(),
        "per_20261201"
    );
}

#[tokio::test]
async fn a_seed_with_a_bad_billing_cycle_loads_nothing_and_names_the_brand() {
    let api = TestApp::new().await;
    let (good, bad) = (brand_id(), brand_id());
    for (field, value, error) in [
        (
            "billing_time_zone",
            json!("Mars/Olympus"),
            BillingCycleError::UnknownTimeZone,
        ),
        (
            "billing_anchor_day",
            json!(29),
            BillingCycleError::AnchorDay,
        ),
        ("billing_anchor_day", json!(0), BillingCycleError::AnchorDay),
    ] {
        let mut refused =
            json!({"id": bad, "name": "B", "plan": "growth", "vertical": "live-commerce"});
        refused[field] = value;
        let seed = json!({"brands": [
            {"id": good, "name": "G", "plan": "growth", "vertical": "live-commerce"}, refused]});
        let err = Seed::from_json(&seed.to_string())
            .unwrap()
            .load(&*api.runtime.app.store)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, SeedError::Billing { index: 1, error: e } if *e == error),
            "{field}: {err}"
        );
        assert!(
            err.to_string().starts_with("seed file: brand #1: "),
            "{err}"
        );
        assert!(
            api.runtime
                .app
                .store
                .get_brand(&good)
                .await
                .unwrap()
                .is_none(),
            "nothing loaded"
        );
    }
}
