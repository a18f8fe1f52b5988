//! Paging of lists (`GET /streams`, `GET /shows`, a webhook's deliveries): `limit` and
//! `offset` take defaults or are clamped, never refused.

pub const DEFAULT_LIST_LIMIT: u64 = 20;
pub const MAX_LIST_LIMIT: u64 = 100;

/// `limit` and `offset` of any list paged by offset (`GET /streams`, `GET /shows`): defaults
/// for non-integers, clamped otherwise.
pub fn limit_and_offset(limit: Option<&str>, offset: Option<&str>) -> (u64, u64) {
    (
        parse_integer(limit)
            .map(|l| l.clamp(1, MAX_LIST_LIMIT as i128) as u64)
            .unwrap_or(DEFAULT_LIST_LIMIT),
        parse_integer(offset)
            .map(|o| o.clamp(0, i64::MAX as i128) as u64)
            .unwrap_or(0),
    )
}

/// An integer, however large: huge values are clamped later rather than defaulted.
fn parse_integer(raw: Option<&str>) -> Option<i128> {
    let raw = raw?.trim();
    let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse::<i128>().ok().or(Some(if raw.starts_with('-') {
        i128::MIN
    } else {
        i128::MAX
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_and_offset_default_and_clamp() {
        let q = |l: Option<&str>, o: Option<&str>| limit_and_offset(l, o);
        assert_eq!(q(None, None), (20, 0));
        assert_eq!(q(Some("0"), Some("-5")), (1, 0));
        assert_eq!(q(Some("1000"), Some("7")), (100, 7));
        assert_eq!(q(Some("abc"), Some("1.5")), (20, 0));
        assert_eq!(
            q(Some("99999999999999999999999999999999999999999"), None),
            (100, 0)
        );
        assert_eq!(
            q(Some("-99999999999999999999999999999999999999999"), None),
            (1, 0)
        );
        assert_eq!(q(Some(""), Some("")), (20, 0));
    }
}
