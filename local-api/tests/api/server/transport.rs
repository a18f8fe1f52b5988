//! The transport's edge (docs/request-pipeline.md, "Limits of the transport"): raw connections past every limit get the envelope.

use serde_json::json;

use super::{Server, start_with, stop};
use crate::common::*;

// ---- The transport's edge (docs/request-pipeline.md, "Limits of the transport") ----

/// One raw HTTP/1.1 connection: what an HTTP client library would refuse to send, sent as is.
pub(super) struct RawConnection(pub(super) std::net::TcpStream);

/// A response read off a [`RawConnection`].
pub(super) struct RawResponse {
    pub(super) status: u16,
    headers: Vec<(String, String)>,
    pub(super) body: serde_json::Value,
}

impl RawResponse {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// JSON with its type and a request id: the envelope with `code` when it is an error.
    pub(super) fn assert_answer(&self, status: u16, code: Option<&str>) {
        assert_eq!(self.status, status, "{:?}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert!(
            self.header("x-request-id").is_some_and(|id| !id.is_empty()),
            "{:?}",
            self.headers
        );
        if let Some(code) = code {
            assert_eq!(self.body["error"]["code"], code, "{}", self.body);
            assert!(
                self.body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }
}

impl RawConnection {
    pub(super) fn open(base: &str) -> Self {
        let address = base
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap();
        let stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        Self(stream)
    }

    pub(super) fn send(&mut self, bytes: &[u8]) {
        self.try_send(bytes).unwrap();
    }

    /// Sends what may meet a connection the server closed already.
    pub(super) fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        self.0.write_all(bytes)
    }

    /// The next response, or `None` when the server closed the connection first.
    pub(super) fn response(&mut self) -> Option<RawResponse> {
        use std::io::Read;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match self.0.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ if head.is_empty() => return None,
                other => panic!("cut off in a response head: {other:?}"),
            }
        }
        let head = String::from_utf8(head).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.to_owned(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("every answer has a Content-Length");
        let mut body = vec![0u8; length];
        self.0.read_exact(&mut body).unwrap();
        let body = serde_json::from_slice(&body).expect("a JSON body");
        Some(RawResponse {
            status,
            headers,
            body,
        })
    }

    /// True when the server closed the connection (reads end without data).
    pub(super) fn closed(&mut self) -> bool {
        use std::io::Read;
        matches!(self.0.read(&mut [0u8; 1]), Ok(0) | Err(_))
    }
}

fn seeded_server() -> (Server, std::path::PathBuf) {
    seeded_server_with(&[])
}

