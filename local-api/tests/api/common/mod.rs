//! The HTTP-level test harness: the local server's router on the backend under test, a manual
//! clock, and seeded brands and keys for every case the pipeline distinguishes.

pub mod backend;
pub mod contract;
mod fake_calls;
pub mod fake_egress;
pub mod fake_livekit;
mod fake_participants;
pub mod fake_rooms;
pub mod faults;
pub mod livekit_events;
pub mod receiver;
pub mod store_log;

mod app;
mod builder;
pub mod invariants;
mod keys;
mod rate_limit;
mod response;
pub mod room_invariants;
pub mod show_invariants;
mod state;
mod streams;
mod webhooks;

pub use app::TestApp;
pub use builder::TestAppBuilder;
pub use keys::*;
pub use rate_limit::*;
pub use response::Response;
pub use streams::*;
pub use webhooks::*;

/// Says on the terminal, as a test that takes long on purpose starts, how long and why, so its
/// run does not read as a hang. Written past the test harness's capture (straight to stderr,
/// one line in one write), so it shows whether the test passes or fails.
pub fn slow_by_design(test: &str, why: &str) {
    use std::io::Write;
    let line = format!("\n-- {test}: slow by design, {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The `local-api` binary started on a free loopback port with `args` and `envs`: the process,
/// the first line it printed, its base URL (`http://127.0.0.1:<port>/api/v1`) and the rest of
/// its stdout.
pub fn spawn_local_api(
    args: &[&str],
    envs: &[(&str, &str)],
) -> (
    std::process::Child,
    String,
    String,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_local-api"))
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .envs(envs.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start local-api");
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    // Log lines a debug level writes while the server starts come before its address.
    let mut first = String::new();
    while !first.contains(" listening on ") {
        first.clear();
        assert!(
            reader.read_line(&mut first).unwrap() > 0,
            "local-api exited before listening"
        );
    }
    let first = first.trim_end().to_owned();
    let base = first
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    (child, first, base, reader)
}

/// Every line `reader` (a started binary's stdout) writes from now on, gathered by a thread
/// of its own so the binary never blocks on a full pipe.
pub fn collect_lines(
    reader: std::io::BufReader<std::process::ChildStdout>,
) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    use std::io::BufRead;
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let collected = lines.clone();
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            collected.lock().unwrap().push(line);
        }
    });
    lines
}

/// Runs `count` copies of `request` at once; returns how many answered each status.
pub async fn concurrently<F, Fut>(count: usize, request: F) -> std::collections::HashMap<u16, usize>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = u16> + Send + 'static,
{
    let handles: Vec<_> = (0..count).map(|i| tokio::spawn(request(i))).collect();
    let mut statuses = std::collections::HashMap::new();
    for handle in handles {
        *statuses.entry(handle.await.unwrap()).or_insert(0) += 1;
    }
    statuses
}
