//! The request pipeline (docs/request-pipeline.md, "The order of checks"; docs/rate-limits.md):
//! routing, authentication, rate limit, scope, plan gate; and the two public endpoints.

mod common;

use axum::body::Body;
use axum::http::Request;
use chrono::Duration;
use common::*;
use serde_json::json;

/// The API's endpoints, the webhook operations' and the test helpers': every keyed endpoint with
/// the scope it needs.
const SPEC_SCOPES: [(&str, &str, &str); 17] = [
    ("POST", "/streams", "streams:write"),
    ("GET", "/streams", "streams:read"),
    ("GET", "/streams/{id}", "streams:read"),
    ("DELETE", "/streams/{id}", "streams:write"),
    ("GET", "/analytics", "analytics:read"),
    ("POST", "/webhooks", "webhooks:write"),
    ("GET", "/webhooks", "webhooks:write"),
    ("DELETE", "/webhooks", "webhooks:write"),
    ("GET", "/webhooks/{id}", "webhooks:write"),
    ("PATCH", "/webhooks/{id}", "webhooks:write"),
    ("POST", "/webhooks/{id}/rotate-secret", "webhooks:write"),
    ("POST", "/webhooks/{id}/test", "webhooks:write"),
    ("GET", "/webhooks/{id}/deliveries", "webhooks:write"),
    ("POST", "/webhooks/{id}/redeliver", "webhooks:write"),
    (
        "POST",
        "/test_helpers/streams/{id}/viewers",
        "streams:write",
    ),
    ("POST", "/test_helpers/streams/{id}/finish", "streams:write"),
    ("POST", "/test_helpers/streams/{id}/fail", "streams:write"),
];

/// Every keyed endpoint as declared (so every new one is covered): method, a concrete path
/// with its required parameters, and its scope.
fn scoped() -> Vec<(String, String, &'static str)> {
    use hosting_http::endpoints::{ENDPOINTS, In};
    ENDPOINTS
        .iter()
        .filter_map(|endpoint| {
            let scope = endpoint.scope()?;
            let mut path = endpoint
                .path
                .replace("{id}", "00000000-0000-4000-8000-000000000000");
            let query: Vec<String> = endpoint
                .parameters
                .iter()
                .filter(|p| p.required && p.location == In::Query)
                .map(|p| format!("{}=x", p.name))
                .collect();
            if !query.is_empty() {
                path = format!("{path}?{}", query.join("&"));
            }
            Some((endpoint.method.to_string(), path, scope.as_str()))
        })
        .collect()
}

#[test]
fn declared_scopes_are_the_specs() {
    use hosting_http::endpoints::ENDPOINTS;
    let mut declared: Vec<(String, String, String)> = ENDPOINTS
        .iter()
        .filter_map(|e| {
            Some((
                e.method.to_string(),
                e.path.to_owned(),
                e.scope()?.to_string(),
            ))
        })
        .collect();
    let mut spec: Vec<(String, String, String)> = SPEC_SCOPES
        .iter()
        .map(|(m, p, s)| (m.to_string(), p.to_string(), s.to_string()))
        .collect();
    declared.sort();
    spec.sort();
    assert_eq!(declared, spec);
}

async fn with_authorization(api: &TestApi, value: Option<&str>) -> Response {
    let mut request = Request::builder().uri("/api/v1/streams");
    if let Some(value) = value {
        request = request.header("authorization", value);
    }
    api.send(request.body(Body::empty()).unwrap()).await
}

