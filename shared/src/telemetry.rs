//! Logging: JSON lines in Lambda (CloudWatch), compact text locally unless `LOG_FORMAT=json`.
//! Keys and secrets are never logged.

use tracing_subscriber::EnvFilter;

/// JSON log lines, and metric lines beside them ([`crate::metrics`]): what Lambda writes.
pub fn init_json() {
    crate::metrics::enable();
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter())
        .with_current_span(false)
        .with_ansi(false)
        .without_time() // CloudWatch stamps every line
        .try_init();
}

/// The local server's logs: JSON lines with `LOG_FORMAT=json` (as in Lambda), else text.
pub fn init_local() {
    if std::env::var("LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json")) {
        init_json();
    } else {
        init_text();
    }
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
