//! Webhook URL rules. `validate` runs when a webhook is registered and refuses URLs whose host is
//! obviously not on the public internet; `is_public_ip` runs at delivery time on the address the
//! host actually resolved to, because a public name can still resolve to a private address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

pub const MAX_URL_CHARS: usize = 2048;

/// Why a webhook URL is refused. Messages never echo the URL: it may carry credentials or tokens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRejection {
    #[error("Webhook URL must be at most {} characters.", MAX_URL_CHARS)]
    TooLong,
    #[error("Webhook URL must be an absolute URL including its scheme.")]
    NotAbsolute,
    #[error("Webhook URL is not a valid URL.")]
    Unparseable,
    #[error("Webhook URL must use https.")]
    NotHttps,
    #[error("Webhook URL must not contain a user name or password.")]
    UserInfo,
    #[error("Webhook URL must include a host.")]
    MissingHost,
    #[error("Webhook URL must use a domain name, not an IPv6 address.")]
    Ipv6Literal,
    #[error("Webhook URL must not point to a private, loopback or reserved IP address.")]
    PrivateAddress,
    #[error("Webhook URL must not use a local or reserved host name.")]
    ReservedName,
    #[error("Webhook URL host must be a fully qualified domain name.")]
    SingleLabel,
}

/// IPv4 ranges that are not reachable public destinations (this-network, private, shared CGN,
/// loopback, link-local, IETF protocol, documentation, 6to4 relay, benchmarking, multicast,
/// reserved and broadcast). Shared by registration and delivery so the two can never disagree.
const RESERVED_IPV4: [(Ipv4Addr, u8); 15] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    (Ipv4Addr::new(192, 0, 2, 0), 24),
    (Ipv4Addr::new(192, 88, 99, 0), 24),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    (Ipv4Addr::new(198, 51, 100, 0), 24),
    (Ipv4Addr::new(203, 0, 113, 0), 24),
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    (Ipv4Addr::new(240, 0, 0, 0), 4),
];

/// Name suffixes reserved for local or special use (RFC 6761, RFC 6762, RFC 8375, ICANN `.internal`).
const RESERVED_SUFFIXES: [&str; 6] = [
    ".localhost",
    ".local",
    ".internal",
    ".home.arpa",
    ".test",
    ".invalid",
];

/// Registration-time check. `allow_private` (WEBHOOK_ALLOW_PRIVATE_URLS) is for local development:
/// it also accepts `http://` and private, loopback and reserved hosts, but the length, parse,
/// scheme and user-info rules still apply.
pub fn validate(raw: &str, allow_private: bool) -> Result<Url, UrlRejection> {
    // Characters, not bytes, so the limit matches what the spec and clients count.
    if raw.chars().count() > MAX_URL_CHARS {
        return Err(UrlRejection::TooLong);
    }
    let url = Url::parse(raw).map_err(|error| match error {
        url::ParseError::RelativeUrlWithoutBase => UrlRejection::NotAbsolute,
        _ => UrlRejection::Unparseable,
    })?;
    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        _ => return Err(UrlRejection::NotHttps),
    }
    // Credentials in a stored URL would leak through listings and logs.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRejection::UserInfo);
    }
    let host = url.host().ok_or(UrlRejection::MissingHost)?;
    if !allow_private {
        check_public_host(&host)?;
    }
    Ok(url)
}

/// Whether `host` (as a URL of any scheme spells it) passes the same host rule as a webhook
/// URL: it is read as a browser reads an `https` URL's host, so every spelling of an IPv4
/// literal is normalised before the reserved ranges are checked. Used for destinations' RTMP
/// ingests, whose scheme the URL parser treats as opaque.
pub fn host_is_public(host: &str) -> bool {
    let Ok(url) = Url::parse(&format!("https://{host}/")) else {
        return false;
    };
    // The whole host must have been read as the host (no `@`, `/`, `?` or `#` smuggled in).
    url.host_str().is_some_and(|parsed| !parsed.is_empty())
        && url.username().is_empty()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url
            .host()
            .is_some_and(|parsed| check_public_host(&parsed).is_ok())
}

/// The host rule of `validate`. The url crate has already normalised numeric IPv4 spellings
/// (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`) into `Host::Ipv4`, so they land here too.
fn check_public_host(host: &Host<&str>) -> Result<(), UrlRejection> {
    match host {
        // Every IPv6 literal is refused: too many embedding forms to vet at registration time.
        Host::Ipv6(_) => Err(UrlRejection::Ipv6Literal),
        Host::Ipv4(ip) if is_reserved_ipv4(*ip) => Err(UrlRejection::PrivateAddress),
        Host::Ipv4(_) => Ok(()),
        Host::Domain(name) => check_public_name(name),
    }
}

