//! The two public endpoints: the discovery document and the creators list.

use serde_json::json;

use crate::common::*;
use crate::operations::{self, OPERATIONS};

#[tokio::test]
async fn discovery_document() {
    let api = TestApp::new().await;
    let r = api.call("GET", "/", None, None).await;
    r.assert_status(200);
    let doc = &r.body;
    assert_eq!(doc["version"], "v1");
    for field in ["name", "status", "docs", "openapi", "authentication"] {
        assert!(
            doc[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}"
        );
    }
    let endpoints = doc["endpoints"].as_object().unwrap();
    assert_eq!(endpoints.len(), OPERATIONS.len());
    for (method, path, scope) in operations::keyed() {
        let description = endpoints[&format!("{method} {path}")].as_str().unwrap();
        assert!(description.contains(scope), "{method} {path}");
    }
    for public in ["GET /", "GET /creators", "GET /openapi.json"] {
        assert!(endpoints[public].as_str().unwrap().contains("Public"));
    }
    assert!(
        doc["openapi"]
            .as_str()
            .unwrap()
            .ends_with("/api/v1/openapi.json")
    );
}

#[tokio::test]
async fn creators_sorted_cached_and_complete() {
    let api = TestApp::new().await;
    api.seed(
        json!({"creators": [{"id": "avt_ava000000000", "name": "ava", "status": null,
        "languages": [], "style": "s", "personality": "p", "vibe": "v", "consent": null,
        "photo": "https://cdn.example.com/a.png"}]}),
    )
    .await;
    let r = api.call("GET", "/creators", None, None).await;
    r.assert_status(200);
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));
    let creators = r.body["creators"].as_array().unwrap();
    let order: Vec<&str> = creators.iter().map(|c| c["id"].as_str().unwrap()).collect();
    // Case-insensitive by name, then by id.
    assert_eq!(
        order,
        ["avt_ava000000000", CREATOR_AVA, CREATOR_BEA, CREATOR_ZED]
    );
    for creator in creators {
        let fields: Vec<&str> = creator
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(fields.len(), 9, "all nine fields: {fields:?}");
        for f in [
            "id",
            "name",
            "status",
            "languages",
            "style",
            "personality",
            "vibe",
            "consent",
            "photo",
        ] {
            assert!(creator.get(f).is_some(), "{f}");
        }
    }
}

#[tokio::test]
async fn creators_store_failure_is_db_error() {
    let api = TestApp::new().await;
    api.set_failing().await;
    api.call("GET", "/creators", None, None)
        .await
        .assert_error(500, "db_error");
    // And the discovery document does not touch the store.
    api.call("GET", "/", None, None).await.assert_status(200);
}
