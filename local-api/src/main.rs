//! `local-api [--addr 127.0.0.1:3000] [--seed FILE] [--fixed-demo-keys]`: the whole API on one
//! port, with embedded backends (README, "Try it"; docs/configuration.md, "Local server").

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use hosting_app::delivery::Deliverer;
use hosting_app::seed::{self, Seed};
use hosting_domain::clock::SystemClock;
use hosting_http::API_PREFIX;
use hosting_runtime::Runtime;
use hosting_support::config::{Config, StoreKind};

const USAGE: &str = "usage: local-api [--addr 127.0.0.1:3000] [--seed FILE] [--fixed-demo-keys]";

const HELP: &str = "\
The Live Stream Hosting API on one port, with every function's handlers and, by default,
embedded backends: in-memory store, in-process delivery queue and timers.

usage: local-api [--addr 127.0.0.1:3000] [--seed FILE] [--fixed-demo-keys]

options:
  --addr ADDR         where to listen (default 127.0.0.1:3000; port 0 picks a free one)
  --seed FILE         load brands, keys, creators and streams from a seed file instead of
                      the demo data (format: docs/configuration.md, \"Seed files\")
  --fixed-demo-keys   demo keys that stay the same across restarts (local use only):
                      svc_test_demotestkey000000000000000000000
                      svc_live_demolivekey000000000000000000000
  -h, --help          this help

environment (docs/configuration.md, \"Environment variables\", has them all):
  STORE=embedded|dynamodb    state backend (default embedded; dynamodb needs TABLE_NAME)
  TABLE_NAME, DELIVERY_QUEUE_URL, DELIVERY_DLQ_URL, SCHEDULER_*   AWS backends
  LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET   room provider (live-key starts)
  WEBHOOK_ALLOW_PRIVATE_URLS=true   deliver webhooks to http:// and loopback receivers
  PREPARING_TIMEOUT_SECS, DISPATCH_RETRY_SECS, RECONNECT_WINDOW_SECS, SWEEP_INTERVAL_SECS,
  WEBHOOK_RETRY_DELAYS_SECS, LOG_LEVEL, LOG_FORMAT=json (JSON lines, as in Lambda)
  HEAD_TIMEOUT_SECS, BODY_TIMEOUT_SECS, IDLE_TIMEOUT_SECS, MAX_CONNECTIONS,
  SHUTDOWN_TIMEOUT_SECS   the limits on clients (defaults 10, 10, 60, 1024, 10)

SIGINT or SIGTERM stops it cleanly: requests in progress get SHUTDOWN_TIMEOUT_SECS to finish.";

struct Args {
    addr: SocketAddr,
    seed: Option<String>,
    fixed_demo_keys: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
        seed: None,
        fixed_demo_keys: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--addr" => {
                let value = it.next().ok_or("--addr needs a value")?;
                args.addr = value.parse().map_err(|_| {
                    format!("--addr: `{value}` is not an address like 127.0.0.1:3000")
                })?;
            }
            "--seed" => args.seed = Some(it.next().ok_or("--seed needs a file")?),
            "--fixed-demo-keys" => args.fixed_demo_keys = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(args)
}

#[global_allocator]
static ALLOCATOR: hosting_runtime::Allocator = hosting_runtime::Allocator;

#[tokio::main]
async fn main() -> ExitCode {
    // Log lines are written by a thread of their own, many per write (`log_writer`), so that
    // the access log costs a request no system call; lines still waiting are written when
    // `main` returns.
    let (log_writer, _write_the_rest) = local_api::log_writer::batched_stdout();
    hosting_runtime::telemetry::init_local(log_writer);
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) if message.is_empty() => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("local-api: {message}");
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("local-api: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let base_url = format!("http://{addr}{API_PREFIX}");

    let mut config = Config::from_env(StoreKind::Embedded).map_err(|e| e.to_string())?;
    config
        .public_base_url
        .get_or_insert_with(|| base_url.clone());
    let runtime = Runtime::from_config(config, Arc::new(SystemClock)).await?;
    let store = runtime.app.store.clone();
    let demo_keys = match &args.seed {
        Some(path) => {
            let json = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read seed file {path}: {e}"))?;
            let seed = Seed::from_json(&json).map_err(|e| format!("{path}: {e}"))?;
            seed.load(&*store)
                .await
                .map_err(|e| format!("{path}: {e}"))?;
            None
        }
        None => {
            let demo = seed::demo(args.fixed_demo_keys);
            demo.seed.load(&*store).await.map_err(|e| e.to_string())?;
            Some((demo.test_key, demo.live_key))
        }
    };

    let deliverer = Deliverer::new(
        runtime.app.config.webhook_timeout,
        runtime.app.config.webhook_allow_private_urls,
    )
    .map_err(|e| format!("cannot build the webhook client: {e}"))?;
    let background = runtime.spawn_background(deliverer);

    println!("Live Stream Hosting API listening on {base_url}/");
    if let Some((test_key, live_key)) = demo_keys {
        println!(
            "demo brand `{}` (growth plan), all scopes:",
            seed::DEMO_BRAND_ID
        );
        println!("  test key: {test_key}");
        println!("  live key: {live_key}");
    }

    let service = local_api::service(runtime.app.clone());
    let limits = runtime.app.config.transport;
    local_api::transport::serve(listener, service, limits, shutdown_signal())
        .await
        .map_err(|e| e.to_string())?;
    for task in background {
        task.abort();
    }
    println!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
