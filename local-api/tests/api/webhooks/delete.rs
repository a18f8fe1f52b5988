//! `DELETE /webhooks/{id}`: idempotent, never `404`.

use serde_json::json;

use super::URL;
use crate::common::*;

#[tokio::test]
async fn delete_is_idempotent_and_never_404() {
    let api = TestApp::new().await;
    let r = api
        .post(
            "/webhooks",
            &Keys::test_a(),
            json!({"url": URL, "events": ["stream.ended"]}),
        )
        .await;
    let id = r.body["webhook_id"].as_str().unwrap().to_owned();
    // Another brand cannot delete it, but is told it is deleted.
    let other = api
        .delete(&format!("/webhooks?id={id}"), &Keys::test_b())
        .await;
    other.assert_status(200);
    assert_eq!(other.body, json!({"webhook_id": id, "deleted": true}));
    assert_eq!(
        api.get("/webhooks", &Keys::test_a()).await.body["webhooks"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for _ in 0..2 {
        let r = api
            .delete(&format!("/webhooks?id={id}"), &Keys::test_a())
            .await;
        r.assert_status(200);
        assert_eq!(r.body, json!({"webhook_id": id, "deleted": true}));
    }
    assert_eq!(
        api.get("/webhooks", &Keys::test_a()).await.body["webhooks"],
        json!([])
    );
    let r = api.delete("/webhooks?id=not-a-uuid", &Keys::test_a()).await;
    assert_eq!(r.body, json!({"webhook_id": "not-a-uuid", "deleted": true}));
    for query in ["", "?id=", "?other=1"] {
        api.delete(&format!("/webhooks{query}"), &Keys::test_a())
            .await
            .assert_error(400, "missing_fields");
    }
}
