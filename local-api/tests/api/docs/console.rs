//! The console's three files (docs/console.md): public, cached, confined to this host by their
//! Content-Security-Policy, and the page naming its script and style by the API's base path.
//! What the page does is tested in a browser (scripts/checks/test-console.sh).

use crate::common::*;

fn header<'a>(r: &'a Response, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_console_files_are_public_cached_and_confined_to_this_host() {
    let api = TestApp::new().await;
    // Where a replay downloads from another host (the bucket, here behind the emulator's
    // endpoint), that host is allowed for <video> alone.
    let media = if backend::is_dynamodb() {
        let endpoint = std::env::var("AWS_ENDPOINT_URL").expect("the emulator's endpoint");
        format!("media-src 'self' {}; ", endpoint.trim_end_matches('/'))
    } else {
        String::new()
    };
    let policy = format!(
        "default-src 'self'; {media}base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    );
    for (path, content_type) in [
        ("/console", "text/html; charset=utf-8"),
        ("/console.js", "text/javascript; charset=utf-8"),
        ("/console.css", "text/css; charset=utf-8"),
        ("/console.svg", "image/svg+xml"),
    ] {
        // Public: any Authorization header is ignored, and nothing is counted.
        for key in [None, Some("junk".to_owned()), Some(Keys::test_a())] {
            let r = api.call_raw("GET", path, key.as_deref(), None).await;
            r.assert_status(200);
            assert_eq!(header(&r, "content-type"), content_type, "{path}");
            assert_eq!(header(&r, "cache-control"), "public, max-age=300");
            assert_eq!(header(&r, "content-security-policy"), policy, "{path}");
            assert!(
                header(&r, "ratelimit").is_empty(),
                "{path} is never counted"
            );
            assert!(!r.bytes.is_empty());
        }
    }
    // The files named by absolute path: the page works with a trailing slash too.
    for path in ["/console", "/console/"] {
        let page = String::from_utf8(api.call_raw("GET", path, None, None).await.bytes).unwrap();
        assert!(page.contains("<script src=\"/api/v1/console.js\" defer></script>"));
        assert!(page.contains("<link rel=\"stylesheet\" href=\"/api/v1/console.css\">"));
        // Its own icon: a browser then never asks the host's /favicon.ico.
        assert!(
            page.contains(
                "<link rel=\"icon\" href=\"/api/v1/console.svg\" type=\"image/svg+xml\">"
            )
        );
        assert!(page.contains("<label for=\"api-key\">API key</label>"));
    }
    // Documents, not operations on a brand's data: the discovery document's summary of public
    // endpoints leaves them out, as it does the reference page.
    let discovery = api.call("GET", "/", None, None).await.body;
    let authentication = discovery["authentication"].as_str().unwrap();
    assert!(!authentication.contains("console"), "{authentication}");
    assert!(
        discovery["endpoints"]["GET /console"]
            .as_str()
            .unwrap()
            .contains("Public")
    );
}