fn check_public_name(name: &str) -> Result<(), UrlRejection> {
    // One trailing dot is the same name in absolute form (`localhost.` is `localhost`).
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if name == "localhost" || name == "home.arpa" {
        return Err(UrlRejection::ReservedName);
    }
    // A single label resolves through search domains, i.e. to something on the local network.
    if !name.contains('.') {
        return Err(UrlRejection::SingleLabel);
    }
    if RESERVED_SUFFIXES
        .iter()
        .any(|suffix| name.ends_with(suffix))
    {
        return Err(UrlRejection::ReservedName);
    }
    Ok(())
}

fn is_reserved_ipv4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    RESERVED_IPV4.iter().any(|&(network, prefix_len)| {
        // A shift by 32 (prefix 0) overflows; that prefix matches everything.
        let mask = u32::MAX
            .checked_shl(32 - u32::from(prefix_len))
            .unwrap_or(0);
        bits & mask == u32::from(network) & mask
    })
}

/// Delivery-time check on a resolved address: true when it is a public address.
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !is_reserved_ipv4(v4),
        IpAddr::V6(v6) => is_public_ipv6(v6),
    }
}

fn is_public_ipv6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let embedded_v4 =
        |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));

    if ip.is_unspecified() || ip.is_loopback() {
        return false;
    }
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) reach the IPv4 host.
    if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) {
        return !is_reserved_ipv4(embedded_v4(s[6], s[7]));
    }
    // NAT64 well-known prefix 64:ff9b::/96 translates to the embedded IPv4 address.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return !is_reserved_ipv4(embedded_v4(s[6], s[7]));
    }
    // 6to4 2002::/16 tunnels to the IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return !is_reserved_ipv4(embedded_v4(s[1], s[2]));
    }
    let refused = s[0] & 0xfe00 == 0xfc00 // fc00::/7 unique local
        || s[0] & 0xffc0 == 0xfe80 // fe80::/10 link-local
        || s[0] & 0xff00 == 0xff00 // ff00::/8 multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // 2001:db8::/32 documentation
        || s[..4] == [0x0100, 0, 0, 0] // 100::/64 discard
        || (s[0] == 0x2001 && s[1] < 0x0200); // 2001::/23 IETF protocol, incl. Teredo 2001::/32
    // Only global unicast (2000::/3) is public; anything else outside the list above is
    // unassigned or deprecated (e.g. site-local fec0::/10) and not a legitimate destination.
    !refused && s[0] & 0xe000 == 0x2000
}

#[cfg(test)]
mod tests {
    use super::*;
    use UrlRejection::*;

    const HTTPS_OK: Result<(), UrlRejection> = Ok(());

