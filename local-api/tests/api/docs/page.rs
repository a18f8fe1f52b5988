//! The reference page (docs/development.md, "The reference page"), rendered from the OpenAPI document, served publicly
//! by the real binary.

use serde_json::Value;

use crate::common::*;

#[tokio::test]
async fn the_page_covers_the_whole_document_and_loads_nothing() {
    let (mut child, _, base, _reader) = spawn_local_api(&["--fixed-demo-keys"], &[]);
    let http = reqwest::Client::new();
    let answer = http.get(format!("{base}/docs")).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let header = |name: &str| {
        answer
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("content-type"), "text/html; charset=utf-8");
    assert_eq!(header("cache-control"), "public, max-age=300");
    assert!(header("ratelimit").is_empty(), "never counted");
    let page = answer.text().await.unwrap();
    let document: Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    child.kill().ok();

    // Every operation, with its anchor and its method and path.
    for (path, operations) in document["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap();
            assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
            let heading = format!(
                "<span class=\"method {0}\">{0}</span> <code>{1}</code>",
                method.to_uppercase(),
                path
            );
            assert!(page.contains(&heading), "{method} {path}");
            if let Some(scope) = operation["x-required-scope"].as_str() {
                assert!(page.contains(scope));
            }
        }
    }
    // Every error code and every event type, each event with a sample body.
    let schemas = &document["components"]["schemas"];
    for code in schemas["ErrorCode"]["enum"].as_array().unwrap() {
        let code = code.as_str().unwrap();
        assert!(page.contains(&format!("id=\"error-{code}\"")), "{code}");
    }
    for event in schemas["EventType"]["enum"].as_array().unwrap() {
        let event = event.as_str().unwrap();
        let anchor = format!("id=\"event-{event}\"");
        let at = page.find(&anchor).unwrap_or_else(|| panic!("{event}"));
        let sample = &page[at..];
        assert!(
            sample.contains("&quot;api_version&quot;"),
            "{event} has a sample body"
        );
    }
    // The webhook guide: raw body, both schemes, the public key, tolerance, deduplication,
    // endpoint health.
    for words in [
        "raw body",
        "webhook-signature",
        "X-Service-Signature",
        "<code>v1a,</code>",
        "Ed25519PublicKey.from_public_bytes",
        "crypto.verify(null",
        "5 minutes",
        "Deduplicate",
        "rotate-secret",
        "<code>failing_since</code>",
    ] {
        assert!(page.contains(words), "{words}");
    }
    // Nothing loaded from anywhere, no script: links stay on the page or on this API.
    for banned in [
        "<script", "<link", "<iframe", "<img", "src=", "@import", "url(",
    ] {
        assert!(!page.contains(banned), "{banned}");
    }
    for link in page.split("href=\"").skip(1) {
        let target = &link[..link.find('"').unwrap()];
        assert!(
            target.starts_with('#') || target.starts_with(&base),
            "link to {target}"
        );
    }
}

#[tokio::test]
async fn discovery_points_people_at_the_page_and_programs_at_the_document() {
    let api = TestApp::new().await;
    let discovery = api.call("GET", "/", None, None).await.body;
    assert!(
        discovery["docs"]
            .as_str()
            .unwrap()
            .ends_with("/api/v1/docs")
    );
    assert!(
        discovery["openapi"]
            .as_str()
            .unwrap()
            .ends_with("/api/v1/openapi.json")
    );
    // Public: any Authorization header is ignored, and it is never counted.
    for _ in 0..3 {
        let r = api.call("GET", "/docs", Some("Bearer junk"), None).await;
        r.assert_status(200);
    }
}
