//! The admin command against the emulator (scripts/test.sh runs these in its DynamoDB stage).

use std::process::{Command, Output};

use hosting_aws::dynamodb::DynamoStore;
use hosting_domain::account;
use hosting_domain::ports::{AccountStore, CreatorStore, StreamStore};
use hosting_domain::{KeyEnvironment, Plan, Scope};

fn admin(table: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_admin"))
        .args(args)
        .env("STORE", "dynamodb")
        .env("TABLE_NAME", table)
        .output()
        .unwrap()
}

fn ok(table: &str, args: &[&str]) -> String {
    let out = admin(table, args);
    assert!(
        out.status.success(),
        "admin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
#[ignore = "needs DynamoDB (moto): scripts/test.sh runs it"]
async fn dynamodb_only_operator_commands() {
    let table = format!("admin-{}", uuid::Uuid::new_v4().simple());
    let store = DynamoStore::new(
        hosting_aws::dynamodb_client(&hosting_aws::sdk_config().await.expect("SDK configuration")),
        table.clone(),
    );
    ok(&table, &["create-table"]);
    ok(
        &table,
        &[
            "create-brand",
            "--id",
            "brand_x",
            "--name",
            "X",
            "--plan",
            "starter",
        ],
    );
    ok(
        &table,
        &["set-plan", "--brand", "brand_x", "--plan", "scale"],
    );
    let brand = store.get_brand("brand_x").await.unwrap().unwrap();
    assert_eq!(brand.plan, Plan::Scale);
    assert_eq!(
        (brand.billing_time_zone.as_str(), brand.billing_anchor_day),
        ("UTC", 1)
    );
    let told = ok(
        &table,
        &[
            "set-billing",
            "--brand",
            "brand_x",
            "--time-zone",
            "Asia/Tokyo",
            "--anchor-day",
            "5",
        ],
    );
    assert!(
        told.starts_with("brand brand_x bills from day 5 in Asia/Tokyo: the current period per_"),
        "{told}"
    );
    let brand = store.get_brand("brand_x").await.unwrap().unwrap();
    assert_eq!(
        (brand.billing_time_zone.as_str(), brand.billing_anchor_day),
        ("Asia/Tokyo", 5)
    );
    assert_eq!(brand.plan, Plan::Scale, "the plan kept");
    for (zone, day, error) in [
        (
            "Mars/Olympus",
            "5",
            "time_zone must be an IANA time zone name",
        ),
        ("UTC", "29", "anchor_day must be an integer from 1 to 28"),
    ] {
        let out = admin(
            &table,
            &[
                "set-billing",
                "--brand",
                "brand_x",
                "--time-zone",
                zone,
                "--anchor-day",
                day,
            ],
        );
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(error), "{stderr}");
    }
    let brand = store.get_brand("brand_x").await.unwrap().unwrap();
    assert_eq!(
        brand.billing_time_zone, "Asia/Tokyo",
        "a refused change changes nothing"
    );
    ok(
        &table,
        &[
            "create-brand",
            "--id",
            "brand_x",
            "--name",
            "X2",
            "--plan",
            "scale",
        ],
    );
    let brand = store.get_brand("brand_x").await.unwrap().unwrap();
    assert_eq!(brand.name, "X2");
    assert_eq!(
        (brand.billing_time_zone.as_str(), brand.billing_anchor_day),
        ("Asia/Tokyo", 5),
        "renamed, same cycle"
    );
    ok(&table, &["set-billing", "--brand", "brand_x"]);
    let brand = store.get_brand("brand_x").await.unwrap().unwrap();
    assert_eq!(
        (brand.billing_time_zone.as_str(), brand.billing_anchor_day),
        ("UTC", 1),
        "back to the default"
    );

    let created = admin(
        &table,
        &[
            "create-key",
            "--brand",
            "brand_x",
            "--env",
            "live",
            "--scopes",
            "streams:read,analytics:read",
        ],
    );
    assert!(created.status.success());
    // Standard output is the key alone; its public key_id goes beside it, on standard error.
    let key = String::from_utf8(created.stdout).unwrap().trim().to_owned();
    assert_eq!(account::parse_key(&key), Some(KeyEnvironment::Live));
    let key_id = account::key_id(&account::hash_key(&key));
    let told = String::from_utf8(created.stderr).unwrap();
    assert!(told.starts_with(&format!("key_id {key_id} ")), "{told}");
    assert!(
        !told.contains(&key[9..]),
        "the key only once, on standard output"
    );
    let stored = store
        .find_api_key(&account::hash_key(&key))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.scopes, [Scope::StreamsRead, Scope::AnalyticsRead]);
    assert!(!stored.revoked);
    let revoked = ok(&table, &["revoke-key", "--key", &key]);
    assert!(
        revoked.trim_end().ends_with(&format!("({key_id})")),
        "{revoked}"
    );
    assert!(
        store
            .find_api_key(&account::hash_key(&key))
            .await
            .unwrap()
            .unwrap()
            .revoked
    );

    let creator = std::env::temp_dir().join(format!("{table}.json"));
    std::fs::write(
        &creator,
        r#"{"id": "avt_new000000001", "name": "Nia", "status": "active", "languages": ["en"],
            "style": null, "personality": null, "vibe": null, "consent": true, "photo": null}"#,
    )
    .unwrap();
    ok(
        &table,
        &["upsert-creator", "--file", creator.to_str().unwrap()],
    );
    assert!(
        store
            .get_creator("avt_new000000001")
            .await
            .unwrap()
            .is_some()
    );
    ok(&table, &["delete-creator", "--id", "avt_new000000001"]);
    assert!(
        store
            .get_creator("avt_new000000001")
            .await
            .unwrap()
            .is_none()
    );

    let seed = format!("{}/../events/seed.json", env!("CARGO_MANIFEST_DIR"));
    let loaded = ok(&table, &["load-seed", &seed]);
    assert!(loaded.contains("2 streams"), "{loaded}");
    let stream = store
        .get_stream("5a1e0000-0000-4000-8000-000000000001".parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stream.viewer_count, 42);

    // Errors are one clear line and a failing exit.
    let out = admin(
        &table,
        &["set-plan", "--brand", "nobody", "--plan", "growth"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no brand nobody"));
    let out = admin(
        &table,
        &[
            "create-brand",
            "--id",
            "b",
            "--name",
            "B",
            "--plan",
            "platinum",
        ],
    );
    assert!(!out.status.success());
    let _ = std::fs::remove_file(creator);
}

/// `admin` with only `env` set (no AWS settings, no table): (success, stdout, stderr).
fn bare(env: &[(&str, &str)], args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_admin"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_states_the_environment_and_describes_every_option() {
    let (ok, help, _) = bare(&[], &["--help"]);
    assert!(ok);
    for expected in [
        "TABLE_NAME",
        "AWS_REGION",
        "AWS_ENDPOINT_URL",
        "load-seed",
        "outbox-replay",
    ] {
        assert!(help.contains(expected), "{expected} in:\n{help}");
    }
    let (_, help, _) = bare(&[], &["create-brand", "--help"]);
    for expected in [
        "brand_acme",
        "display name",
        "free, starter, growth, scale or enterprise",
    ] {
        assert!(help.contains(expected), "{expected} in:\n{help}");
    }
    let (_, help, _) = bare(&[], &["create-key", "--help"]);
    assert!(
        help.contains("live (real streams") && help.contains("test (simulated"),
        "{help}"
    );
}

#[test]
fn errors_are_one_clear_line() {
    // No table named: said as such, not as a configuration rule about STORE.
    let (ok, _, stderr) = bare(&[], &["create-table"]);
    assert!(!ok);
    assert_eq!(
        stderr.trim(),
        "admin: TABLE_NAME is not set: name the DynamoDB table to manage (see admin --help)"
    );
    // A file's problem comes before the environment's.
    let (ok, _, stderr) = bare(&[], &["load-seed", "/nonexistent/seed.json"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("admin: /nonexistent/seed.json: "),
        "{stderr}"
    );
    let (ok, _, stderr) = bare(
        &[],
        &["create-brand", "--id", "b", "--name", "B", "--plan", "gold"],
    );
    assert!(!ok);
    assert!(
        stderr.contains("unknown plan `gold`: one of free, starter, growth, scale, enterprise"),
        "{stderr}"
    );
    // An unreachable endpoint: one readable line, no debug dump of the SDK's error.
    let (ok, _, stderr) = bare(
        &[
            ("TABLE_NAME", "t"),
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_MAX_ATTEMPTS", "1"),
        ],
        &[
            "create-brand",
            "--id",
            "b",
            "--name",
            "B",
            "--plan",
            "growth",
        ],
    );
    assert!(!ok);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("admin: backend request failed: "),
        "{stderr}"
    );
    assert!(!stderr.contains(" { "), "no debug structures: {stderr}");
}

#[tokio::test]
#[ignore = "needs SQS (moto): scripts/test.sh runs it"]
async fn dynamodb_only_deliveries_replay_moves_dead_letters_back() {
    use hosting_aws::sqs::QueuedDelivery;
    use hosting_domain::EventType;
    use hosting_domain::ports::{DeadLetter, Delivery};

    let sqs =
        aws_sdk_sqs::Client::new(&hosting_aws::sdk_config().await.expect("SDK configuration"));
    let mut urls = Vec::new();
    for name in ["replay", "replay-dlq"] {
        let name = format!("{name}-{}", uuid::Uuid::new_v4().simple());
        let out = sqs.create_queue().queue_name(name).send().await.unwrap();
        urls.push(out.queue_url.unwrap());
    }
    let delivery = |event: &str| Delivery {
        event_id: event.into(),
        event_type: EventType::StreamStarted,
        brand_id: "brand_a".into(),
        webhook_id: uuid::Uuid::new_v4(),
        attempt: 6,
        body: format!("{{\"id\":\"{event}\"}}"),
    };
    let now = chrono::Utc::now();
    let dead = |event: &str, failed_at| DeadLetter {
        delivery: delivery(event),
        last_error: "receiver answered 500".into(),
        failed_at,
    };
    let bodies = [
        serde_json::to_string(&dead("evt_old", now - chrono::Duration::hours(2))).unwrap(),
        serde_json::to_string(&dead("evt_new", now)).unwrap(),
        // Moved there by SQS itself after too many receives.
        serde_json::to_string(&QueuedDelivery {
            delivery: delivery("evt_redriven"),
            not_before: now,
        })
        .unwrap(),
        "not a delivery".to_owned(),
    ];
    for body in bodies {
        sqs.send_message()
            .queue_url(&urls[1])
            .message_body(body)
            .send()
            .await
            .unwrap();
    }
    let replay = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_admin"))
            .arg("deliveries-replay")
            .args(args)
            .env("DELIVERY_QUEUE_URL", &urls[0])
            .env("DELIVERY_DLQ_URL", &urls[1])
            .output()
            .unwrap()
    };
    let since = (now - chrono::Duration::hours(1)).to_rfc3339();
    let out = replay(&["--since", &since]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "replayed 2 deliveries; kept 1 that failed earlier, 1 unreadable"
    );
    // The rest, with no --since: kept messages were released at once.
    let out = replay(&[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "replayed 1 deliveries; kept 0 that failed earlier, 1 unreadable"
    );

    let mut replayed = Vec::new();
    for _ in 0..10 {
        let received = sqs
            .receive_message()
            .queue_url(&urls[0])
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        for message in received.messages.unwrap_or_default() {
            let queued: QueuedDelivery = serde_json::from_str(message.body().unwrap()).unwrap();
            assert_eq!(queued.delivery.attempt, 1, "a new delivery");
            replayed.push(queued.delivery.event_id);
        }
        if replayed.len() >= 3 {
            break;
        }
    }
    replayed.sort();
    assert_eq!(replayed, ["evt_new", "evt_old", "evt_redriven"]);
}
