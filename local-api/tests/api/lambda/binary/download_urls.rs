//! Download URLs in Lambda (docs/recordings.md, "Downloads"): the function's own credentials
//! come from its environment with no expiry, so it signs with a session of the download role,
//! assumed through STS, and a URL's `url_expires_at` is never later than that session's end.

use chrono::{DateTime, Utc};

use super::*;
use crate::common::{Keys, TestApp};

/// A ready recording of brand A's test stream in `api`'s table; the stream's id.
async fn ready_recording(api: &TestApp) -> String {
    let r = api.start(&Keys::test_a(), json!({"record": true})).await;
    r.assert_status(201);
    let id = r.body["stream_id"].as_str().unwrap().to_owned();
    api.advance(chrono::Duration::seconds(30));
    api.delete(&format!("/streams/{id}"), &Keys::test_a())
        .await
        .assert_status(200);
    // The relay of its end writes the test file; then it is `ready`.
    hosting_app::delivery::relay::sweep(&api.runtime.app, Duration::ZERO)
        .await
        .unwrap();
    let shown = api.get(&format!("/streams/{id}"), &Keys::test_a()).await;
    assert_eq!(shown.body["recording"]["status"], "ready", "{}", shown.body);
    id
}

/// `GET /api/v1/streams/{id}` with brand A's test key, as API Gateway hands it over.
fn stream_detail_event(id: &str) -> Value {
    let mut event = list_streams_event();
    let path = format!("/api/v1/streams/{id}");
    event["headers"]["authorization"] = format!("Bearer {}", Keys::test_a()).into();
    event["rawPath"] = path.clone().into();
    event["requestContext"]["http"]["path"] = path.into();
    event["routeKey"] = "GET /api/v1/streams/{id}".into();
    event["requestContext"]["routeKey"] = "GET /api/v1/streams/{id}".into();
    event["rawQueryString"] = "".into();
    event["queryStringParameters"] = Value::Null;
    event
}

/// A query parameter of `url`.
fn parameter(url: &str, name: &str) -> String {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("{name} in {url}"))
        .1
        .into_owned()
}

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_a_download_url_is_signed_by_the_download_roles_session_and_ends_with_it() {
    // Kept past the test clock's date, which the function (on the real clock) reads later.
    let api = TestApp::builder()
        .with_var("RECORDING_RETENTION_DAYS", "36500")
        .await;
    let id = ready_recording(&api).await;
    let mut runtime_api =
        RuntimeApi::start(vec![stream_detail_event(&id), stream_detail_event(&id)]).await;
    // A stream's read calls no LiveKit: none is configured.
    let mut environment = lambda_environment(&backend().await, &runtime_api.address, "");
    environment.retain(|(name, _)| !name.starts_with("LIVEKIT_"));
    for (name, value) in [
        ("TABLE_NAME", api.table().unwrap()),
        ("RECORDING_RETENTION_DAYS", "36500"),
        // Longer than any session a chained role gets: the session's end bounds it.
        ("RECORDING_URL_TTL_SECS", "7200"),
    ] {
        environment.retain(|(n, _)| n != name);
        environment.push((name.to_owned(), value.to_owned()));
    }

    let asked: DateTime<Utc> = Utc::now();
    let mut child = spawn(&environment);
    let mut recordings = Vec::new();
    for _ in 0..2 {
        let Ok(Some(reply)) =
            tokio::time::timeout(Duration::from_secs(60), runtime_api.replies.recv()).await
        else {
            child.start_kill().unwrap();
            let logs = printed(&child.wait_with_output().await.unwrap());
            panic!("the function did not answer its invocation:\n{logs}");
        };
        assert_eq!(reply.kind, "response", "{reply:?}");
        assert_eq!(reply.body["statusCode"], 200, "{}", reply.body);
        let body: Value = serde_json::from_str(reply.body["body"].as_str().unwrap()).unwrap();
        recordings.push(body["recording"].clone());
    }
    let answered = Utc::now();
    child.start_kill().unwrap();
    let logs = printed(&child.wait_with_output().await.unwrap());

    for recording in &recordings {
        assert_eq!(recording["status"], "ready", "{recording}");
        let url = recording["url"].as_str().unwrap();
        // Signed by an STS session (moto's keys of assumed roles), not the environment's key.
        let credential = parameter(url, "X-Amz-Credential");
        assert!(credential.starts_with("ASIA"), "{credential}");
        assert!(!credential.starts_with("testing/"), "{credential}");
        assert!(!parameter(url, "X-Amz-Security-Token").is_empty());
        let expires_at: DateTime<Utc> = recording["url_expires_at"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let session = chrono::Duration::from_std(hosting_aws::s3::DOWNLOAD_SESSION).unwrap();
        // No later than the session assumed after the function was asked, and cut to it
        // rather than handed the configured two hours.
        assert!(
            expires_at <= answered + session,
            "{expires_at} vs {answered}"
        );
        assert!(
            expires_at >= asked + session / 2,
            "at least half a session: {expires_at} vs {asked}"
        );
        // The URL itself dies when `url_expires_at` says, so with the session: signed at the
        // read's start, it lasts until the session's end (more than an hour after the signing
        // time when assuming the role took a while).
        let expires_in: i64 = parameter(url, "X-Amz-Expires").parse().unwrap();
        let signed_at =
            chrono::NaiveDateTime::parse_from_str(&parameter(url, "X-Amz-Date"), "%Y%m%dT%H%M%SZ")
                .unwrap()
                .and_utc();
        let dies_at = signed_at + chrono::Duration::seconds(expires_in);
        assert!(
            (dies_at - expires_at).num_seconds().abs() <= 1,
            "{url} vs {expires_at}"
        );
    }
    // One session serves both reads.
    assert_eq!(
        parameter(recordings[0]["url"].as_str().unwrap(), "X-Amz-Credential")
            .split('/')
            .next(),
        parameter(recordings[1]["url"].as_str().unwrap(), "X-Amz-Credential")
            .split('/')
            .next(),
    );
    assert!(!logs.contains("X-Amz-Security-Token"), "{logs}");
}