/// The binary on the suite's seed (its keys), with `envs` set.
pub(super) fn seeded_server_with(envs: &[(&str, &str)]) -> (Server, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("seed-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, base_seed(chrono::Utc::now()).to_string()).unwrap();
    (start_with(&["--seed", path.to_str().unwrap()], envs), path)
}

fn keyed_get(path_and_query: &str, key: &str, extra_fields: usize) -> Vec<u8> {
    let mut request = format!(
        "GET /api/v1{path_and_query} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\n"
    );
    for i in 0..extra_fields {
        request.push_str(&format!("X-Extra-{i}: {i}\r\n"));
    }
    request.push_str("\r\n");
    request.into_bytes()
}

#[test]
fn transport_limits_answer_with_the_envelope() {
    let (server, seed) = seeded_server();
    let key = Keys::test_b();

    // 110 header fields are served (the usual limit of 100 is not the API's), on a
    // connection that stays open.
    let mut connection = RawConnection::open(&server.base);
    connection.send(&keyed_get("/streams", &key, 110));
    connection.response().unwrap().assert_answer(200, None);
    connection.send(&keyed_get("/streams", &key, 0));
    connection.response().unwrap().assert_answer(200, None);

    // Over the limits: the status HTTP prescribes, the envelope, and the connection closed.
    let long_query = |bytes: usize| format!("/streams?q={}", "a".repeat(bytes));
    let refused: [(Vec<u8>, u16); 7] = [
        (keyed_get("/streams", &key, 1_000), 431),
        // A head that parses, with a target that is no URI (`<` and `>` are not path bytes).
        (keyed_get("/streams/<id>", &key, 0), 400),
        (keyed_get(&long_query(70 * 1024), &key, 0), 414),
        (keyed_get(&long_query(1024 * 1024), &key, 0), 414),
        (
            format!(
                "GET /api/v1/streams HTTP/1.1\r\nX-Big: {}\r\n\r\n",
                "b".repeat(300 * 1024)
            )
            .into_bytes(),
            431,
        ),
        (b"this is not HTTP at all\r\n\r\n".to_vec(), 400),
        (
            b"POST /api/v1/streams HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
                .to_vec(),
            400,
        ),
    ];
    for (request, status) in refused {
        let mut connection = RawConnection::open(&server.base);
        connection.send(&request);
        let response = connection.response().expect("an answer before the close");
        response.assert_answer(status, Some("invalid_fields"));
        assert_eq!(response.header("connection"), Some("close"));
        assert!(connection.closed());
    }

    // A refused head after a served request on the same connection: the first is answered,
    // then the refusal.
    let mut connection = RawConnection::open(&server.base);
    let mut two = keyed_get("/streams", &key, 0);
    two.extend_from_slice(&keyed_get("/streams", &key, 1_000));
    connection.send(&two);
    connection.response().unwrap().assert_answer(200, None);
    connection
        .response()
        .unwrap()
        .assert_answer(431, Some("invalid_fields"));
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn a_refusal_before_the_body_keeps_the_connection() {
    let (server, seed) = seeded_server();
    let start_body = json!({"creator_id": "avt_ava000000001", "product_name": "Glow Serum",
                            "platform": "tiktok", "duration_minutes": 30})
    .to_string();
    let post = |key: &str, length: usize| {
        format!(
            "POST /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
        .into_bytes()
    };
    let discovery_answers = |connection: &mut RawConnection| {
        connection.send(b"GET /api/v1/ HTTP/1.1\r\nHost: t\r\n\r\n");
        let response = connection.response().expect("the connection is still open");
        response.assert_answer(200, None);
        assert_eq!(response.body["version"], "v1");
    };

    let mut connection = RawConnection::open(&server.base);
    for (key, status, code) in [
        ("svc_test_unknown".to_owned(), 401, "unauthorized"),
        (Keys::live_free(), 402, "plan_required"),
        (Keys::only("streams:read"), 403, "insufficient_scope"),
    ] {
        // The body still arriving when the refusal is answered...
        connection.send(&post(&key, start_body.len()));
        connection.send(&start_body.as_bytes()[..10]);
        let response = connection.response().unwrap();
        response.assert_answer(status, Some(code));
        assert_ne!(response.header("connection"), Some("close"));
        // ...and sent in full after it.
        connection.send(&start_body.as_bytes()[10..]);
        discovery_answers(&mut connection);
        // The body sent in full before the answer.
        connection.send(&post(&key, start_body.len()));
        connection.send(start_body.as_bytes());
        connection
            .response()
            .unwrap()
            .assert_answer(status, Some(code));
        discovery_answers(&mut connection);
    }

    // A body the API reads and refuses.
    connection.send(&post(&Keys::test_b(), 9));
    connection.send(b"not json!");
    connection
        .response()
        .unwrap()
        .assert_answer(400, Some("missing_fields"));
    discovery_answers(&mut connection);

    // 429: the brand's 100 requests of the minute spent, then a start refused before its body.
    let mut answered = 0;
    loop {
        connection.send(&keyed_get("/streams?limit=1", &Keys::test_b(), 0));
        match connection.response().unwrap().status {
            200 => answered += 1,
            429 => break,
            other => panic!("{other}"),
        }
        assert!(answered <= 100);
    }
    connection.send(&post(&Keys::test_b(), start_body.len()));
    connection.send(&start_body.as_bytes()[..10]);
    connection
        .response()
        .unwrap()
        .assert_answer(429, Some("rate_limited"));
    connection.send(&start_body.as_bytes()[10..]);
    discovery_answers(&mut connection);

    // A chunked body still arriving.
    connection.send(
        b"POST /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer svc_test_x\r\n\
          Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    );
    connection
        .response()
        .unwrap()
        .assert_answer(401, Some("unauthorized"));
    connection.send(b"3\r\nabc\r\n0\r\n\r\n");
    discovery_answers(&mut connection);

    // A body over the 1 MiB the API accepts is not read: the answer says the connection closes.
    connection.send(&post("svc_test_unknown", 2 * 1024 * 1024));
    connection.send(&[b'x'; 4096]);
    let response = connection.response().unwrap();
    response.assert_answer(401, Some("unauthorized"));
    assert_eq!(response.header("connection"), Some("close"));
    assert!(connection.closed());
    stop(server);
    let _ = std::fs::remove_file(seed);
}

/// A chunked body framed in a way hyper's decoder refuses (a CR without its LF, a bare LF, a
/// digit after the size's spaces, data not closed by CR LF, trailers over hyper's 16 KiB) is
/// refused by the guard first: the answer to the request comes, then the envelope, and the
/// connection closes, where hyper alone would drop the connection mid-body and leave the next
/// request unanswered.
#[test]
fn a_chunked_body_hyper_would_refuse_is_refused_with_the_envelope() {
    let (server, seed) = seeded_server();
    let big_trailer = format!("0\r\nX-T: {}\r\n\r\n", "t".repeat(17 * 1024));
    let bodies: [&[u8]; 6] = [
        b"1\r\r\r\r\nx\r\n0\r\n\r\n",
        b"1\nx\r\n0\r\n\r\n",
        b"1 2\r\nx\r\n0\r\n\r\n",
        b"1\r\nxY\r\n0\r\n\r\n",
        b"0\r\nX-T: t\rX\r\n\r\n",
        big_trailer.as_bytes(),
    ];
    for body in bodies {
        let mut connection = RawConnection::open(&server.base);
        let mut request = b"POST /api/v1/streams HTTP/1.1\r\nHost: t\r\n\
            Authorization: Bearer svc_test_unknown\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
        request.extend_from_slice(body);
        request.extend_from_slice(&keyed_get("/streams", &Keys::test_b(), 0));
        connection.send(&request);
        let shown = String::from_utf8_lossy(&body[..body.len().min(40)]).into_owned();
        connection
            .response()
            .unwrap_or_else(|| panic!("{shown:?}: no answer"))
            .assert_answer(401, Some("unauthorized"));
        let refusal = connection
            .response()
            .unwrap_or_else(|| panic!("{shown:?}: no refusal"));
        refusal.assert_answer(400, Some("invalid_fields"));
        assert_eq!(refusal.header("connection"), Some("close"), "{shown:?}");
        assert!(connection.closed(), "{shown:?}");
    }
    stop(server);
    let _ = std::fs::remove_file(seed);
}
