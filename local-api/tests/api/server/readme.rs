//! The README's shell blocks: the try-it block runs as pasted, and every block of the README
//! and the docs parses.

use std::process::Command;

use super::{start, stop};

/// The README's "Try it" block, run as pasted against a started server, so it cannot drift.
#[tokio::test]
async fn the_readme_try_it_block_runs_as_pasted() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let block = readme
        .split("<!-- try-it -->")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("\n```").next())
        .expect("a ```sh block after <!-- try-it -->");
    let server = start(&["--fixed-demo-keys"]);
    assert!(
        server
            .lines
            .iter()
            .any(|l| l.ends_with(hosting_app::seed::FIXED_DEMO_TEST_KEY)),
        "{:?}",
        server.lines
    );
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", block])
        .env("API", &server.base)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stream = stdout
        .lines()
        .find_map(|l| l.strip_prefix("stream: "))
        .expect("the stream id was captured");
    assert!(uuid::Uuid::parse_str(stream).is_ok(), "{stream}");
    // Each answer on its own line, as JSON.
    let answers: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("one JSON answer per line"))
        .collect();
    assert_eq!(
        answers.len(),
        20,
        "one line per answer not captured: {stdout}"
    );
    // The destination failed by the helper, then one added: shown by their last 4 characters.
    assert!(
        answers.iter().any(|a| a["status"] == "failed"
            && a["error"] == "YouTube refused the key"
            && a["stream_key_last4"] == "mnop"),
        "{stdout}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["platform"] == "twitch" && a["status"] == "active"),
        "{stdout}"
    );
    assert!(!stdout.contains("abcd-efgh-ijkl-mnop") && !stdout.contains("live_0123456789"));
    assert!(answers.iter().any(|a| a["status"] == "ended"), "ended once");
    assert!(
        answers.iter().any(|a| a["end_reason"] == "requested"),
        "the ended stream says why"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["viewer_count"] == 120 && a["status"] == "live"),
        "the viewers helper"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["status"] == "error" && a["end_reason"] == "provider_error"),
        "the fail helper"
    );
    assert!(
        answers.iter().any(|a| a["deliveries"].is_array()),
        "the delivery log"
    );
    assert!(
        answers.iter().any(|a| a["error"]["code"] == "not_found"),
        "then 404"
    );
    assert!(
        answers.iter().any(|a| a["deleted"] == true),
        "webhook deleted"
    );
    // The scheduled show, started now by its helper, then read: started, with its stream,
    // which the block ends.
    let show = stdout
        .lines()
        .find_map(|l| l.strip_prefix("show: "))
        .expect("the show id was captured");
    let started: Vec<&serde_json::Value> = answers
        .iter()
        .filter(|a| a["show_id"] == show && a["status"] == "started")
        .collect();
    assert_eq!(started.len(), 2, "the helper's answer and GET: {stdout}");
    let show_stream = started[0]["stream_id"].as_str().expect("the show's stream");
    assert!(
        started.iter().all(|a| a["stream_id"] == show_stream),
        "{stdout}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["stream_id"] == show_stream && a["status"] == "ended"),
        "the show's stream ended: {stdout}"
    );
    // The recorded stream's clip, ready, and its download.
    assert!(
        answers
            .iter()
            .any(|a| a["clip_id"].is_string() && a["status"] == "ready" && a["url"].is_string()),
        "the clip: {stdout}"
    );
    let download = stdout
        .lines()
        .find_map(|l| l.strip_prefix("clip: "))
        .expect("the clip's download");
    assert!(download.starts_with("200, "), "{download}");
    stop(server);
}

/// Every shell block of the README, ARCHITECTURE.md and the docs pastes as is: bash parses it,
/// and it has no `<placeholder>` (which bash would read as a redirect).
#[test]
fn every_shell_block_parses_and_has_no_placeholder() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut pages = vec![
        "README.md".to_owned(),
        "ARCHITECTURE.md".to_owned(),
        "scripts/README.md".to_owned(),
    ];
    for entry in std::fs::read_dir(format!("{root}/docs")).expect("docs/") {
        let name = entry.expect("a docs entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    for page in pages {
        let text = std::fs::read_to_string(format!("{root}/{page}")).expect("the page");
        let blocks: Vec<&str> = text
            .split("```sh\n")
            .skip(1)
            .filter_map(|rest| rest.split("\n```").next())
            .collect();
        if page == "README.md" {
            assert!(blocks.len() >= 5, "{} blocks", blocks.len());
        }
        for block in blocks {
            let parsed = Command::new("bash")
                .args(["-n", "-c", block])
                .output()
                .expect("bash runs");
            assert!(
                parsed.status.success(),
                "{page}:\n{block}\n{}",
                String::from_utf8_lossy(&parsed.stderr)
            );
            let placeholder = block.match_indices('<').find(|(at, _)| {
                let rest = &block[at + 1..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '))
                    .collect();
                !name.is_empty()
                    && name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && rest[name.len()..].starts_with('>')
            });
            assert!(placeholder.is_none(), "a placeholder in {page}:\n{block}");
        }
    }
}
