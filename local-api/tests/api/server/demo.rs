//! The demo server prints its URL and keys and serves at once; a seed file replaces the demo data.

use serde_json::json;

use super::{start, stop};
use crate::common::*;

#[tokio::test]
async fn demo_server_prints_url_and_keys_and_serves_at_once() {
    let server = start(&[]);
    assert!(
        server.base.starts_with("http://127.0.0.1:") && server.base.ends_with("/api/v1"),
        "{}",
        server.base
    );
    let key_of = |label: &str| {
        server
            .lines
            .iter()
            .find_map(|l| l.trim().strip_prefix(label))
            .map(|k| k.trim().to_owned())
            .unwrap()
    };
    let test_key = key_of("test key:");
    let live_key = key_of("live key:");
    assert!(test_key.starts_with("svc_test_") && live_key.starts_with("svc_live_"));

    let client = reqwest::Client::new();
    let discovery: serde_json::Value = serde_json::from_str(
        &client
            .get(format!("{}/", server.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(discovery["version"], "v1");
    assert_eq!(
        discovery["openapi"],
        format!("{}/openapi.json", server.base)
    );
    let creators: serde_json::Value = serde_json::from_str(
        &client
            .get(format!("{}/creators", server.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(creators["creators"].as_array().unwrap().len() >= 3);
    let creator = creators["creators"][0]["id"].as_str().unwrap();
    let r = client
        .post(format!("{}/streams", server.base))
        .bearer_auth(&test_key)
        .body(json!({"creator_id": creator, "product_name": "P", "platform": "kick"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    for key in [&test_key, &live_key] {
        let r = client
            .get(format!("{}/streams", server.base))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    stop(server);
}

#[tokio::test]
async fn seed_file_replaces_the_demo_data() {
    let path = std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, base_seed(chrono::Utc::now()).to_string()).unwrap();
    let server = start(&["--seed", path.to_str().unwrap()]);
    assert_eq!(server.lines.len(), 1, "no demo keys are printed");
    let client = reqwest::Client::new();
    let r = client
        .get(format!("{}/streams", server.base))
        .bearer_auth(Keys::test_b())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .get(format!("{}/streams", server.base))
        .bearer_auth(Keys::revoked())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    stop(server);
    let _ = std::fs::remove_file(path);
}
