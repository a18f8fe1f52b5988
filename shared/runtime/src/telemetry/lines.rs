//! The two log line formats, written directly for the events the API logs.
//!
//! Every request logs one line, so the general formatters of `tracing-subscriber` cost every
//! request their generality (styles, padding, timestamps through `fmt`). [`Lines`] writes the
//! same bytes as they do — the compact text format without colours, and the JSON format
//! without timestamps — for events outside any span, whose fields print plainly. Any other
//! event (inside a span, a colour terminal, an error field, a message with a terminal control
//! character, a time outside the years 0 to 9999) is written by the general formatter itself.
//! The tests hold the two to the same bytes.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::registry::LookupSpan;

use hosting_domain::clock::{utc_seconds_text, write_digits};

/// Which of the two formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `tracing-subscriber`'s compact text, with its timestamp.
    CompactText,
    /// `tracing-subscriber`'s JSON, without a timestamp (CloudWatch stamps every line).
    JsonWithoutTime,
}

/// Formats events as [`Shape`] says, handing those it does not write to `general`, the
/// `tracing-subscriber` formatter of the same shape.
pub(crate) struct Lines<G> {
    pub(crate) shape: Shape,
    pub(crate) general: G,
}

thread_local! {
    /// Where a line is written before it is known to be one [`Lines`] writes itself.
    static LINE: RefCell<String> = const { RefCell::new(String::new()) };
}

impl<S, N, G> FormatEvent<S, N> for Lines<G>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    G: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // The general formats add a span's name and fields; colours are theirs alone.
        if ctx.event_scope().is_none() && !writer.has_ansi_escapes() {
            let written = LINE.try_with(|line| {
                // Taken already: a field's formatting logged an event of its own.
                let Ok(mut line) = line.try_borrow_mut() else {
                    return false;
                };
                line.clear();
                let plain = match self.shape {
                    Shape::CompactText => write_text(&mut line, event),
                    Shape::JsonWithoutTime => write_json(&mut line, event),
                };
                plain && writer.write_str(&line).is_ok()
            });
            if written == Ok(true) {
                return Ok(());
            }
        }
        self.general.format_event(ctx, writer, event)
    }
}

// ---- Compact text ----

fn level_text(level: &Level) -> &'static str {
    match *level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        _ => "ERROR",
    }
}

/// `2026-11-26T07:14:15.721096Z  INFO target: message field=value ...`, or `false` when the
/// line is the general formatter's to write.
fn write_text(line: &mut String, event: &Event<'_>) -> bool {
    let Some(now) = now_text() else {
        return false;
    };
    line.push_str(std::str::from_utf8(&now).unwrap_or_default());
    line.push(' ');
    line.push_str(level_text(event.metadata().level()));
    line.push(' ');
    line.push_str(event.metadata().target());
    line.push_str(": ");
    let mut fields = TextFields {
        line,
        first: true,
        plain: true,
    };
    event.record(&mut fields);
    let plain = fields.plain;
    line.push('\n');
    plain
}

/// The wall clock as the compact format writes it, to the microsecond.
fn now_text() -> Option<[u8; 27]> {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    let seconds = utc_seconds_text(i64::try_from(since_epoch.as_secs()).ok()?)?;
    let mut text = [0u8; 27];
    text[..19].copy_from_slice(&seconds);
    text[19] = b'.';
    write_digits(&mut text[20..26], since_epoch.subsec_micros());
    text[26] = b'Z';
    Some(text)
}

/// The fields as the compact format's visitor writes them: the message as it is, every other
/// field `name=value` with its `Debug` (a string quoted and escaped), separated by spaces.
struct TextFields<'a> {
    line: &'a mut String,
    first: bool,
    plain: bool,
}

impl TextFields<'_> {
    fn separate(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.line.push(' ');
        }
    }

    fn name(&mut self, field: &Field) {
        let name = field.name();
        self.line.push_str(name.strip_prefix("r#").unwrap_or(name));
        self.line.push('=');
    }

    /// The message, unless it holds a character the general format escapes for terminals.
    fn message(&mut self, write: impl FnOnce(&mut String) -> fmt::Result) {
        let start = self.line.len();
        if write(self.line).is_err() || self.line[start..].chars().any(is_terminal_control) {
            self.plain = false;
        }
    }
}

