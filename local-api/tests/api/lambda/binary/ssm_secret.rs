//! The LiveKit API secret in Lambda: read from SSM once per instance, never from the
//! environment, while requests that need none are answered.

use super::*;

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_the_streams_function_signs_viewer_tokens_with_the_secret_from_ssm() {
    let backend = backend().await;
    let (parameter, scope) = put_secret_parameter(API_SECRET).await;
    // SSM throttles a burst of cold starts: the read retries through it.
    crate::common::faults::set(&scope, json!({"throttling": 0.3})).await;
    let livekit = FakeLiveKit::start().await;
    let mut runtime_api = RuntimeApi::start(vec![start_stream_event()]).await;
    let mut environment = lambda_environment(&backend, &runtime_api.address, &livekit.url);
    environment.push(("LIVEKIT_API_SECRET_PARAMETER".into(), parameter.clone()));
    assert!(
        environment
            .iter()
            .all(|(_, value)| !value.contains(API_SECRET)),
        "the secret is in no variable"
    );

    let mut child = spawn(&environment);
    let reply = tokio::time::timeout(Duration::from_secs(60), runtime_api.replies.recv())
        .await
        .expect("the function answers its invocation")
        .expect("a reply");
    child.start_kill().unwrap();
    let logs = printed(&child.wait_with_output().await.unwrap());

    assert_eq!(reply.kind, "response", "{reply:?}\n{logs}");
    let response = reply.body;
    assert_eq!(response["statusCode"], 201, "{response}\n{logs}");
    let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
    // LiveKit (faked) accepted the function's calls, which it signs with the same secret.
    assert!(
        livekit
            .methods()
            .contains(&"livekit.RoomService/CreateRoom".to_owned()),
        "{:?}",
        livekit.methods()
    );
    let token = body["viewer_token"].as_str().expect("a viewer token");
    let claims = TokenVerifier::with_api_key(API_KEY, API_SECRET)
        .verify(token)
        .expect("LiveKit's SDK verifies the viewer token with the secret from SSM");
    assert_eq!(claims.iss, API_KEY);
    assert_eq!(claims.video.room, body["room_name"].as_str().unwrap());
    assert!(claims.video.room_join);
    assert_eq!(claims.video.can_subscribe, Some(true));
    assert_eq!(claims.video.can_publish, Some(false));
    assert!(
        TokenVerifier::with_api_key(API_KEY, "another-secret-0123456789abcdefghij")
            .verify(token)
            .is_err(),
        "signed with that secret and no other"
    );
    assert!(!logs.contains(API_SECRET), "the secret reached a log line");
    let stats = crate::common::faults::stats(&scope).await;
    assert!(
        stats["requests"].as_u64().unwrap() >= 1,
        "the secret was read through the fault proxy: {stats}"
    );
}

/// `GET /api/v1/streams` with brand A's live key: a request that needs no LiveKit secret.

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_a_request_needing_no_secret_is_answered_while_the_secret_is_read() {
    let backend = backend().await;
    let (parameter, scope) = put_secret_parameter(API_SECRET).await;
    // SSM answers the read after 4 s: far longer than the list takes.
    crate::common::faults::set(&scope, json!({"slow_ops": {"GetParameter": 4000}})).await;
    let livekit = FakeLiveKit::start().await;
    let mut runtime_api = RuntimeApi::start(vec![list_streams_event(), start_stream_event()]).await;
    let mut environment = lambda_environment(&backend, &runtime_api.address, &livekit.url);
    environment.push(("LIVEKIT_API_SECRET_PARAMETER".into(), parameter));

    let mut child = spawn(&environment);
    let pid = child.id().expect("the function runs");
    let mut replies = Vec::new();
    for _ in 0..2 {
        let reply = tokio::time::timeout(Duration::from_secs(60), runtime_api.replies.recv())
            .await
            .expect("the function answers its invocations")
            .expect("a reply");
        replies.push(reply);
        if replies.len() == 1 {
            // The read is still waiting on the slow SSM, on its own thread at idle priority
            // (which the thread sets itself as it starts, hence the wait on a loaded machine).
            #[cfg(target_os = "linux")]
            {
                let deadline = std::time::Instant::now() + Duration::from_secs(3);
                let mut policy = thread_policy(pid, "secrets");
                while policy != Some(SCHED_IDLE) && std::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    policy = thread_policy(pid, "secrets");
                }
                assert_eq!(
                    policy,
                    Some(SCHED_IDLE),
                    "the secret's reader runs at idle priority"
                );
            }
        }
    }
    child.start_kill().unwrap();
    let logs = printed(&child.wait_with_output().await.unwrap());

    let status = |reply: &Reply| reply.body["statusCode"].as_u64();
    assert_eq!(
        (replies[0].kind, status(&replies[0])),
        ("response", Some(200)),
        "{replies:?}\n{logs}"
    );
    // The list was answered before the secret arrived; the start waited for it.
    let position = |needles: &[&str]| {
        logs.lines()
            .position(|line| needles.iter().all(|needle| line.contains(needle)))
            .unwrap_or_else(|| panic!("no line with {needles:?}:\n{logs}"))
    };
    let listed = position(&["\"method\":\"GET\"", "\"route\":\"/api/v1/streams\""]);
    assert!(listed < position(&["secret read"]), "{logs}");
    assert_eq!(
        (replies[1].kind, status(&replies[1])),
        ("response", Some(201)),
        "{replies:?}\n{logs}"
    );
    let body: Value = serde_json::from_str(replies[1].body["body"].as_str().unwrap()).unwrap();
    TokenVerifier::with_api_key(API_KEY, API_SECRET)
        .verify(body["viewer_token"].as_str().expect("a viewer token"))
        .expect("signed with the secret read from SSM");
    assert_eq!(
        crate::common::faults::stats(&scope).await["injected"]["slow_ops"],
        1,
        "one read, through the slow SSM"
    );
    assert!(!logs.contains(API_SECRET), "the secret reached a log line");
}