#[tokio::test]
async fn every_401_is_byte_identical_with_www_authenticate() {
    let api = TestApi::new().await;
    let unknown = key("test", "unknown");
    let cases = [
        None,                                               // missing header
        Some(format!("Basic {}", Keys::test_a())),          // other scheme
        Some("Bearer svc_test_short".to_owned()),           // malformed
        Some(format!("Bearer {}", &Keys::test_a()[..40])),  // malformed: too short
        Some(format!("Bearer {}!", &Keys::test_a()[..40])), // malformed: bad character
        Some(format!("Bearer {unknown}")),                  // unknown
        Some(format!("Bearer {}", Keys::revoked())),        // revoked
        Some(format!("Bearer {}", Keys::expired())),        // expired
        Some(format!("Bearer {}", Keys::expiring_now())),   // expires_at == now
        Some("Bearer".to_owned()),
        Some(String::new()),
    ];
    let mut first: Option<Vec<u8>> = None;
    for case in &cases {
        let r = with_authorization(&api, case.as_deref()).await;
        r.assert_error(401, "unauthorized");
        assert_eq!(
            r.header("www-authenticate"),
            Some("Bearer"),
            "case {case:?}"
        );
        match &first {
            None => first = Some(r.bytes.clone()),
            Some(bytes) => assert_eq!(&r.bytes, bytes, "case {case:?}"),
        }
        let mut names: Vec<_> = r.headers.keys().map(|k| k.as_str().to_owned()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "content-length",
                "content-type",
                "www-authenticate",
                "x-request-id"
            ]
        );
    }
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive() {
    let api = TestApi::new().await;
    for scheme in ["bearer", "BEARER", "BeArEr"] {
        let r = with_authorization(&api, Some(&format!("{scheme} {}", Keys::test_a()))).await;
        r.assert_status(200);
    }
}