    #[test]
    fn validate_table() {
        let cases: &[(&str, bool, Result<(), UrlRejection>)] = &[
            // Public hosts, ports, paths and query strings.
            ("https://hooks.example.com/", false, HTTPS_OK),
            ("https://example.com", false, HTTPS_OK),
            ("https://api.stripe.com/v1/webhooks", false, HTTPS_OK),
            (
                "https://hooks.example.com:8443/a/b?x=1&y=2#frag",
                false,
                HTTPS_OK,
            ),
            ("https://Hooks.Example.COM./path", false, HTTPS_OK),
            ("https://8.8.8.8/", false, HTTPS_OK),
            ("https://1.1.1.1:443/hook", false, HTTPS_OK),
            ("https://93.184.216.34/hook?token=abc", false, HTTPS_OK),
            // One address inside every reserved IPv4 range.
            ("https://0.1.2.3/", false, Err(PrivateAddress)),
            ("https://10.0.0.1/", false, Err(PrivateAddress)),
            ("https://100.64.0.1/", false, Err(PrivateAddress)),
            ("https://100.127.255.255/", false, Err(PrivateAddress)),
            ("https://127.0.0.1/", false, Err(PrivateAddress)),
            (
                "https://169.254.169.254/latest/meta-data/",
                false,
                Err(PrivateAddress),
            ),
            ("https://172.16.0.1/", false, Err(PrivateAddress)),
            ("https://172.31.255.255/", false, Err(PrivateAddress)),
            ("https://192.0.0.8/", false, Err(PrivateAddress)),
            ("https://192.0.2.10/", false, Err(PrivateAddress)),
            ("https://192.88.99.1/", false, Err(PrivateAddress)),
            ("https://192.168.1.1/", false, Err(PrivateAddress)),
            ("https://198.18.0.1/", false, Err(PrivateAddress)),
            ("https://198.19.255.255/", false, Err(PrivateAddress)),
            ("https://198.51.100.7/", false, Err(PrivateAddress)),
            ("https://203.0.113.9/", false, Err(PrivateAddress)),
            ("https://224.0.0.1/", false, Err(PrivateAddress)),
            ("https://239.255.255.250/", false, Err(PrivateAddress)),
            ("https://240.0.0.1/", false, Err(PrivateAddress)),
            ("https://255.255.255.255/", false, Err(PrivateAddress)),
            // First addresses just outside some ranges.
            ("https://1.0.0.0/", false, HTTPS_OK),
            ("https://11.0.0.0/", false, HTTPS_OK),
            ("https://100.63.255.255/", false, HTTPS_OK),
            ("https://100.128.0.0/", false, HTTPS_OK),
            ("https://172.15.255.255/", false, HTTPS_OK),
            ("https://172.32.0.0/", false, HTTPS_OK),
            ("https://192.0.1.0/", false, HTTPS_OK),
            ("https://198.17.255.255/", false, HTTPS_OK),
            ("https://198.20.0.0/", false, HTTPS_OK),
            ("https://223.255.255.255/", false, HTTPS_OK),
            // Other spellings of 127.0.0.1 and 10.0.0.1, normalised by the url crate.
            ("https://127.1/", false, Err(PrivateAddress)),
            ("https://0x7f.0.0.1/", false, Err(PrivateAddress)),
            ("https://0x7f000001/", false, Err(PrivateAddress)),
            ("https://2130706433/", false, Err(PrivateAddress)),
            ("https://0177.0.0.1/", false, Err(PrivateAddress)),
            ("https://167772161/", false, Err(PrivateAddress)),
            ("https://0xa.0.0.1/", false, Err(PrivateAddress)),
            ("https://012.0.0.1/", false, Err(PrivateAddress)),
            ("https://10.1/", false, Err(PrivateAddress)),
            // IPv6 literals: all refused.
            ("https://[::1]/", false, Err(Ipv6Literal)),
            ("https://[::ffff:127.0.0.1]/", false, Err(Ipv6Literal)),
            ("https://[2606:4700::1111]/", false, Err(Ipv6Literal)),
            (
                "https://[2606:4700:4700::1111]:443/hook",
                false,
                Err(Ipv6Literal),
            ),
            // Reserved and single-label names.
            ("https://localhost/", false, Err(ReservedName)),
            ("https://localhost./", false, Err(ReservedName)),
            ("https://LOCALHOST/", false, Err(ReservedName)),
            ("https://LocalHost.:8443/", false, Err(ReservedName)),
            ("https://foo.localhost/", false, Err(ReservedName)),
            ("https://printer.local/", false, Err(ReservedName)),
            ("https://printer.local./", false, Err(ReservedName)),
            ("https://svc.internal/", false, Err(ReservedName)),
            ("https://router.home.arpa/", false, Err(ReservedName)),
            ("https://home.arpa/", false, Err(ReservedName)),
            ("https://x.test/", false, Err(ReservedName)),
            ("https://X.TEST/", false, Err(ReservedName)),
            ("https://x.invalid/", false, Err(ReservedName)),
            ("https://intranet/", false, Err(SingleLabel)),
            ("https://printer/", false, Err(SingleLabel)),
            ("https://intranet./", false, Err(SingleLabel)),
            // Suffix match is on whole labels, not substrings.
            ("https://mylocal.com/", false, HTTPS_OK),
            ("https://test.example.com/", false, HTTPS_OK),
            ("https://notlocalhost.com/", false, HTTPS_OK),
            // User info.
            ("https://user:pass@example.com/", false, Err(UserInfo)),
            ("https://user@example.com/", false, Err(UserInfo)),
            ("https://:pass@example.com/", false, Err(UserInfo)),
            // Scheme and shape.
            ("http://example.com/", false, Err(NotHttps)),
            ("ftp://example.com/", false, Err(NotHttps)),
            ("wss://example.com/", false, Err(NotHttps)),
            ("mailto:ops@example.com", false, Err(NotHttps)),
            ("example.com/hook", false, Err(NotAbsolute)),
            ("/hook", false, Err(NotAbsolute)),
            ("", false, Err(NotAbsolute)),
            ("https://", false, Err(Unparseable)),
            ("https://exa mple.com/", false, Err(Unparseable)),
            ("https://[::1/", false, Err(Unparseable)),
            ("https://256.0.0.1/", false, Err(Unparseable)),
            // Special schemes skip extra slashes, so this is the single-label host `nohost`.
            ("https:///nohost", false, Err(SingleLabel)),
            // Local-development switch.
            ("http://127.0.0.1:8080/hook", true, HTTPS_OK),
            ("http://localhost:9000/", true, HTTPS_OK),
            ("https://localhost/", true, HTTPS_OK),
            ("https://10.0.0.1/", true, HTTPS_OK),
            ("https://[::1]:8443/", true, HTTPS_OK),
            ("http://intranet/", true, HTTPS_OK),
            ("http://svc.internal/", true, HTTPS_OK),
            ("http://example.com/", true, HTTPS_OK),
            ("ftp://localhost/", true, Err(NotHttps)),
            ("http://user:pass@localhost/", true, Err(UserInfo)),
            ("https://user@127.0.0.1/", true, Err(UserInfo)),
            ("localhost:9000/hook", true, Err(NotHttps)),
            ("/hook", true, Err(NotAbsolute)),
        ];
        assert!(cases.len() >= 50);
        for (raw, allow_private, expected) in cases {
            let actual = validate(raw, *allow_private).map(|_| ());
            assert_eq!(
                &actual, expected,
                "validate({raw:?}, allow_private = {allow_private})"
            );
        }
    }

