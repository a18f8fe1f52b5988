//! `PATCH` and `DELETE /shows/{id}`: while `scheduled` they change or cancel the show and move
//! or drop its timers; once it started, failed or was cancelled they are `404 not_found`;
//! another brand's show or an id not in form is `404` too.

use super::*;

async fn patch(api: &TestApp, key: &str, id: &str, body: Value) -> Response {
    api.call("PATCH", &format!("/shows/{id}"), Some(key), Some(body))
        .await
}

#[tokio::test]
async fn a_change_replaces_the_fields_sent_checked_as_at_scheduling() {
    let api = TestApp::new().await;
    let id = scheduled(&api, &Keys::test_a(), json!({"remind_minutes_before": 10})).await;
    let before = show(&api, &Keys::test_a(), &id).await;
    // Nothing changeable: missing_fields; a bad field, a bad time: invalid_fields; each
    // leaves the show as it was.
    patch(&api, &Keys::test_a(), &id, json!({}))
        .await
        .assert_error(400, "missing_fields");
    for bad in [
        json!({"duration_minutes": 0}),
        json!({"platform": "TikTok"}),
        json!({"starts_at": "soon"}),
        json!({"starts_at": at(&api, 0)}),
        json!({"starts_at": at(&api, 31 * 24 * 60)}),
        json!({"remind_minutes_before": 0}),
        json!({"record": "yes"}),
    ] {
        patch(&api, &Keys::test_a(), &id, bad.clone())
            .await
            .assert_error(400, "invalid_fields");
    }
    patch(&api, &Keys::test_a(), &id, json!({"vertical": "gaming"}))
        .await
        .assert_error(403, "vertical_mismatch");
    patch(
        &api,
        &Keys::test_a(),
        &id,
        json!({"creator_id": "avt_nobody"}),
    )
    .await
    .assert_error(400, "invalid_creator");
    assert_eq!(show(&api, &Keys::test_a(), &id).await, before);

    let moved = at(&api, 180);
    let changed = patch(
        &api,
        &Keys::test_a(),
        &id,
        json!({"product_name": "Night Cream", "starts_at": moved, "remind_minutes_before": 30}),
    )
    .await;
    changed.assert_status(200);
    assert_eq!(changed.body["stream"]["product_name"], "Night Cream");
    assert_eq!(changed.body["stream"]["platform"], "tiktok");
    assert_eq!(changed.body["remind_minutes_before"], 30);
    assert_eq!(changed.body["status"], "scheduled");
    assert_eq!(changed.body["created_at"], before["created_at"]);
    assert_eq!(show(&api, &Keys::test_a(), &id).await, changed.body);
    // Listed at its new time.
    let list = api.get("/shows", &Keys::test_a()).await;
    assert_eq!(list.body["shows"][0], changed.body);

    // Another brand's, or an id not in form: not found, unchanged.
    patch(&api, &Keys::test_b(), &id, json!({"product_name": "X"}))
        .await
        .assert_error(404, "not_found");
    patch(
        &api,
        &Keys::test_a(),
        "shw_nope",
        json!({"product_name": "X"}),
    )
    .await
    .assert_error(404, "not_found");
    api.delete(&format!("/shows/{id}"), &Keys::test_b())
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn a_moved_show_starts_at_its_new_time_and_reminds_at_its_new_moment() {
    let api = TestApp::new().await;
    let id = scheduled(
        &api,
        &Keys::test_a(),
        json!({"starts_at": at(&api, 10), "remind_minutes_before": 5}),
    )
    .await;
    patch(
        &api,
        &Keys::test_a(),
        &id,
        json!({"starts_at": at(&api, 60)}),
    )
    .await
    .assert_status(200);
    // Its old moments pass: nothing happens.
    api.advance_and_fire(TimeDelta::minutes(11)).await;
    hosting_app::service::shows::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(
        show(&api, &Keys::test_a(), &id).await["status"],
        "scheduled"
    );
    assert!(show_events(&api, "show.reminder", &id).await.is_empty());
    // Its new ones: the reminder, then the start.
    api.advance_and_fire(TimeDelta::minutes(44)).await;
    assert_eq!(show_events(&api, "show.reminder", &id).await.len(), 1);
    api.advance_and_fire(TimeDelta::minutes(5)).await;
    let started = show(&api, &Keys::test_a(), &id).await;
    assert_eq!(started["status"], "started");
}

#[tokio::test]
async fn a_cancelled_show_never_starts_nor_reminds_and_nothing_changes_it_after() {
    let api = TestApp::new().await;
    let id = scheduled(
        &api,
        &Keys::test_a(),
        json!({"starts_at": at(&api, 30), "remind_minutes_before": 10}),
    )
    .await;
    let cancelled = api.delete(&format!("/shows/{id}"), &Keys::test_a()).await;
    cancelled.assert_status(200);
    assert_eq!(cancelled.body["status"], "cancelled");
    assert_eq!(cancelled.body["stream_id"], Value::Null);
    assert_eq!(show(&api, &Keys::test_a(), &id).await, cancelled.body);
    api.advance_and_fire(TimeDelta::minutes(31)).await;
    hosting_app::service::shows::sweep(&api.runtime.app)
        .await
        .unwrap();
    assert_eq!(
        show(&api, &Keys::test_a(), &id).await["status"],
        "cancelled"
    );
    assert!(show_events(&api, "show.reminder", &id).await.is_empty());
    assert!(show_events(&api, "show.started", &id).await.is_empty());
    assert_eq!(api.get("/streams", &Keys::test_a()).await.body["total"], 0);
    // No longer scheduled: not found.
    patch(&api, &Keys::test_a(), &id, json!({"product_name": "X"}))
        .await
        .assert_error(404, "not_found");
    api.delete(&format!("/shows/{id}"), &Keys::test_a())
        .await
        .assert_error(404, "not_found");
}

#[tokio::test]
async fn a_started_or_failed_show_can_be_neither_changed_nor_cancelled() {
    let api = TestApp::new().await;
    let started = scheduled(&api, &Keys::test_a(), json!({"starts_at": at(&api, 5)})).await;
    // A live show with no room provider: the launch fails.
    let failed = scheduled(&api, &Keys::live_a(), json!({"starts_at": at(&api, 5)})).await;
    api.advance_and_fire(TimeDelta::minutes(5)).await;
    for (key, id, status) in [
        (Keys::test_a(), &started, "started"),
        (Keys::live_a(), &failed, "failed"),
    ] {
        let before = show(&api, &key, id).await;
        assert_eq!(before["status"], status);
        patch(&api, &key, id, json!({"product_name": "X"}))
            .await
            .assert_error(404, "not_found");
        api.delete(&format!("/shows/{id}"), &key)
            .await
            .assert_error(404, "not_found");
        assert_eq!(show(&api, &key, id).await, before);
    }
}
