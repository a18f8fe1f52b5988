//! The `local-api` binary as a client sees it: it prints its URL, answers at once, loads seed
//! files, and stops cleanly on SIGTERM.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::*;
use serde_json::json;

struct Server {
    child: Child,
    base: String,
    lines: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn start(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("STORE", "memory")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start local-api");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 0 {
        lines.push(line.trim_end().to_owned());
        line.clear();
        if lines.last().unwrap().starts_with("  live key:")
            || (args.contains(&"--seed") && lines.len() == 1)
        {
            break;
        }
    }
    let base = lines[0]
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    Server { child, base, lines }
}

fn stop(mut server: Server) {
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
}

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

#[test]
fn bad_arguments_and_seed_files_fail_with_a_message() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_local-api"))
            .args(args)
            .env("STORE", "memory")
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
