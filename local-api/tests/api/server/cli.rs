//! Arguments, `--help` and seed files that are wrong: each fails with a message.

use std::process::Command;

use serde_json::json;

use crate::common::*;

#[test]
fn bad_arguments_and_seed_files_fail_with_a_message() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_local-api"))
            .args(args)
            .env("STORE", "embedded")
            .output()
            .unwrap()
    };
    let out = run(&["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
    let out = run(&["--addr", "127.0.0.1:0", "--seed", "/nonexistent/seed.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed"));
    let out = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .env("PREPARING_TIMEOUT_SECS", "soon")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("PREPARING_TIMEOUT_SECS"));
}

#[test]
fn help_lists_options_environment_and_the_seed_format() {
    let output = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "--addr",
        "--seed FILE",
        "--fixed-demo-keys",
        "STORE=embedded|dynamodb",
        "LIVEKIT_URL",
        "WEBHOOK_ALLOW_PRIVATE_URLS",
        "Seed files",
        "SIGTERM",
    ] {
        assert!(help.contains(expected), "{expected} in:\n{help}");
    }
}

/// `(exit code, stderr)` of a server that fails to start.
fn fails_to_start(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("STORE", "embedded")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn seed_errors_name_the_file_and_refuse_keys_of_unknown_brands() {
    let dir = std::env::temp_dir();
    let broken = dir.join(format!("broken-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&broken, "{\"brands\": [").unwrap();
    let (code, stderr) = fails_to_start(&["--seed", broken.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(stderr.contains(broken.to_str().unwrap()), "{stderr}");

    let orphan = dir.join(format!("orphan-{}.json", uuid::Uuid::new_v4().simple()));
    let seed = json!({"api_keys": [{"key": key("test", "orphan"), "brand_id": "brand_nobody",
                                    "scopes": ["streams:read"]}]});
    std::fs::write(&orphan, seed.to_string()).unwrap();
    let (code, stderr) = fails_to_start(&["--seed", orphan.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("brand `brand_nobody`") && stderr.contains(orphan.to_str().unwrap()),
        "{stderr}"
    );
    let zoned = dir.join(format!("zoned-{}.json", uuid::Uuid::new_v4().simple()));
    let seed = json!({"brands": [{"id": "brand_z", "name": "Z", "plan": "growth",
                                  "vertical": "live-commerce", "billing_time_zone": "Mars/Olympus"}]});
    std::fs::write(&zoned, seed.to_string()).unwrap();
    let (code, stderr) = fails_to_start(&["--seed", zoned.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("brand #0: time_zone must be an IANA time zone name"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(zoned);
    let (code, stderr) = fails_to_start(&["--seed", "/nonexistent/seed.json"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("cannot read seed file /nonexistent/seed.json"),
        "{stderr}"
    );
    for file in [broken, orphan] {
        let _ = std::fs::remove_file(file);
    }
}