#[tokio::test]
#[ignore = "needs moto: runs in scripts/test.sh's DynamoDB stage"]
async fn dynamodb_only_a_secret_in_the_environment_or_an_unreadable_parameter_stops_the_function() {
    let backend = backend().await;
    let livekit = FakeLiveKit::start().await;
    let runtime_api = RuntimeApi::start(vec![]).await;
    let environment = lambda_environment(&backend, &runtime_api.address, &livekit.url);

    // The secret itself in the environment: refused, and never echoed.
    let mut with_secret = environment.clone();
    with_secret.push(("LIVEKIT_API_SECRET".into(), API_SECRET.into()));
    let (status, logs) = run_until_exit(&with_secret).await;
    assert!(!status.success());
    assert!(
        logs.contains("LIVEKIT_API_SECRET: not read in Lambda"),
        "{logs}"
    );
    assert!(!logs.contains(API_SECRET), "{logs}");

    // A parameter that does not exist: the function stops at start-up, naming it.
    let mut missing = environment.clone();
    let name = "/live-stream-hosting/absent/livekit-api-secret";
    missing.push(("LIVEKIT_API_SECRET_PARAMETER".into(), name.into()));
    let (status, logs) = run_until_exit(&missing).await;
    assert!(!status.success());
    assert!(logs.contains(&format!("SSM parameter {name}")), "{logs}");

    // SSM failing for good: the function stops after its retries, naming the parameter.
    let (parameter, scope) = put_secret_parameter(API_SECRET).await;
    crate::common::faults::set(&scope, json!({"fail_ops": ["GetParameter"]})).await;
    let mut failing = environment.clone();
    failing.push(("LIVEKIT_API_SECRET_PARAMETER".into(), parameter.clone()));
    let (status, logs) = run_until_exit(&failing).await;
    assert!(!status.success());
    assert!(
        logs.contains(&format!("SSM parameter {parameter}")),
        "{logs}"
    );
    assert!(!logs.contains(API_SECRET), "{logs}");
    assert_eq!(
        crate::common::faults::stats(&scope).await["injected"]["fail_ops"],
        8,
        "every attempt the client makes"
    );

    // A certificate bundle named for the AWS clients that cannot be read: the function stops
    // before any AWS call, naming the variable and the file.
    let mut bad_bundle = missing.clone();
    bad_bundle.push(("AWS_CA_BUNDLE".into(), "/nonexistent/ca-bundle.pem".into()));
    let (status, logs) = run_until_exit(&bad_bundle).await;
    assert!(!status.success());
    assert!(
        logs.contains("AWS_CA_BUNDLE: cannot read /nonexistent/ca-bundle.pem"),
        "{logs}"
    );
    assert!(!logs.contains("SSM parameter"), "{logs}");

    // LiveKit configured with no secret at all.
    let (status, logs) = run_until_exit(&environment).await;
    assert!(!status.success());
    assert!(
        logs.contains("LIVEKIT_API_SECRET: required with LIVEKIT_URL"),
        "{logs}"
    );
}
