//! Logging: JSON lines in Lambda (CloudWatch), compact text locally unless `LOG_FORMAT=json`.
//! Keys and secrets are never logged.

mod lines;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::{self, JsonFields};

use lines::{Lines, Shape};

/// JSON log lines on stdout, and metric lines beside them ([`hosting_app::metrics`]): what Lambda
/// writes. Each line is written as it is logged: Lambda may freeze the process as soon as
/// the invocation is answered.
pub fn init_json() {
    init_json_to(std::io::stdout);
}

fn init_json_to<W: for<'w> MakeWriter<'w> + Send + Sync + 'static>(writer: W) {
    hosting_app::metrics::enable();
    let general = format::format()
        .json()
        .with_current_span(false)
        .without_time(); // CloudWatch stamps every line
    let _ = tracing_subscriber::fmt()
        .with_ansi(false)
        .fmt_fields(JsonFields::new())
        .event_format(Lines {
            shape: Shape::JsonWithoutTime,
            general,
        })
        .with_env_filter(filter())
        .with_writer(writer)
        .try_init();
}

/// The local server's logs, to `writer`: JSON lines with `LOG_FORMAT=json` (as in Lambda),
/// else compact text, with colours only on a terminal so that a log written to a file stays
/// plain.
pub fn init_local<W: for<'w> MakeWriter<'w> + Send + Sync + 'static>(writer: W) {
    if std::env::var("LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json")) {
        init_json_to(writer);
    } else {
        let _ = tracing_subscriber::fmt()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
            .event_format(Lines {
                shape: Shape::CompactText,
                general: format::format().compact(),
            })
            .with_env_filter(filter())
            .with_writer(writer)
            .try_init();
    }
}

fn filter() -> EnvFilter {
    EnvFilter::try_from_env("LOG_LEVEL").unwrap_or_else(|_| EnvFilter::new("info"))
}
