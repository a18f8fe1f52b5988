//! The rate-limit headers every keyed answer carries.

use super::Response;

pub const POLICY: &str = "\"default\";q=100;w=60";

/// `(r, t)` of an answer's `RateLimit` header.
pub fn standing(r: &Response) -> (u64, u64) {
    assert_eq!(r.header("ratelimit-policy"), Some(POLICY), "{}", r.body);
    let header = r.header("ratelimit").expect("a RateLimit header");
    let rest = header.strip_prefix("\"default\";r=").expect(header);
    let (left, reset) = rest.split_once(";t=").expect(header);
    (left.parse().unwrap(), reset.parse().unwrap())
}