#[tokio::test]
async fn a_401_is_not_counted_against_any_brand() {
    let api = TestApi::new().await;
    for _ in 0..75 {
        for key in [Keys::revoked(), Keys::expired()] {
            api.get("/streams", &key)
                .await
                .assert_error(401, "unauthorized");
        }
    }
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test]
async fn public_endpoints_ignore_any_authorization() {
    let api = TestApi::new().await;
    for value in [
        None,
        Some("Bearer nonsense"),
        Some("Basic abc"),
        Some(&*format!("Bearer {}", Keys::revoked())),
    ] {
        for path in ["/api/v1/", "/api/v1", "/api/v1/creators"] {
            let mut request = Request::builder().uri(path);
            if let Some(value) = value {
                request = request.header("authorization", value);
            }
            let r = api.send(request.body(Body::empty()).unwrap()).await;
            r.assert_status(200);
        }
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_get_the_404_envelope() {
    let api = TestApi::new().await;
    let cases = [
        ("GET", "/nope"),
        ("GET", "/streams/a/b"),
        ("PUT", "/streams"),
        ("PATCH", "/streams/00000000-0000-4000-8000-000000000000"),
        ("POST", "/creators"),
        ("DELETE", "/"),
        ("POST", "/analytics"),
        ("PUT", "/webhooks"),
    ];
    for (method, path) in cases {
        let r = api.call(method, path, Some(&Keys::test_a()), None).await;
        r.assert_error(404, "not_found");
        assert!(r.header("x-request-id").is_some());
    }
    let outside = api
        .send(
            Request::builder()
                .uri("/elsewhere")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    outside.assert_error(404, "not_found");
}

#[tokio::test]
async fn trailing_slash_is_the_same_route() {
    let api = TestApi::new().await;
    api.get("/streams/", &Keys::test_a())
        .await
        .assert_status(200);
    api.get("/webhooks/", &Keys::test_a())
        .await
        .assert_status(200);
    let r = api.call("GET", "/creators/", None, None).await;
    r.assert_status(200);
}

#[tokio::test]
async fn each_scoped_endpoint_needs_its_scope() {
    let api = TestApi::new().await;
    for (method, path, needed) in scoped() {
        for held in ALL_SCOPES {
            let r = api
                .call(&method, &path, Some(&Keys::only(held)), None)
                .await;
            if held == needed {
                assert_ne!(r.code(), "insufficient_scope", "{method} {path}");
            } else {
                r.assert_error(403, "insufficient_scope");
                assert!(
                    r.body["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains(needed),
                    "{method} {path}: message names {needed}"
                );
            }
        }
    }
}

#[tokio::test]
async fn plan_gate_stops_live_keys_below_growth_only() {
    let api = TestApi::new().await;
    for (method, path, _) in scoped() {
        let (method, path) = (method.as_str(), path.as_str());
        for key in [Keys::live_free(), Keys::live_starter()] {
            api.call(method, path, Some(&key), None)
                .await
                .assert_error(402, "plan_required");
        }
        let r = api.call(method, path, Some(&Keys::test_free()), None).await;
        assert_ne!(
            r.status.as_u16(),
            402,
            "{method} {path}: test keys are exempt"
        );
        let r = api.call(method, path, Some(&Keys::live_a()), None).await;
        assert_ne!(r.status.as_u16(), 402, "{method} {path}: growth passes");
    }
}

#[tokio::test]
async fn scope_is_checked_before_the_plan_gate() {
    let api = TestApi::new().await;
    // A live key of a Growth brand lacking the scope: 403, not 402 (and a free brand's live
    // key with the scope: 402).
    api.get("/streams", &Keys::live_only("analytics:read"))
        .await
        .assert_error(403, "insufficient_scope");
}

#[tokio::test]
async fn exactly_100_requests_per_brand_per_minute() {
    let api = TestApi::new().await;
    for i in 0..100 {
        let key = if i % 2 == 0 {
            Keys::test_a()
        } else {
            Keys::test_a2()
        };
        api.get("/streams", &key).await.assert_status(200);
    }
    // The 101st, on any key of the brand and any endpoint, is refused without Retry-After.
    for key in [
        Keys::test_a(),
        Keys::test_a2(),
        Keys::live_a(),
        Keys::only("analytics:read"),
    ] {
        let r = api.get("/analytics", &key).await;
        r.assert_error(429, "rate_limited");
        assert!(r.header("retry-after").is_none());
    }
    // A read is counted while it runs; over the budget its own answer (a 400 or a 404 here)
    // gives way to the 429, which still carries the request id.
    for path in [
        "/analytics?period=bogus".to_owned(),
        format!("/streams/{}", uuid::Uuid::new_v4()),
    ] {
        let r = api.get(&path, &Keys::test_a()).await;
        r.assert_error(429, "rate_limited");
        assert!(r.header("x-request-id").is_some(), "{path}");
    }
    // Other brands are unaffected; public endpoints are never limited.
    api.get("/streams", &Keys::test_b())
        .await
        .assert_status(200);
    for _ in 0..20 {
        api.call("GET", "/creators", Some(&Keys::test_a()), None)
            .await
            .assert_status(200);
        api.call("GET", "/", Some(&Keys::test_a()), None)
            .await
            .assert_status(200);
    }
    // The next calendar minute starts a new budget.
    api.advance(Duration::seconds(30));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test]
async fn the_window_is_the_calendar_minute_not_a_sliding_one() {
    let api = TestApi::new().await;
    // start_time() is 30 s into a minute: 100 now, then 29 s later still the same window.
    for _ in 0..100 {
        api.get("/streams", &Keys::test_a())
            .await
            .assert_status(200);
    }
    api.advance(Duration::seconds(29));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(429, "rate_limited");
    api.advance(Duration::seconds(1));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limit_is_exact_under_concurrency() {
    let api = std::sync::Arc::new(TestApi::new().await);
    let statuses = concurrently(150, |i| {
        let api = api.clone();
        async move {
            let key = if i % 2 == 0 {
                Keys::test_a()
            } else {
                Keys::test_a2()
            };
            api.get("/streams", &key).await.status.as_u16()
        }
    })
    .await;
    assert_eq!(statuses.get(&200), Some(&100));
    assert_eq!(statuses.get(&429), Some(&50));
}

#[tokio::test]
async fn requests_refused_by_scope_or_plan_still_count() {
    // The rate limit comes before the scope check and the plan gate (docs/request-pipeline.md,
    // "The order of checks").
    let api = TestApi::new().await;
    for _ in 0..50 {
        api.get("/streams", &Keys::only("analytics:read"))
            .await
            .assert_error(403, "insufficient_scope");
    }
    let free = TestApi::new().await;
    for _ in 0..100 {
        free.get("/streams", &Keys::live_free())
            .await
            .assert_error(402, "plan_required");
    }
    // The free brand's budget is spent by its 402s, even for its exempt test key.
    free.get("/streams", &Keys::test_free())
        .await
        .assert_error(429, "rate_limited");
    for _ in 0..50 {
        api.get("/streams", &Keys::test_a())
            .await
            .assert_status(200);
    }
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(429, "rate_limited");
    // Over the budget, rate_limited answers before the scope is looked at.
    api.get("/streams", &Keys::only("analytics:read"))
        .await
        .assert_error(429, "rate_limited");
}

#[tokio::test]
async fn every_response_is_json_with_a_request_id() {
    let api = TestApi::new().await;
    let responses = [
        api.call("GET", "/", None, None).await,
        api.call("GET", "/creators", None, None).await,
        api.get("/streams", &Keys::test_a()).await,
        api.get("/streams", "bad").await,
        api.get("/nope", &Keys::test_a()).await,
        api.call_raw("POST", "/streams", Some(&Keys::test_a()), Some("{"))
            .await,
    ];
    let mut ids = std::collections::HashSet::new();
    for r in responses {
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(ids.insert(r.header("x-request-id").unwrap().to_owned()));
    }
}

#[tokio::test]
async fn the_gateway_request_id_is_echoed() {
    let api = TestApi::new().await;
    let mut request = Request::builder()
        .uri("/api/v1/")
        .body(Body::empty())
        .unwrap();
    request
        .extensions_mut()
        .insert(hosting_http::GatewayRequestId("gw-123".into()));
    let r = api.send(request).await;
    assert_eq!(r.header("x-request-id"), Some("gw-123"));
}

#[tokio::test]
async fn bodies_over_1_mib_are_invalid_fields() {
    let api = TestApi::new().await;
    let product = "p".repeat(1024 * 1024);
    let body = json!({"creator_id": CREATOR_AVA, "product_name": product, "platform": "kick"});
    api.post("/streams", &Keys::test_a(), body)
        .await
        .assert_error(400, "invalid_fields");
    api.post(
        "/webhooks",
        &Keys::test_a(),
        json!({"url": "x".repeat(1024 * 1024), "events": []}),
    )
    .await
    .assert_error(400, "invalid_fields");
}

#[tokio::test]
async fn discovery_document() {
    let api = TestApi::new().await;
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
    assert_eq!(endpoints.len(), 21);
    for (method, path, scope) in SPEC_SCOPES {
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
    let api = TestApi::new().await;
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
    let api = TestApi::new().await;
    api.set_failing().await;
    api.call("GET", "/creators", None, None)
        .await
        .assert_error(500, "db_error");
    // And the discovery document does not touch the store.
    api.call("GET", "/", None, None).await.assert_status(200);
}

#[tokio::test]
async fn a_revoked_key_stops_working_within_five_seconds() {
    let api = TestApi::new().await;
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
    api.update_key(&Keys::test_a(), |key| key.revoked = true)
        .await;
    // Keys are cached per instance for at most 5 seconds.
    api.advance(Duration::seconds(5));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(401, "unauthorized");
}

#[tokio::test]
async fn an_expired_key_is_refused_even_while_cached() {
    let api = TestApi::new().await;
    let expires = api.now() + Duration::seconds(2);
    api.update_key(&Keys::test_a(), |key| key.expires_at = Some(expires))
        .await;
    api.get("/streams", &Keys::test_a())
        .await
        .assert_status(200);
    api.advance(Duration::seconds(2));
    api.get("/streams", &Keys::test_a())
        .await
        .assert_error(401, "unauthorized");
}