/// The characters `tracing-subscriber` escapes in a message so that a log cannot drive a
/// terminal.
fn is_terminal_control(c: char) -> bool {
    matches!(
        c,
        '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' | '\u{80}'..='\u{9f}'
    )
}

impl Visit for TextFields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.separate();
        if field.name() == "message" {
            self.message(|line| {
                line.push_str(value);
                Ok(())
            });
        } else {
            self.name(field);
            // What `{:?}` writes: quoted, and unchanged when nothing needs escaping.
            if value
                .bytes()
                .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
            {
                self.line.push('"');
                self.line.push_str(value);
                self.line.push('"');
            } else if write!(self.line, "{value:?}").is_err() {
                self.plain = false;
            }
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.separate();
        self.name(field);
        self.line.push_str(itoa::Buffer::new().format(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.separate();
        self.name(field);
        self.line.push_str(itoa::Buffer::new().format(value));
    }

    fn record_error(&mut self, _: &Field, _: &(dyn std::error::Error + 'static)) {
        // Written with its sources and escapes by the general format.
        self.plain = false;
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.separate();
        if field.name() == "message" {
            self.message(|line| write!(line, "{value:?}"));
        } else {
            self.name(field);
            if write!(self.line, "{value:?}").is_err() {
                self.plain = false;
            }
        }
    }
}

// ---- JSON ----

/// `{"level":"INFO","fields":{"message":"...",...},"target":"..."}`, as `tracing-subscriber`'s
/// JSON format writes it without a timestamp, or `false` when the line is the general
/// formatter's to write.
fn write_json(line: &mut String, event: &Event<'_>) -> bool {
    let metadata = event.metadata();
    line.push_str(r#"{"level":""#);
    line.push_str(level_text(metadata.level()).trim_start());
    line.push_str(r#"","fields":{"#);
    let mut fields = JsonFields {
        line,
        first: true,
        plain: true,
    };
    event.record(&mut fields);
    let plain = fields.plain;
    line.push_str(r#"},"target":"#);
    push_json_string(line, metadata.target());
    line.push_str("}\n");
    plain
}

/// The fields as `tracing-serde` writes them: numbers and booleans as JSON values, strings as
/// strings, and anything else as the string of its `Debug`.
struct JsonFields<'a> {
    line: &'a mut String,
    first: bool,
    plain: bool,
}

impl JsonFields<'_> {
    fn name(&mut self, field: &Field) {
        if !std::mem::take(&mut self.first) {
            self.line.push(',');
        }
        push_json_string(self.line, field.name());
        self.line.push(':');
    }
}

impl Visit for JsonFields<'_> {
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.name(field);
        self.line.push_str(if value { "true" } else { "false" });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.name(field);
        self.line.push_str(itoa::Buffer::new().format(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.name(field);
        self.line.push_str(itoa::Buffer::new().format(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.name(field);
        // As serde_json writes a float, `null` when not finite.
        match serde_json::Number::from_f64(value) {
            Some(number) => {
                let _ = write!(self.line, "{number}");
            }
            None => self.line.push_str("null"),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.name(field);
        push_json_string(self.line, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.name(field);
        self.line.push('"');
        if write!(JsonEscaped(self.line), "{value:?}").is_err() {
            self.plain = false;
        }
        self.line.push('"');
    }
}

fn push_json_string(line: &mut String, value: &str) {
    line.push('"');
    let _ = JsonEscaped(line).write_str(value);
    line.push('"');
}

/// Writes text escaped as serde_json escapes a string's contents.
struct JsonEscaped<'a>(&'a mut String);

impl fmt::Write for JsonEscaped<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut plain_from = 0;
        for (at, byte) in text.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\x08' => "\\b",
                b'\x0c' => "\\f",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.push_str(&text[plain_from..at]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.0.push_str("\\u00");
                self.0.push(char::from(HEX[usize::from(byte >> 4)]));
                self.0.push(char::from(HEX[usize::from(byte & 0xf)]));
            } else {
                self.0.push_str(escape);
            }
            plain_from = at + 1;
        }
        self.0.push_str(&text[plain_from..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
