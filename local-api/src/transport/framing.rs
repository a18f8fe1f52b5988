//! Where each request head starts in a connection's bytes, and the checks on a head before
//! hyper parses it (the module above, and docs/request-pipeline.md, "Limits of the transport").

use std::mem::MaybeUninit;

use hosting_domain::error::ApiError;

use super::{MAX_HEAD_BYTES, MAX_HEADER_FIELDS, MAX_REQUEST_LINE_BYTES};

/// Where the connection's byte stream stands: at a request head, or inside a body whose end
/// is known from its framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    Head,
    /// This many bytes of a `Content-Length` body are still to come.
    Fixed(u64),
    Chunked(Chunk),
}

/// Where a chunked body stands, byte by byte, with exactly the grammar hyper's decoder accepts
/// (hyper's `proto/h1/decode.rs`): what it would refuse mid-body, the guard refuses first, so
/// the connection ends with an answer rather than a body error and silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chunk {
    /// A chunk-size line: `size` from its `digits` hex digits so far, in `part` of the line,
    /// `line` bytes into it.
    Size {
        size: u64,
        digits: usize,
        part: SizePart,
        line: usize,
    },
    Data(u64),
    /// The CR, then the LF, that end a chunk's data.
    DataCr,
    DataLf,
    /// The trailer section after the last chunk: `bytes` and field `lines` of it so far,
    /// whether the line being read is still empty, and whether its last byte was a CR.
    Trailer {
        bytes: usize,
        lines: usize,
        empty_line: bool,
        cr: bool,
    },
}

/// The parts of a chunk-size line: `1A`, optional spaces or tabs, `;` and an extension, CR LF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SizePart {
    Digits,
    Spaces,
    Extension,
    Lf,
}

const CHUNK_SIZE_LINE_MAX: usize = 4096;
/// Hyper's limit on a body's trailer section (`TRAILER_LIMIT`), its fields counted against
/// the connection's [`MAX_HEADER_FIELDS`].
const TRAILER_BYTES_MAX: usize = 16 * 1024;
const TRAILER_START: Chunk = Chunk::Trailer {
    bytes: 0,
    lines: 0,
    empty_line: true,
    cr: false,
};
const CHUNK_SIZE_START: Chunk = Chunk::Size {
    size: 0,
    digits: 0,
    part: SizePart::Digits,
    line: 0,
};

impl Framing {
    /// Examines `bytes` (received, not yet accepted): how many of them hyper may read, and the
    /// refusal of the next head when it is refused. Bytes of a head not yet complete are held.
    pub(super) fn advance(&mut self, bytes: &[u8]) -> (usize, Option<ApiError>) {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match self {
                Framing::Head => match check_head(rest) {
                    Ok(None) => break,
                    Ok(Some((length, next))) => {
                        at += length;
                        *self = next;
                    }
                    Err(refusal) => return (at, Some(refusal)),
                },
                Framing::Fixed(left) => {
                    let take = (*left).min(rest.len() as u64);
                    at += take as usize;
                    *left -= take;
                    if *left == 0 {
                        *self = Framing::Head;
                    }
                }
                Framing::Chunked(Chunk::Data(left)) => {
                    let take = (*left).min(rest.len() as u64);
                    at += take as usize;
                    *left -= take;
                    if *left == 0 {
                        *self = Framing::Chunked(Chunk::DataCr);
                    }
                }
                // A chunk the guard cannot follow is refused, never passed on unchecked: every
                // request of a connection is checked, whatever came before it.
                Framing::Chunked(chunk) => {
                    *self = match chunk.step(rest[0]) {
                        Some(ChunkStep::Continue(next)) => Framing::Chunked(next),
                        Some(ChunkStep::BodyEnded) => Framing::Head,
                        None => {
                            return (
                                at,
                                Some(ApiError::MalformedRequest("the chunked body is malformed")),
                            );
                        }
                    };
                    at += 1;
                }
            }
        }
        (at, None)
    }
}

enum ChunkStep {
    Continue(Chunk),
    BodyEnded,
}

