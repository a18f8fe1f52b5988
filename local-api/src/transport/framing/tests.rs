//! The head checks and the framing, byte by byte.

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
    assert_eq!(refusal.status(), 414);
    // Refused before the line ends.
    let refusal = Framing::Head
        .advance(&long_line.as_bytes()[..MAX_REQUEST_LINE_BYTES + 1])
        .1
        .unwrap();
    assert_eq!(refusal.status(), 414);

    let many = format!(
        "GET / HTTP/1.1\r\n{}\r\n",
        "X-A: b\r\n".repeat(MAX_HEADER_FIELDS + 1)
    );
    assert_eq!(
        Framing::Head.advance(many.as_bytes()).1.unwrap().status(),
        431
    );
    let allowed = format!(
        "GET / HTTP/1.1\r\n{}\r\n",
        "X-A: b\r\n".repeat(MAX_HEADER_FIELDS)
    );
    assert!(Framing::Head.advance(allowed.as_bytes()).1.is_none());

    let big = format!("GET / HTTP/1.1\r\nX-A: {}", "b".repeat(MAX_HEAD_BYTES));
    assert_eq!(
        Framing::Head.advance(big.as_bytes()).1.unwrap().status(),
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
            refusal.map(|r| r.status()),
            Some(400),
            "{}",
            String::from_utf8_lossy(garbage)
        );
    }
}

/// Nothing switches the guard off: after a chunk-size line longer than it follows, the
/// connection is refused, and after a `CONNECT` the next head is checked like any other.
#[test]
fn every_request_of_a_connection_is_checked_whatever_came_before() {
    let mut framing = Framing::Head;
    let head = b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    let (accepted, refusal) = framing.advance(head);
    assert_eq!((accepted, refusal.is_none()), (head.len(), true));
    let long_line = format!("1;{}\r\n", "e".repeat(5000));
    let (_, refusal) = framing.advance(long_line.as_bytes());
    assert_eq!(refusal.map(|r| r.status()), Some(400));

    let mut framing = Framing::Head;
    let connect = b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n";
    let (accepted, refusal) = framing.advance(connect);
    assert_eq!((accepted, refusal.is_none()), (connect.len(), true));
    assert_eq!(framing, Framing::Head);
    let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20 * 1024));
    let (_, refusal) = framing.advance(long.as_bytes());
    assert_eq!(refusal.map(|r| r.status()), Some(414));
}

/// A `Content-Length` list is refused by the guard, with the envelope, as hyper would refuse it
/// bare; the same length in two fields is one length.
#[test]
fn a_content_length_list_is_refused_and_repeated_equal_fields_are_not() {
    for head in [
        &b"POST /x HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"[..],
        b"POST /x HTTP/1.1\r\nContent-Length: 5,5\r\n\r\n",
    ] {
        let refusal = Framing::Head.advance(head).1;
        assert_eq!(refusal.map(|r| r.status()), Some(400), "{head:?}");
    }
    let mut framing = Framing::Head;
    let head = b"POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n";
    assert!(framing.advance(head).1.is_none());
    assert_eq!(framing, Framing::Fixed(5));
}

/// The chunked grammar is hyper's, byte for byte: what its decoder refuses mid-body, the guard
/// refuses; what it accepts, the guard follows.
#[test]
fn chunked_framing_is_refused_where_hyper_refuses_it() {
    let head = b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    let big_trailer = format!("0\r\nX-T: {}\r\n\r\n", "t".repeat(16 * 1024));
    let refused: [&[u8]; 9] = [
        b"1\r\r\nx\r\n0\r\n\r\n",
        b"1\nx\r\n0\r\n\r\n",
        b"\r\n",
        b" 1\r\n",
        b"1 2\r\nx\r\n0\r\n\r\n",
        b"1;a\nb\r\n",
        b"1\r\nxY\r\n",
        b"0\r\nX-T: t\rX\r\n\r\n",
        big_trailer.as_bytes(),
    ];
    for body in refused {
        let mut framing = Framing::Head;
        let (accepted, refusal) = framing.advance(head);
        assert_eq!((accepted, refusal.is_none()), (head.len(), true));
        let (_, refusal) = framing.advance(body);
        assert_eq!(
            refusal.map(|r| r.status()),
            Some(400),
            "{:?}",
            String::from_utf8_lossy(&body[..body.len().min(40)])
        );
    }
    let accepted: [&[u8]; 4] = [
        b"1 \t ;ext\r\nx\r\n0\r\n\r\n",
        b"0a\r\n0123456789\r\nF\r\n0123456789abcde\r\n0\r\n\r\n",
        b"0\r\nX-A: 1\r\nX-B: 2\r\n\r\n",
        b"0;last\r\n\r\n",
    ];
    for body in accepted {
        let mut framing = Framing::Head;
        let mut message = head.to_vec();
        message.extend_from_slice(body);
        let (n, refusal) = framing.advance(&message);
        assert!(refusal.is_none(), "{:?}", String::from_utf8_lossy(body));
        assert_eq!((n, framing), (message.len(), Framing::Head));
    }
}
