//! Logging: JSON lines in Lambda (CloudWatch), compact text locally. Keys and secrets are
//! never logged.

use tracing_subscriber::EnvFilter;

pub fn init_json() {
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter())
        .with_current_span(false)
        .with_ansi(false)
        .without_time() // CloudWatch stamps every line
        .try_init();
}

/// Compact text; colours only on a terminal, so a log written to a file stays plain.
pub fn init_text() {
    let _ = tracing_subscriber::fmt()
        .compact()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .with_env_filter(filter())
        .try_init();
}

fn filter() -> EnvFilter {
    EnvFilter::try_from_env("LOG_LEVEL").unwrap_or_else(|_| EnvFilter::new("info"))
}