impl Chunk {
    /// One byte of a chunk-size line, a chunk's closing line end, or the trailer section;
    /// `None` for framing hyper would refuse, or a line longer than the guard follows.
    fn step(self, byte: u8) -> Option<ChunkStep> {
        use ChunkStep::{BodyEnded, Continue};
        match self {
            Chunk::Size {
                size,
                digits,
                part,
                line,
            } => {
                if line >= CHUNK_SIZE_LINE_MAX {
                    return None;
                }
                let next = |size, digits, part| {
                    Some(Continue(Chunk::Size {
                        size,
                        digits,
                        part,
                        line: line + 1,
                    }))
                };
                match (part, byte) {
                    (SizePart::Lf, b'\n') if size == 0 => Some(Continue(TRAILER_START)),
                    (SizePart::Lf, b'\n') => Some(Continue(Chunk::Data(size))),
                    (SizePart::Lf, _) => None,
                    (SizePart::Digits, _) if digits == 0 => {
                        let digit = (byte as char).to_digit(16)?;
                        next(u64::from(digit), 1, SizePart::Digits)
                    }
                    (SizePart::Digits, b' ' | b'\t') | (SizePart::Spaces, b' ' | b'\t') => {
                        next(size, digits, SizePart::Spaces)
                    }
                    (SizePart::Digits | SizePart::Spaces | SizePart::Extension, b'\r') => {
                        next(size, digits, SizePart::Lf)
                    }
                    (SizePart::Digits | SizePart::Spaces, b';') => {
                        next(size, digits, SizePart::Extension)
                    }
                    (SizePart::Extension, b'\n') => None,
                    (SizePart::Extension, _) => next(size, digits, SizePart::Extension),
                    (SizePart::Digits, _) => {
                        let digit = (byte as char).to_digit(16)?;
                        let size = size.checked_mul(16)?.checked_add(u64::from(digit))?;
                        next(size, digits + 1, SizePart::Digits)
                    }
                    (SizePart::Spaces, _) => None,
                }
            }
            Chunk::Data(_) => unreachable!("data is taken in bulk"),
            Chunk::DataCr => (byte == b'\r').then_some(Continue(Chunk::DataLf)),
            Chunk::DataLf => (byte == b'\n').then_some(Continue(CHUNK_SIZE_START)),
            Chunk::Trailer {
                bytes,
                lines,
                empty_line,
                cr,
            } => {
                let bytes = bytes + 1;
                if bytes >= TRAILER_BYTES_MAX {
                    return None;
                }
                match (cr, byte) {
                    (true, b'\n') if empty_line => Some(BodyEnded),
                    (true, b'\n') if lines + 1 >= MAX_HEADER_FIELDS => None,
                    (true, b'\n') => Some(Continue(Chunk::Trailer {
                        bytes,
                        lines: lines + 1,
                        empty_line: true,
                        cr: false,
                    })),
                    (true, _) => None,
                    (false, b'\r') => Some(Continue(Chunk::Trailer {
                        bytes,
                        lines,
                        empty_line,
                        cr: true,
                    })),
                    (false, _) => Some(Continue(Chunk::Trailer {
                        bytes,
                        lines,
                        empty_line: false,
                        cr: false,
                    })),
                }
            }
        }
    }
}

