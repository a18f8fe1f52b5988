//! The local server's limits on its clients (docs/request-pipeline.md, "Limits of the
//! transport"), against the binary over raw sockets: a slow head, a stalled body, an idle
//! kept-alive connection, the connection cap and a shutdown with a stalled client; and the
//! head guard, which nothing earlier on a connection switches off.

use std::time::{Duration, Instant};

use super::stop;
use super::transport::{RawConnection, seeded_server_with};
use crate::common::*;

/// A keyed `POST /api/v1/webhooks` whose body declares `length` bytes, and the first of them.
fn stalled_post(length: usize) -> Vec<u8> {
    format!(
        "POST /api/v1/webhooks HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{",
        Keys::test_a()
    )
    .into_bytes()
}

/// A connection whose reads give up after `limit`.
fn open_with_read_limit(base: &str, limit: Duration) -> RawConnection {
    let connection = RawConnection::open(base);
    connection.0.set_read_timeout(Some(limit)).unwrap();
    connection
}

#[test]
fn a_half_sent_head_is_closed_at_the_head_timeout() {
    let (server, seed) = seeded_server_with(&[("HEAD_TIMEOUT_SECS", "1")]);
    let mut connection = RawConnection::open(&server.base);
    let sent = Instant::now();
    connection.send(b"GET /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bea");
    assert!(connection.response().is_none(), "closed, no answer");
    let waited = sent.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn a_stalled_body_is_cut_off_at_the_body_timeout() {
    let (server, seed) = seeded_server_with(&[("BODY_TIMEOUT_SECS", "1")]);
    let mut connection = RawConnection::open(&server.base);
    let sent = Instant::now();
    connection.send(&stalled_post(100));
    let answer = connection.response().expect("an answer");
    answer.assert_answer(400, Some("missing_fields"));
    let waited = sent.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(connection.closed());
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn an_idle_kept_alive_connection_is_closed_at_the_idle_timeout() {
    let (server, seed) = seeded_server_with(&[("IDLE_TIMEOUT_SECS", "1")]);
    let mut connection = RawConnection::open(&server.base);
    // A busy connection outlives the idle timeout: each request starts it again.
    for _ in 0..6 {
        connection.send(b"GET /api/v1/creators HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_eq!(connection.response().expect("an answer").status, 200);
        std::thread::sleep(Duration::from_millis(400));
    }
    let answered = Instant::now() - Duration::from_millis(400);
    assert!(connection.closed());
    let waited = answered.elapsed();
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn connections_beyond_the_cap_wait_until_one_closes() {
    let (server, seed) = seeded_server_with(&[("MAX_CONNECTIONS", "2")]);
    let held = [
        RawConnection::open(&server.base),
        RawConnection::open(&server.base),
    ];
    // Both taken: the server has accepted them before the third arrives.
    std::thread::sleep(Duration::from_millis(200));
    let mut third = open_with_read_limit(&server.base, Duration::from_millis(700));
    third.send(b"GET /api/v1/creators HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut byte = [0u8; 1];
    let early = std::io::Read::read(&mut third.0, &mut byte);
    assert!(early.is_err(), "answered beyond the cap: {early:?}");
    drop(held);
    third
        .0
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    // The byte the early read may have left unread is none: it timed out.
    assert_eq!(
        third.response().expect("answered once a slot freed").status,
        200
    );
    stop(server);
    let _ = std::fs::remove_file(seed);
}

#[test]
fn shutdown_closes_a_stalled_client_at_its_deadline() {
    let (mut server, seed) =
        seeded_server_with(&[("SHUTDOWN_TIMEOUT_SECS", "1"), ("BODY_TIMEOUT_SECS", "60")]);
    let mut connection = RawConnection::open(&server.base);
    connection.send(&stalled_post(100));
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let exit = server.child.wait().unwrap();
    let waited = signalled.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    drop(connection);
    let _ = std::fs::remove_file(seed);
}

/// After a chunk-size line longer than the guard follows, after a `CONNECT`, and for a
/// `Content-Length` list, the answer is the envelope with a request id, never hyper's bare one.
#[test]
fn nothing_earlier_on_a_connection_switches_the_guard_off() {
    let (server, seed) = seeded_server_with(&[]);
    let long_chunk_line = format!(
        "POST /api/v1/webhooks HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\n\
         Transfer-Encoding: chunked\r\n\r\n1;{}\r\n",
        Keys::test_a(),
        "e".repeat(5_000)
    );
    let mut connection = RawConnection::open(&server.base);
    connection.send(long_chunk_line.as_bytes());
    // The head was the API's: its handler answers that the body could not be read.
    connection
        .response()
        .expect("an answer")
        .assert_answer(400, Some("missing_fields"));

    // An unknown key's chunked request whose chunk-size line runs to 5,001 bytes: its `401`,
    // then the guard's envelope closing the connection, so a 20 KB request line sent after it
    // on the same connection gets no bare answer from hyper.
    let mut connection = RawConnection::open(&server.base);
    connection.send(
        format!(
            "POST /api/v1/streams HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer svc_test_x\r\n\
             Transfer-Encoding: chunked\r\n\r\n1;{}\r\n",
            "e".repeat(4_999)
        )
        .as_bytes(),
    );
    connection
        .response()
        .expect("an answer")
        .assert_answer(401, Some("unauthorized"));
    let refusal = connection.response().expect("the guard's refusal");
    refusal.assert_answer(400, Some("invalid_fields"));
    assert_eq!(refusal.header("connection"), Some("close"));
    let long_line = format!(
        "GET /api/v1/{} HTTP/1.1\r\nHost: t\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    // The write itself may meet the closed connection.
    let _ = connection.try_send(long_line.as_bytes());
    assert!(connection.response().is_none());

    let mut connection = RawConnection::open(&server.base);
    connection.send(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    connection
        .response()
        .expect("an answer")
        .assert_answer(404, Some("not_found"));
    let long_line = format!(
        "GET /api/v1/{} HTTP/1.1\r\nHost: t\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    connection.send(long_line.as_bytes());
    connection
        .response()
        .expect("an answer")
        .assert_answer(414, None);

    let mut connection = RawConnection::open(&server.base);
    connection
        .send(b"POST /api/v1/webhooks HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 5\r\n\r\n{}   ");
    connection
        .response()
        .expect("an answer")
        .assert_answer(400, Some("invalid_fields"));
    stop(server);
    let _ = std::fs::remove_file(seed);
}
