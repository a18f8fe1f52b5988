//! Time as a port, so timers, expiry and rate windows can be driven by tests without waiting.

use std::fmt;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().expect("clock lock");
        *now += by;
    }

    pub fn set(&self, to: DateTime<Utc>) {
        *self.now.lock().expect("clock lock") = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().expect("clock lock")
    }
}

/// RFC 3339 UTC with milliseconds, the one timestamp format of the API.
pub fn format_timestamp(at: DateTime<Utc>) -> String {
    Rfc3339Millis(at).to_string()
}

/// Displays as [`format_timestamp`] writes, without allocating: every answer carries a few
/// timestamps ([`timestamp`] serializes them).
pub struct Rfc3339Millis(pub DateTime<Utc>);

impl Rfc3339Millis {
    /// The text, written without a formatter; `None` for a leap second (nanoseconds past one
    /// second) and years outside 0 to 9999, which are left to chrono.
    fn text(&self) -> Option<[u8; 24]> {
        let nanos = self.0.timestamp_subsec_nanos();
        if nanos >= 1_000_000_000 {
            return None;
        }
        let seconds = utc_seconds_text(self.0.timestamp())?;
        let mut text = [0u8; 24];
        text[..19].copy_from_slice(&seconds);
        text[19] = b'.';
        write_digits(&mut text[20..23], nanos / 1_000_000);
        text[23] = b'Z';
        Some(text)
    }

    /// Writes the text as a string: serializers then skip the formatting machinery that
    /// `collect_str` goes through.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        match self.text() {
            Some(text) => s.serialize_str(std::str::from_utf8(&text).map_err(S::Error::custom)?),
            None => s.collect_str(self),
        }
    }
}

impl fmt::Display for Rfc3339Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Some(text) => f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?),
            None => f.write_str(&self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time in UTC, for the years 0 to 9999 (`None` outside).
pub fn utc_seconds_text(unix_seconds: i64) -> Option<[u8; 19]> {
    let (days, second_of_day) = (
        unix_seconds.div_euclid(86_400),
        unix_seconds.rem_euclid(86_400),
    );
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let mut text = *b"0000-00-00T00:00:00";
    write_digits(&mut text[0..4], year as u32);
    write_digits(&mut text[5..7], month);
    write_digits(&mut text[8..10], day);
    let second_of_day = second_of_day as u32;
    write_digits(&mut text[11..13], second_of_day / 3600);
    write_digits(&mut text[14..16], second_of_day / 60 % 60);
    write_digits(&mut text[17..19], second_of_day % 60);
    Some(text)
}

/// `value`'s last `into.len()` decimal digits, zero-padded.
pub fn write_digits(into: &mut [u8], mut value: u32) {
    for digit in into.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The proleptic Gregorian date of a count of days since 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Serde helpers that write timestamps in [`format_timestamp`]'s format.
pub mod timestamp {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        super::Rfc3339Millis(*at).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        DateTime::<Utc>::deserialize(d)
    }

    pub mod option {
        use chrono::{DateTime, Utc};
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(
            at: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => super::super::Rfc3339Millis(*at).serialize(s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            Option::<DateTime<Utc>>::deserialize(d)
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

    use super::{Rfc3339Millis, format_timestamp};

    fn chrono_text(at: DateTime<Utc>) -> String {
        at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    #[test]
    fn timestamps_are_written_as_chrono_writes_them() {
        let edges = [
            Utc.with_ymd_and_hms(1970, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(2000, 2, 29, 12, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(2100, 2, 28, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(2100, 3, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(0, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
        ];
        for at in edges {
            assert_eq!(format_timestamp(at), chrono_text(at), "{at:?}");
        }
        // Every few hours across five centuries, with the milliseconds moving too.
        let mut seconds = Utc
            .with_ymd_and_hms(1800, 1, 1, 0, 0, 0)
            .unwrap()
            .timestamp();
        let end = Utc
            .with_ymd_and_hms(2300, 1, 1, 0, 0, 0)
            .unwrap()
            .timestamp();
        let mut nanos = 0u32;
        while seconds < end {
            let at = DateTime::from_timestamp(seconds, nanos).unwrap();
            assert_eq!(format_timestamp(at), chrono_text(at), "{at:?}");
            seconds += 12_345;
            nanos = (nanos + 7_654_321) % 1_000_000_000;
        }
    }

    #[test]
    fn years_outside_four_digits_and_leap_seconds_are_left_to_chrono() {
        let far = Utc.with_ymd_and_hms(12_000, 6, 1, 0, 0, 0).unwrap();
        let before_zero = Utc.with_ymd_and_hms(-5, 6, 1, 0, 0, 0).unwrap();
        let leap = DateTime::from_timestamp(1_483_228_799, 1_500_000_000).unwrap();
        for at in [far, before_zero, leap] {
            assert_eq!(Rfc3339Millis(at).to_string(), chrono_text(at));
        }
    }

    #[test]
    fn serialized_timestamps_use_the_same_text() {
        #[derive(serde::Serialize)]
        struct Times {
            #[serde(with = "super::timestamp")]
            at: DateTime<Utc>,
            #[serde(with = "super::timestamp::option")]
            maybe: Option<DateTime<Utc>>,
        }
        let at = DateTime::from_timestamp(1_795_000_000, 123_456_789).unwrap();
        let json = serde_json::to_string(&Times {
            at,
            maybe: Some(at),
        })
        .unwrap();
        let text = chrono_text(at);
        assert_eq!(json, format!(r#"{{"at":"{text}","maybe":"{text}"}}"#));
    }
}