    #[test]
    fn length_limit_counts_characters() {
        let prefix = "https://example.com/";
        let exact = format!("{prefix}{}", "a".repeat(MAX_URL_CHARS - prefix.len()));
        assert_eq!(exact.chars().count(), MAX_URL_CHARS);
        assert!(validate(&exact, false).is_ok());

        let over = format!("{exact}a");
        assert_eq!(validate(&over, false), Err(TooLong));
        // Length is checked first, even before parsing.
        assert_eq!(validate(&"x".repeat(MAX_URL_CHARS + 1), true), Err(TooLong));

        // Multi-byte characters count once: 2,048 chars is more than 2,048 bytes but passes.
        let wide = format!("{prefix}{}", "é".repeat(MAX_URL_CHARS - prefix.len()));
        assert!(wide.len() > MAX_URL_CHARS);
        assert!(validate(&wide, false).is_ok());
        assert_eq!(validate(&format!("{wide}é"), false), Err(TooLong));
    }

    #[test]
    fn validate_returns_the_parsed_url() {
        let url = validate("https://Hooks.Example.com:8443/a?b=c", false).expect("valid");
        assert_eq!(url.host_str(), Some("hooks.example.com"));
        assert_eq!(url.port(), Some(8443));
        assert_eq!(url.path(), "/a");
        assert_eq!(url.query(), Some("b=c"));
    }

    #[test]
    fn messages_do_not_echo_the_url() {
        let err = validate("https://alice42:s3cret@example.com/", false).expect_err("user info");
        let message = err.to_string();
        assert!(!message.contains("s3cret"));
        assert!(!message.contains("alice42"));
        assert_eq!(
            TooLong.to_string(),
            "Webhook URL must be at most 2048 characters."
        );
    }

    #[test]
    fn public_ip_table() {
        let cases: &[(&str, bool)] = &[
            // IPv4.
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("93.184.216.34", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("223.255.255.255", true),
            ("0.0.0.0", false),
            ("10.0.0.1", false),
            ("100.64.0.0", false),
            ("127.0.0.1", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("192.0.0.1", false),
            ("192.0.2.1", false),
            ("192.88.99.1", false),
            ("192.168.0.1", false),
            ("198.18.0.1", false),
            ("198.51.100.1", false),
            ("203.0.113.1", false),
            ("224.0.0.1", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            // IPv6 with embedded IPv4.
            ("::ffff:10.0.0.1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:8.8.8.8", true),
            ("::10.0.0.1", false),
            ("::8.8.8.8", true),
            ("64:ff9b::10.0.0.1", false),
            ("64:ff9b::8.8.8.8", true),
            ("2002:0a00:0001::1", false),
            ("2002:0808:0808::1", true),
            // IPv6 special ranges.
            ("::1", false),
            ("::", false),
            ("fc00::1", false),
            ("fd00::1", false),
            ("fe80::1", false),
            ("febf:ffff::1", false),
            ("ff02::1", false),
            ("2001:db8::1", false),
            ("100::1", false),
            ("2001::1", false),
            ("2001:1ff:ffff::1", false),
            ("fec0::1", false),
            // Global unicast.
            ("2606:4700:4700::1111", true),
            ("2001:4860:4860::8888", true),
            ("2001:200::1", true),
            ("2a00:1450:4001::1", true),
        ];
        for (raw, expected) in cases {
            let ip: IpAddr = raw.parse().expect("test address parses");
            assert_eq!(is_public_ip(ip), *expected, "is_public_ip({raw})");
        }
    }

    #[test]
    fn ipv4_table_boundaries_match_prefixes() {
        for &(network, prefix_len) in &RESERVED_IPV4 {
            let first = u32::from(network);
            let size = 1u64 << (32 - prefix_len);
            let last = (u64::from(first) + size - 1) as u32;
            assert!(
                is_reserved_ipv4(Ipv4Addr::from(first)),
                "{network}/{prefix_len}"
            );
            assert!(
                is_reserved_ipv4(Ipv4Addr::from(last)),
                "{network}/{prefix_len}"
            );
        }
    }
}
