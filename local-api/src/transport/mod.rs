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
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{CONNECTION, CONTENT_TYPE};
use axum::http::{HeaderValue, Response, StatusCode};
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
use hosting_support::config::TransportLimits;

mod framing;

use framing::Framing;

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
/// finish the request it is answering, for at most the limits' shutdown timeout. At most the
/// limits' `max_connections` are served at once: the next waits in the listen backlog until one
/// closes.
pub async fn serve(
    listener: TcpListener,
    service: ApiService,
    limits: TransportLimits,
    shutdown: impl std::future::Future<Output = ()>,
) -> io::Result<()> {
    let (stop, stopping) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut connections = tokio::task::JoinSet::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    loop {
        tokio::select! {
            (accepted, slot) = async {
                let slot = slots.clone().acquire_owned().await;
                (listener.accept().await, slot)
            } => {
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
                let connection = serve_connection(stream, service.clone(), limits, stopping.clone());
                connections.spawn(async move {
                    connection.await;
                    drop(slot);
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let finished = tokio::time::timeout(limits.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            connections = connections.len(),
            "closing the connections still open at the shutdown deadline"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    Ok(())
}

async fn serve_connection(
    stream: TcpStream,
    service: ApiService,
    limits: TransportLimits,
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
        .serve_connection(TokioIo::new(Guarded::new(stream, limits)), handler);
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
    limits: TransportLimits,
    /// What the connection is waiting for, and by when it must come: `due`. The timer is
    /// armed no later than `due` and moved on lazily when it fires early, so a busy
    /// connection's requests cost it no timer operation.
    waiting: Waiting,
    due: tokio::time::Instant,
    timer: Pin<Box<tokio::time::Sleep>>,
    armed_for: tokio::time::Instant,
}

/// What a connection waits for from its client, each with its own time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A next request, on a kept-alive connection.
    Idle,
    /// The rest of a request head.
    Head,
    /// The rest of a body.
    Body,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Guarded<S> {
    pub fn new(stream: S, limits: TransportLimits) -> Self {
        Self {
            stream,
            received: BytesMut::with_capacity(READ_CHUNK),
            approved: 0,
            framing: Framing::Head,
            refusal: None,
            eof: false,
            limits,
            waiting: Waiting::Idle,
            due: tokio::time::Instant::now() + limits.idle_timeout,
            timer: Box::pin(tokio::time::sleep(limits.idle_timeout)),
            armed_for: tokio::time::Instant::now() + limits.idle_timeout,
        }
    }

    /// After hyper is done: answers the refusal, if there is one, and closes the connection.
    pub async fn finish(mut self) {
        if let Some(refusal) = self.refusal.take() {
            let request_id = uuid::Uuid::new_v4().to_string();
            tracing::info!(
                method = "-",
                route = "(transport)",
                status = refusal.status(),
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

    /// Starts the clock of what the connection now waits for, after bytes arrived: a new
    /// phase starts its own; on an idle connection, every arrival starts it again.
    fn note_waiting(&mut self) {
        let waiting = match self.framing {
            Framing::Head if self.received.len() > self.approved => Waiting::Head,
            Framing::Head => Waiting::Idle,
            Framing::Fixed(_) | Framing::Chunked(_) => Waiting::Body,
        };
        if waiting == self.waiting && waiting != Waiting::Idle {
            return;
        }
        self.waiting = waiting;
        let limit = match (waiting, self.framing) {
            (Waiting::Idle, _) => self.limits.idle_timeout,
            (Waiting::Head, _) => self.limits.head_timeout,
            (Waiting::Body, Framing::Fixed(declared)) => self.limits.body_deadline(declared),
            // A chunked body declares nothing: it has as long as the largest accepted one.
            (Waiting::Body, _) => self.limits.body_deadline(MAX_BODY_BYTES as u64),
        };
        self.due = tokio::time::Instant::now() + limit;
        // Armed later than the new limit allows: brought forward. Armed earlier, it is moved
        // on when it fires.
        if self.armed_for > self.due {
            self.arm(self.due);
        }
    }

    fn arm(&mut self, at: tokio::time::Instant) {
        self.armed_for = at;
        self.timer.as_mut().reset(at);
    }

    /// Whether the connection's time ran out; registers for the timer when it has not.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            ready!(self.timer.as_mut().poll(cx));
            if tokio::time::Instant::now() >= self.due {
                return Poll::Ready(());
            }
            self.arm(self.due);
        }
    }

    /// The client took too long: hyper reads the end of the stream. A request cut off in its
    /// body gets its handler's answer to a body that could not be read; a partial head, or a
    /// connection with no request on it, is closed without an answer.
    fn time_out(&mut self) {
        let waiting = self.waiting;
        tracing::info!(waiting = ?waiting, "connection timed out");
        if waiting != Waiting::Body {
            self.received.truncate(self.approved);
        }
        self.eof = true;
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
            let read =
                tokio_util::io::poll_read_buf(Pin::new(&mut this.stream), cx, &mut this.received);
            let n = match read {
                Poll::Ready(read) => read?,
                Poll::Pending => {
                    ready!(this.poll_due(cx));
                    this.time_out();
                    continue;
                }
            };
            if n == 0 {
                // The client closed mid-head: hyper gets what came, and reports the
                // incomplete request to no one.
                this.eof = true;
                this.approved = this.received.len();
                continue;
            }
            this.examine();
            this.note_waiting();
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
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
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
