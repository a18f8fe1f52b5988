//! Least privilege for the parking of a saturated brand's deliveries (docs/webhooks.md, "Fair
//! delivery"): a redelivery parked by the webhooks function, the relay's parked-delivery
//! sweep, and a delivery whose slot is handed to parked ones, each with its requests recorded.

use std::time::Duration;

use hosting_app::delivery::worker::{self, BRAND_DELIVERY_SLOTS};
use hosting_app::delivery::{Deliverer, parking};
use hosting_domain::EventType;
use hosting_domain::ports::Delivery;
use serde_json::json;

use super::{actions_since, allowed_actions, forget_requests, missing, template};
use crate::common::receiver::{Behaviour, Receiver};
use crate::common::*;

#[tokio::test]
#[ignore = "needs DynamoDB (moto) to record the requests: scripts/test.sh runs it"]
async fn dynamodb_only_parking_is_allowed_to_every_function_that_parks_or_wakes() {
    let allowed = allowed_actions(&template());
    let api = TestApp::builder().with_private_webhook_urls().await;
    let app = &api.runtime.app;
    let store = app.store.clone();
    let receiver = Receiver::start(Behaviour::Ok).await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": receiver.url(), "events": ["stream.started"]}),
        )
        .await;
    let webhook_id: uuid::Uuid = r.body["webhook_id"].as_str().unwrap().parse().unwrap();
    let delivery = |n: usize| Delivery {
        event_id: format!("evt_{n:032x}"),
        event_type: EventType::StreamStarted,
        brand_id: "brand_a".into(),
        webhook_id,
        attempt: 1,
        body: json!({"id": format!("evt_{n:032x}"), "created_at": api.now()}).to_string(),
    };
    let mut problems = Vec::new();

    // The brand holds every slot: a redelivery is parked by the webhooks function.
    let until = api.now() + chrono::Duration::minutes(1);
    let mut held = Vec::new();
    for holder in 0..BRAND_DELIVERY_SLOTS {
        let slot = store
            .acquire_delivery_slot(
                "brand_a",
                BRAND_DELIVERY_SLOTS,
                &holder.to_string(),
                api.now(),
                until,
            )
            .await
            .unwrap()
            .unwrap();
        held.push((slot, holder.to_string()));
    }
    worker::process(
        app,
        &Deliverer::new(Duration::from_secs(5), true).unwrap(),
        delivery(1),
    )
    .await
    .unwrap();
    forget_requests(&api);
    parking::queue_or_park(app, "brand_a", vec![delivery(2)])
        .await
        .unwrap();
    let called = actions_since(&api);
    assert!(called.contains("dynamodb:BatchWriteItem"), "{called:?}");
    problems.extend(missing(
        &allowed,
        "WebhooksFunction",
        &called,
        "redelivery parked",
    ));
    problems.extend(missing(
        &allowed,
        "OutboxRelayFunction",
        &called,
        "event parked",
    ));
    problems.extend(missing(
        &allowed,
        "DeliveryFunction",
        &called,
        "delivery parked",
    ));

    // The slots free themselves (their holders died); the relay's sweep wakes the brand.
    for (slot, holder) in &held {
        store
            .release_delivery_slot("brand_a", *slot, holder)
            .await
            .unwrap();
    }
    // Due a moment ago (the app's clock stands still here).
    let due = api.now() - chrono::Duration::seconds(1);
    store.set_parked_wake("brand_a", due).await.unwrap();
    forget_requests(&api);
    assert_eq!(parking::sweep(app).await.unwrap(), 2);
    let called = actions_since(&api);
    assert!(called.contains("dynamodb:Query@index/due"), "{called:?}");
    problems.extend(missing(
        &allowed,
        "OutboxRelayFunction",
        &called,
        "parked sweep",
    ));

    // A delivery whose slot passes to a parked one, then is released.
    store
        .park_deliveries("brand_a", &[delivery(3)], BRAND_DELIVERY_SLOTS, api.now())
        .await
        .unwrap();
    store.set_parked_wake("brand_a", api.now()).await.unwrap();
    forget_requests(&api);
    let deliverer = Deliverer::new(Duration::from_secs(5), true).unwrap();
    worker::process(app, &deliverer, delivery(4)).await.unwrap();
    let called = actions_since(&api);
    assert!(called.contains("dynamodb:ConditionCheckItem"), "{called:?}");
    problems.extend(missing(&allowed, "DeliveryFunction", &called, "hand-over"));
    let hits = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(
        hits.len(),
        2,
        "the delivery and the parked one it handed over to"
    );

    assert_eq!(problems, Vec::<String>::new());
}
