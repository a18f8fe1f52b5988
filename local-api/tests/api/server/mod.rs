//! The `local-api` binary as a client sees it: it prints its URL, answers at once, loads seed
//! files, logs each request, holds the transport's limits, and stops cleanly on SIGTERM; and
//! killed mid-flight, then started again.

mod cli;
mod connection_limits;
mod demo;
mod logs;
mod readme;
mod receiver_tokens;
mod restart;
mod transport;

use std::io::BufRead;
use std::process::{Child, Command};

use crate::common::*;

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
    start_with(args, &[])
}

/// [`start`] with `envs` set as well.
fn start_with(args: &[&str], envs: &[(&str, &str)]) -> Server {
    let mut all = vec![("STORE", "embedded")];
    all.extend_from_slice(envs);
    let (child, first, base, mut reader) = spawn_local_api(args, &all);
    let mut lines = vec![first];
    let mut line = String::new();
    while !args.contains(&"--seed") && reader.read_line(&mut line).unwrap() > 0 {
        lines.push(line.trim_end().to_owned());
        line.clear();
        if lines.last().unwrap().starts_with("  live key:") {
            break;
        }
    }
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