/// Checks the request head at the start of `bytes`: `None` while it is incomplete (and within
/// the limits), else its length and the framing of the body that follows, or its refusal.
fn check_head(bytes: &[u8]) -> Result<Option<(usize, Framing)>, ApiError> {
    // The request line is checked first, so a huge URL is refused as soon as its first
    // 16 KiB arrived, not after the whole of it. Empty lines before it are allowed.
    let start = bytes
        .iter()
        .position(|b| *b != b'\r' && *b != b'\n')
        .unwrap_or(bytes.len());
    match memchr::memchr(b'\n', &bytes[start..]) {
        Some(end) if end > MAX_REQUEST_LINE_BYTES => {
            return Err(ApiError::RequestLineTooLong(MAX_REQUEST_LINE_BYTES));
        }
        None if bytes.len() - start > MAX_REQUEST_LINE_BYTES => {
            return Err(ApiError::RequestLineTooLong(MAX_REQUEST_LINE_BYTES));
        }
        _ => {}
    }

    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADER_FIELDS];
    let mut request = httparse::Request::new(&mut []);
    let length = match httparse::ParserConfig::default().parse_request_with_uninit_headers(
        &mut request,
        bytes,
        &mut fields,
    ) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if bytes.len() > MAX_HEAD_BYTES => {
            return Err(head_too_large());
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ApiError::HeaderFieldsTooLarge(format!(
                "The request has more than {MAX_HEADER_FIELDS} header fields."
            )));
        }
        Err(err) => return Err(malformed(err)),
    };
    if length > MAX_HEAD_BYTES {
        return Err(head_too_large());
    }
    let target = request.path.unwrap_or_default();
    if !plainly_valid_target(target) && axum::http::Uri::try_from(target).is_err() {
        return Err(ApiError::MalformedRequest(
            "the request target is not a valid URI",
        ));
    }
    // A `CONNECT` is framed like any request: the router answers it `404`, hyper then reads
    // the connection as HTTP again, and so does the guard.
    Ok(Some((length, body_framing(&request)?)))
}

/// A request target that the URI parser hyper uses accepts without asking it: a path (with
/// any query) of letters, digits and `-._~!$&'()*+,;=:@/%?` only, as every API request's is.
/// Parsing it a second time would copy it for every request; anything else is parsed.
fn plainly_valid_target(target: &str) -> bool {
    target.starts_with('/')
        && target
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%?".contains(&byte))
}

/// The framing of the body after `request`'s head, as RFC 9112 section 6.3 and hyper read it.
fn body_framing(request: &httparse::Request<'_, '_>) -> Result<Framing, ApiError> {
    let mut chunked = None;
    let mut content_length: Option<u64> = None;
    for field in request.headers.iter() {
        if field.name.eq_ignore_ascii_case("transfer-encoding") {
            if request.version != Some(1) {
                return Err(ApiError::MalformedRequest(
                    "HTTP/1.0 cannot have Transfer-Encoding",
                ));
            }
            let last = field
                .value
                .rsplit(|b| *b == b',')
                .next()
                .unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if field.name.eq_ignore_ascii_case("content-length") {
            // One number per field, as hyper reads it: a list (`5, 5`) is refused here, where
            // the refusal is the envelope. Repeated fields must agree.
            let value = field.value.trim_ascii();
            let parsed = (!value.is_empty() && value.iter().all(u8::is_ascii_digit))
                .then(|| std::str::from_utf8(value).ok()?.parse::<u64>().ok())
                .flatten()
                .ok_or(ApiError::MalformedRequest("Content-Length is not a number"))?;
            match content_length {
                Some(earlier) if earlier != parsed => {
                    return Err(ApiError::MalformedRequest(
                        "Content-Length has more than one value",
                    ));
                }
                _ => content_length = Some(parsed),
            }
        }
    }
    Ok(match (chunked, content_length) {
        (Some(true), _) => Framing::Chunked(CHUNK_SIZE_START),
        (Some(false), _) => {
            return Err(ApiError::MalformedRequest(
                "Transfer-Encoding must end with chunked",
            ));
        }
        (None, Some(0) | None) => Framing::Head,
        (None, Some(length)) => Framing::Fixed(length),
    })
}

fn head_too_large() -> ApiError {
    ApiError::HeaderFieldsTooLarge(format!(
        "The request's header fields exceed {} KiB.",
        MAX_HEAD_BYTES / 1024
    ))
}

fn malformed(err: httparse::Error) -> ApiError {
    ApiError::MalformedRequest(match err {
        httparse::Error::HeaderName => "a header field name is invalid",
        httparse::Error::HeaderValue => "a header field value is invalid",
        httparse::Error::NewLine => "a line ends wrongly",
        httparse::Error::Version => "the HTTP version is missing or not 1.x",
        _ => "the request line is invalid",
    })
}

#[cfg(test)]
mod tests;
