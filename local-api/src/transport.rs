//! The local server's HTTP/1.1 transport: hyper, with the API's own limits on a request's
//! head checked before hyper parses it, so that every answer, a refusal of the transport
//! included, is the error envelope (docs/request-pipeline.md, "Limits of the transport").
//!
//! Each connection's bytes pass through a [`Guarded`] reader that finds where every request
//! head starts (following `Content-Length` and chunked bodies) and checks it: a request line
//! over [`MAX_REQUEST_LINE_BYTES`] is `414`, a head over [`MAX_HEAD_BYTES`] or with more than
//! [`MAX_HEADER_FIELDS`] fields `431`, anything hyper would not parse `400`. Hyper only ever
//! sees heads it accepts, so its own bare refusals never happen.

use std::future::poll_fn;
use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{CONNECTION, CONTENT_TYPE};
use axum::http::{HeaderValue, Response};
use bytes::{Buf, Bytes, BytesMut};
use hosting_domain::error::ApiError;
use hosting_http::REQUEST_ID_HEADER;
use hosting_http::body::MAX_BODY_BYTES;
use http_body::{Body as _, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

use crate::ApiService;

/// The longest request line (method, target with its query, version): no URL of the API
/// comes near it.
pub const MAX_REQUEST_LINE_BYTES: usize = 16 * 1024;
/// The largest request head (request line and every header field), well above the largest
/// `Authorization` header the API answers (`401`) rather than refuses.
pub const MAX_HEAD_BYTES: usize = 256 * 1024;
/// The most header fields in one request.
pub const MAX_HEADER_FIELDS: usize = 500;

/// How long the rest of a body left unread by its answer may take to arrive before the
/// connection is closed instead of kept.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// After a transport refusal: how long, and how many bytes, the server reads and drops what the
/// client is still sending, so that closing does not reset the connection before the client
/// read the answer.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 4 * 1024 * 1024;
const READ_CHUNK: usize = 16 * 1024;

/// Serves `service` on `listener` until `shutdown` resolves, then lets every open connection
/// finish the request it is answering.
pub async fn serve(
    listener: TcpListener,
    service: ApiService,
    shutdown: impl std::future::Future<Output = ()>,
) -> io::Result<()> {
    let (stop, stopping) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    Err(err) => {
                        tracing::warn!(error = %err, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                connections.spawn(serve_connection(stream, service.clone(), stopping.clone()));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn serve_connection(
    stream: TcpStream,
    service: ApiService,
    mut stopping: watch::Receiver<bool>,
) {
    let handler = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        // Boxed: hyper polls the connection by `&mut`, which needs an `Unpin` future.
        Box::pin(answer_and_drain(service.clone(), request))
    });
    let mut connection = hyper::server::conn::http1::Builder::new()
        .max_headers(MAX_HEADER_FIELDS)
        // After a refused head hyper reads the end of the stream: it still answers the
        // requests before it.
        .half_close(true)
        // Room for a full head and what follows it; the guard refuses larger heads first.
        .max_buf_size(MAX_HEAD_BYTES + 64 * 1024)
        .serve_connection(TokioIo::new(Guarded::new(stream)), handler);
    let mut stop_requested = std::pin::pin!(stopping.wait_for(|stop| *stop));
    let mut graceful = false;
    let served = poll_fn(|cx| {
        if !graceful && stop_requested.as_mut().poll(cx).is_ready() {
            graceful = true;
            Pin::new(&mut connection).graceful_shutdown();
        }
        connection.poll_without_shutdown(cx)
    })
    .await;
    if let Err(err) = served {
        tracing::debug!(error = %err, "connection ended with an error");
    }
    connection.into_parts().io.into_inner().finish().await;
}

// ---- Bodies: read to their end after an early answer, so the connection stays usable ----

/// Answers `request`. When the answer came before the body was read to its end (a refusal
/// before the body, say), the rest is read and dropped after the answer, up to the 1 MiB the
/// API accepts, so the client can send its next request on the same connection; hyper keeps
/// reading a body while someone holds it. A body declared larger than that gets
/// `Connection: close` instead.
async fn answer_and_drain(
    service: ApiService,
    request: hyper::Request<Incoming>,
) -> Result<Response<Body>, std::convert::Infallible> {
    let (parts, incoming) = request.into_parts();
    // Most requests have no body: nothing to track, and an empty body costs no allocation.
    if incoming.is_end_stream() {
        let request = Request::from_parts(parts, Body::empty());
        let Ok(response) = service.oneshot(request).await;
        return Ok(response);
    }
    let tracked = TrackedBody::new(incoming);
    let request = Request::from_parts(parts, Body::new(tracked.clone()));
    let Ok(mut response) = service.oneshot(request).await;
    match tracked.rest() {
        Rest::None => {}
        Rest::OverLimit => {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        Rest::Within => {
            tokio::spawn(async move { tracked.drain().await });
        }
    }
    Ok(response)
}

enum Rest {
    None,
    Within,
    OverLimit,
}

/// A request body whose unread rest can be taken back after the handler answered.
#[derive(Clone)]
struct TrackedBody(Arc<Mutex<BodyState>>);

struct BodyState {
    body: Incoming,
    read: usize,
    ended: bool,
}

impl TrackedBody {
    fn new(body: Incoming) -> Self {
        let ended = body.is_end_stream();
        Self(Arc::new(Mutex::new(BodyState {
            body,
            read: 0,
            ended,
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BodyState> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What is left of the body once the handler answered.
    fn rest(&self) -> Rest {
        let state = self.lock();
        let declared = state.body.size_hint().lower() as usize;
        if state.ended {
            Rest::None
        } else if state.read.saturating_add(declared) > MAX_BODY_BYTES {
            Rest::OverLimit
        } else {
            Rest::Within
        }
    }

    /// Reads and drops the rest of the body, up to the API's limit and for at most
    /// [`DRAIN_TIMEOUT`]; past either, dropping it makes hyper close the connection.
    async fn drain(self) {
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
            while let Some(Ok(_)) = poll_fn(|cx| self.poll_next(cx)).await {
                if self.lock().read > MAX_BODY_BYTES {
                    break;
                }
            }
        })
        .await;
    }

    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let mut state = self.lock();
        if state.ended {
            return Poll::Ready(None);
        }
        let frame = ready!(Pin::new(&mut state.body).poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    state.read += data.len();
                }
                state.ended = state.body.is_end_stream();
            }
            None => state.ended = true,
            Some(Err(_)) => {}
        }
        Poll::Ready(frame)
    }
}

impl http_body::Body for TrackedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        self.get_mut().poll_next(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.lock().ended
    }

    fn size_hint(&self) -> SizeHint {
        let state = self.lock();
        if state.ended {
            SizeHint::with_exact(0)
        } else {
            state.body.size_hint()
        }
    }
}

// ---- Heads: checked before hyper reads them ----

/// A connection whose request heads are checked before hyper reads them. Bytes are held back
/// until the head they belong to is complete and accepted; after a refusal hyper reads the end
/// of the stream, and [`Guarded::finish`] answers the refusal.
pub struct Guarded<S> {
    stream: S,
    /// Received and not yet read by hyper; its first `approved` bytes hyper may read.
    received: BytesMut,
    approved: usize,
    framing: Framing,
    refusal: Option<ApiError>,
    eof: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Guarded<S> {
    pub fn new(stream: S) -> Self {
        Self {
            stream,
            received: BytesMut::with_capacity(READ_CHUNK),
            approved: 0,
            framing: Framing::Head,
            refusal: None,
            eof: false,
        }
    }

    /// After hyper is done: answers the refusal, if there is one, and closes the connection.
    pub async fn finish(mut self) {
        if let Some(refusal) = self.refusal.take() {
            let request_id = uuid::Uuid::new_v4().to_string();
            tracing::info!(
                method = "-",
                route = "(transport)",
                status = refusal.status().as_u16(),
                latency_ms = 0.0,
                request_id = request_id.as_str(),
                brand_id = "",
                "request"
            );
            let answer = refusal_bytes(&refusal, &request_id);
            let written = tokio::time::timeout(LINGER, self.stream.write_all(&answer)).await;
            let _ = self.stream.shutdown().await;
            if matches!(written, Ok(Ok(()))) {
                self.linger().await;
            }
            return;
        }
        let _ = self.stream.shutdown().await;
    }

    /// Reads and drops what the client still sends: closing with unread bytes would reset the
    /// connection, and a client still sending its request might lose the answer.
    async fn linger(&mut self) {
        let deadline = Instant::now() + LINGER;
        let mut scratch = vec![0u8; READ_CHUNK];
        let mut dropped = 0;
        while dropped < LINGER_BYTES {
            match tokio::time::timeout_at(deadline.into(), self.stream.read(&mut scratch)).await {
                Ok(Ok(n)) if n > 0 => dropped += n,
                _ => break,
            }
        }
    }
}

impl<S> Guarded<S> {
    fn examine(&mut self) {
        let (accepted, refusal) = self.framing.advance(&self.received[self.approved..]);
        self.approved += accepted;
        self.refusal = refusal;
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.approved > 0 {
                let n = this.approved.min(out.remaining());
                out.put_slice(&this.received[..n]);
                this.received.advance(n);
                this.approved -= n;
                return Poll::Ready(Ok(()));
            }
            if this.refusal.is_some() || this.eof {
                return Poll::Ready(Ok(()));
            }
            this.received.reserve(READ_CHUNK);
            let n = ready!(tokio_util::io::poll_read_buf(
                Pin::new(&mut this.stream),
                cx,
                &mut this.received
            ))?;
            if n == 0 {
                // The client closed mid-head: hyper gets what came, and reports the
                // incomplete request to no one.
                this.eof = true;
                this.approved = this.received.len();
                continue;
            }
            if let Framing::Passthrough = this.framing {
                this.approved = this.received.len();
            } else {
                this.examine();
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// The refusal as the bytes of an HTTP/1.1 response: the envelope, its type, a request id,
/// and `Connection: close` (what the client sent after the refused head is not read).
fn refusal_bytes(refusal: &ApiError, request_id: &str) -> Vec<u8> {
    let body = refusal.body();
    let status = refusal.status();
    let content_type = HeaderValue::from_static("application/json");
    format!(
        "HTTP/1.1 {} {}\r\n{}: {}\r\n{}: {}\r\ncontent-length: {}\r\n{}: close\r\n\r\n{}",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        CONTENT_TYPE,
        content_type.to_str().unwrap_or_default(),
        REQUEST_ID_HEADER,
        request_id,
        body.len(),
        CONNECTION,
        body
    )
    .into_bytes()
}

/// Where the connection's byte stream stands: at a request head, or inside a body whose end
/// is known from its framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Head,
    /// This many bytes of a `Content-Length` body are still to come.
    Fixed(u64),
    Chunked(Chunk),
    /// Framing the guard does not follow (a malformed chunk, a `CONNECT`): hyper decides, and
    /// the guard checks nothing more on this connection.
    Passthrough,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size {
        size: u64,
        digits: usize,
        in_extension: bool,
        line: usize,
    },
    Data(u64),
    DataEnd,
    Trailer {
        line: usize,
    },
}

const CHUNK_SIZE_LINE_MAX: usize = 4096;
const CHUNK_SIZE_START: Chunk = Chunk::Size {
    size: 0,
    digits: 0,
    in_extension: false,
    line: 0,
};

impl Framing {
    /// Examines `bytes` (received, not yet accepted): how many of them hyper may read, and the
    /// refusal of the next head when it is refused. Bytes of a head not yet complete are held.
    fn advance(&mut self, bytes: &[u8]) -> (usize, Option<ApiError>) {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match self {
                Framing::Passthrough => return (bytes.len(), None),
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
                        *self = Framing::Chunked(Chunk::DataEnd);
                    }
                }
                Framing::Chunked(chunk) => {
                    *self = match chunk.step(rest[0]) {
                        Some(ChunkStep::Continue(next)) => Framing::Chunked(next),
                        Some(ChunkStep::BodyEnded) => Framing::Head,
                        None => Framing::Passthrough,
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
    /// `None` for framing hyper will refuse (or that the guard does not follow).
    fn step(self, byte: u8) -> Option<ChunkStep> {
        use ChunkStep::{BodyEnded, Continue};
        match self {
            Chunk::Size {
                size,
                digits,
                in_extension,
                line,
            } => {
                if line > CHUNK_SIZE_LINE_MAX {
                    return None;
                }
                match byte {
                    b'\n' if digits == 0 => None,
                    b'\n' if size == 0 => Some(Continue(Chunk::Trailer { line: 0 })),
                    b'\n' => Some(Continue(Chunk::Data(size))),
                    b'\r' => Some(Continue(self)),
                    _ if in_extension => Some(Continue(Chunk::Size {
                        size,
                        digits,
                        in_extension,
                        line: line + 1,
                    })),
                    b';' | b' ' | b'\t' => Some(Continue(Chunk::Size {
                        size,
                        digits,
                        in_extension: true,
                        line: line + 1,
                    })),
                    _ => {
                        let digit = (byte as char).to_digit(16)?;
                        let size = size.checked_mul(16)?.checked_add(u64::from(digit))?;
                        Some(Continue(Chunk::Size {
                            size,
                            digits: digits + 1,
                            in_extension,
                            line: line + 1,
                        }))
                    }
                }
            }
            Chunk::Data(_) => unreachable!("data is taken in bulk"),
            Chunk::DataEnd => match byte {
                b'\r' => Some(Continue(Chunk::DataEnd)),
                b'\n' => Some(Continue(CHUNK_SIZE_START)),
                _ => None,
            },
            Chunk::Trailer { line } => match byte {
                b'\n' if line == 0 => Some(BodyEnded),
                b'\n' => Some(Continue(Chunk::Trailer { line: 0 })),
                b'\r' => Some(Continue(Chunk::Trailer { line })),
                _ if line > MAX_HEAD_BYTES => None,
                _ => Some(Continue(Chunk::Trailer { line: line + 1 })),
            },
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
    if request.method == Some("CONNECT") {
        return Ok(Some((length, Framing::Passthrough)));
    }
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
            for value in field.value.split(|b| *b == b',') {
                let value = value.trim_ascii();
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
mod tests {
    use super::*;

    #[test]
    fn a_plainly_valid_target_is_one_the_uri_parser_accepts() {
        for byte in 0..=u8::MAX {
            let text = [b'/', b'a', byte, b'?', b'q', b'=', byte];
            let Ok(target) = std::str::from_utf8(&text) else {
                continue;
            };
            if plainly_valid_target(target) {
                assert!(
                    axum::http::Uri::try_from(target).is_ok(),
                    "{byte:#04x} is taken as plain but the parser refuses {target:?}"
                );
            }
        }
        assert!(plainly_valid_target(
            "/api/v1/streams?limit=20&cursor=eyJ0%3D&status=live"
        ));
        for needs_parsing in ["*", "http://x/", "/a b", "/a#f", "/\"?'", "/\u{e9}", ""] {
            assert!(!plainly_valid_target(needs_parsing), "{needs_parsing:?}");
        }
    }

    #[test]
    fn a_head_is_held_until_complete_then_its_body_is_followed() {
        let mut framing = Framing::Head;
        let head = b"POST /api/v1/streams HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(framing.advance(&head[..20]).0, 0);
        let mut message = head.to_vec();
        message.extend_from_slice(b"hello");
        message.extend_from_slice(b"GET / HTTP/1.1\r\n");
        let (accepted, refusal) = framing.advance(&message);
        assert!(refusal.is_none());
        assert_eq!(accepted, head.len() + 5);
        assert_eq!(framing, Framing::Head);
    }

    #[test]
    fn chunked_bodies_are_followed_to_the_next_head() {
        let mut framing = Framing::Head;
        let message = b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n\
            GET /y HTTP/1.1\r\n\r\n";
        // Byte by byte, as slowly as a client may send it.
        let mut accepted = 0;
        for end in 1..=message.len() {
            let (n, refusal) = framing.advance(&message[accepted..end]);
            assert!(refusal.is_none());
            accepted += n;
        }
        assert_eq!(accepted, message.len());
        assert_eq!(framing, Framing::Head);
    }

    #[test]
    fn refusals_name_their_limit() {
        let long_line = format!(
            "GET /?q={} HTTP/1.1\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE_BYTES)
        );
        let refusal = Framing::Head.advance(long_line.as_bytes()).1.unwrap();
        assert_eq!(refusal.status().as_u16(), 414);
        // Refused before the line ends.
        let refusal = Framing::Head
            .advance(&long_line.as_bytes()[..MAX_REQUEST_LINE_BYTES + 1])
            .1
            .unwrap();
        assert_eq!(refusal.status().as_u16(), 414);

        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X-A: b\r\n".repeat(MAX_HEADER_FIELDS + 1)
        );
        assert_eq!(
            Framing::Head
                .advance(many.as_bytes())
                .1
                .unwrap()
                .status()
                .as_u16(),
            431
        );
        let allowed = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X-A: b\r\n".repeat(MAX_HEADER_FIELDS)
        );
        assert!(Framing::Head.advance(allowed.as_bytes()).1.is_none());

        let big = format!("GET / HTTP/1.1\r\nX-A: {}", "b".repeat(MAX_HEAD_BYTES));
        assert_eq!(
            Framing::Head
                .advance(big.as_bytes())
                .1
                .unwrap()
                .status()
                .as_u16(),
            431
        );

        for garbage in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        ] {
            let refusal = Framing::Head.advance(garbage).1;
            assert_eq!(
                refusal.map(|r| r.status().as_u16()),
                Some(400),
                "{}",
                String::from_utf8_lossy(garbage)
            );
        }
    }
}
