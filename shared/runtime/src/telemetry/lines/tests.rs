//! [`Lines`] against the `tracing-subscriber` formatters it stands in for: the same events
//! through both give the same bytes, and the events it hands on are exactly the ones it must.

use std::io;
use std::sync::{Arc, Mutex};

use chrono::DateTime;
use tracing::{Level, debug, error, info, info_span, trace, warn};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, JsonFields, Writer};
use tracing_subscriber::registry::LookupSpan;

use super::{Lines, Shape};

/// Every kind of field and message the API's events use, and the ones [`Lines`] hands on.
/// Each event's line is one line of output.
fn log_everything() {
    info!(
        method = %"GET",
        route = %"/api/v1/streams/{id}",
        status = 200u16,
        latency_ms = 0.012,
        request_id = %"fae77253-9bba-416d-8bde-40626e0389d6",
        brand_id = %"brand_1",
        "request"
    );
    warn!(error = %"boom \"quoted\"", attempt = 3, "retrying");
    info!(note = "tab\there \"q\" back\\ nl\n é ☃ 'single'", "escapes");
    info!(
        ctl = "a\u{1}b\u{1f}c\x7f\u{85}",
        plain = "",
        "control characters in a field"
    );
    info!(list = ?vec![1, 2], opt = ?Some("x"), "debug values");
    info!(
        flag = true,
        off = false,
        negative = -5i64,
        big = u64::MAX,
        nan = f64::NAN,
        inf = f64::INFINITY,
        one = 1.0,
        tiny = 1e-7,
        huge = 1e21,
        third = 1.0 / 3.0,
        "numbers"
    );
    info!(
        wide = 170_141_183_460_469_231_731_687_303_715_884_105_727i128,
        "wide"
    );
    info!("started on {} with {} workers", "127.0.0.1:3000", 2);
    info!(only = 1);
    info!(r#type = "raw", "a raw field name");
    info!(target: "custom::target", "another target");
    trace!("trace");
    debug!(quoted = "\"", "debug");
    error!("error");
    // The last four are handed on in text, where the general format escapes or expands
    // them; plain in JSON.
    info!("bell \x07 in a message");
    info!("C1 \u{85} in a message");
    let err = io::Error::other("disk full");
    error!(
        error = &err as &(dyn std::error::Error + 'static),
        "an error value"
    );
    // The last one is handed on in both: inside a span.
    let span = info_span!("outer", id = 7);
    let _entered = span.enter();
    info!(inside = true, "in a span");
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// Stands in for the general formatter: marks the events [`Lines`] hands on.
struct HandedOn;

impl<S, N> FormatEvent<S, N> for HandedOn
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        _: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        writeln!(writer, "HANDED ON")
    }
}

/// The lines of [`log_everything`] through `format`, with `fields` formatting a span's fields
/// (the JSON format needs its own).
fn logged_with<N, E>(fields: N, format: E) -> Vec<String>
where
    N: for<'a> FormatFields<'a> + Send + Sync + 'static,
    E: FormatEvent<tracing_subscriber::Registry, N> + Send + Sync + 'static,
{
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(Level::TRACE)
        .with_ansi(false)
        .fmt_fields(fields)
        .event_format(format)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, log_everything);
    captured.lines()
}

fn logged<E>(format: E) -> Vec<String>
where
    E: FormatEvent<tracing_subscriber::Registry, format::DefaultFields> + Send + Sync + 'static,
{
    logged_with(format::DefaultFields::new(), format)
}

fn logged_json<E>(format: E) -> Vec<String>
where
    E: FormatEvent<tracing_subscriber::Registry, JsonFields> + Send + Sync + 'static,
{
    logged_with(JsonFields::new(), format)
}

fn compact() -> format::Format<format::Compact> {
    format::format().compact()
}

fn json() -> format::Format<format::Json, ()> {
    format::format()
        .json()
        .with_current_span(false)
        .without_time()
}

/// The compact format's timestamp and the rest of its line.
fn split_time(line: &str) -> (&str, &str) {
    line.split_at(27)
}

#[test]
fn text_lines_are_the_compact_formats_bytes() {
    let general = logged(compact());
    let lean = logged(Lines {
        shape: Shape::CompactText,
        general: compact(),
    });
    assert_eq!(general.len(), lean.len(), "{general:#?}\n{lean:#?}");
    for (general, lean) in general.iter().zip(&lean) {
        let (general_time, general_rest) = split_time(general);
        let (lean_time, lean_rest) = split_time(lean);
        assert_eq!(lean_rest, general_rest);
        // Both read the clock: the same format, a moment apart.
        let general_time = DateTime::parse_from_rfc3339(general_time).unwrap();
        let lean_time = DateTime::parse_from_rfc3339(lean_time).unwrap();
        assert!((general_time - lean_time).num_seconds().abs() < 5);
        assert_eq!(lean.as_bytes()[26], b'Z');
    }
}

#[test]
fn text_lines_hand_on_spans_errors_and_terminal_controls_only() {
    let lean = logged(Lines {
        shape: Shape::CompactText,
        general: HandedOn,
    });
    assert_eq!(handed_on(&lean), last_handed_on(lean.len(), 4), "{lean:#?}");
}

#[test]
fn json_lines_are_the_json_formats_bytes() {
    let general = logged_json(json());
    let lean = logged_json(Lines {
        shape: Shape::JsonWithoutTime,
        general: json(),
    });
    assert_eq!(lean, general);
    // And they are JSON.
    for line in &lean {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

#[test]
fn json_lines_hand_on_events_in_a_span_only() {
    let lean = logged_json(Lines {
        shape: Shape::JsonWithoutTime,
        general: HandedOn,
    });
    assert_eq!(handed_on(&lean), last_handed_on(lean.len(), 1), "{lean:#?}");
}

/// Which lines the general formatter wrote.
fn handed_on(lines: &[String]) -> Vec<bool> {
    lines.iter().map(|line| line == "HANDED ON").collect()
}

/// `count` lines, of which the last `handed_on` are the general formatter's: the events
/// [`log_everything`] logs last.
fn last_handed_on(count: usize, handed_on: usize) -> Vec<bool> {
    (0..count).map(|at| at + handed_on >= count).collect()
}
