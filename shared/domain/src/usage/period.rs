//! Billing periods (docs/usage.md, "Periods"): a brand's period runs from its anchor day's
//! midnight to the next month's, in its billing time zone, so a period is 28 to 31 local days
//! and its days 23 to 25 hours around a daylight-saving change.

use chrono::{
    DateTime, Datelike, Months, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc,
};
use chrono_tz::Tz;

/// The anchor day's bounds: every month has days 1 to 28.
pub const ANCHOR_DAYS: std::ops::RangeInclusive<u8> = 1..=28;
/// How long a period stays `closing` after its end when not configured.
pub const DEFAULT_GRACE_SECS: u64 = 3600;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BillingCycleError {
    #[error("time_zone must be an IANA time zone name such as Europe/Berlin")]
    UnknownTimeZone,
    #[error("anchor_day must be an integer from 1 to 28")]
    AnchorDay,
}

/// A brand's billing time zone and anchor day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BillingCycle {
    time_zone: Tz,
    anchor_day: u8,
}

impl Default for BillingCycle {
    fn default() -> Self {
        Self {
            time_zone: Tz::UTC,
            anchor_day: 1,
        }
    }
}

impl BillingCycle {
    pub fn new(time_zone: &str, anchor_day: u8) -> Result<Self, BillingCycleError> {
        let time_zone = time_zone
            .parse::<Tz>()
            .map_err(|_| BillingCycleError::UnknownTimeZone)?;
        if !ANCHOR_DAYS.contains(&anchor_day) {
            return Err(BillingCycleError::AnchorDay);
        }
        Ok(Self {
            time_zone,
            anchor_day,
        })
    }

    /// The brand's own cycle, as its record holds it.
    pub fn of(brand: &crate::account::Brand) -> Result<Self, BillingCycleError> {
        Self::new(&brand.billing_time_zone, brand.billing_anchor_day)
    }

    /// The IANA name, as given.
    pub fn time_zone(&self) -> &'static str {
        self.time_zone.name()
    }

    pub fn anchor_day(&self) -> u8 {
        self.anchor_day
    }

    /// The period `at` falls in: the last anchor day at or before its local date.
    pub fn period_containing(&self, at: DateTime<Utc>) -> Period {
        let local = at.with_timezone(&self.time_zone).date_naive();
        let this_month = local
            .with_day(u32::from(self.anchor_day))
            .expect("every month has days 1 to 28");
        let start = if local >= this_month {
            this_month
        } else {
            this_month - Months::new(1)
        };
        self.period_starting(start)
    }

    /// The period containing the local date (`period=YYYY-MM-DD`).
    pub fn period_of_date(&self, date: NaiveDate) -> Period {
        self.period_containing(self.start_of_day(date))
    }

    /// The period that follows `period`.
    pub fn next(&self, period: &Period) -> Period {
        self.period_starting(period.start_date + Months::new(1))
    }

    /// The period before `period`.
    pub fn previous(&self, period: &Period) -> Period {
        self.period_starting(period.start_date - Months::new(1))
    }

    /// The local day `date` as an instant range `[start, end)`: 23, 24 or 25 hours.
    pub fn day(&self, date: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
        let next = date.succ_opt().expect("dates are far from chrono's end");
        (self.start_of_day(date), self.start_of_day(next))
    }

    /// The local date `at` falls on.
    pub fn date_of(&self, at: DateTime<Utc>) -> NaiveDate {
        at.with_timezone(&self.time_zone).date_naive()
    }

    fn period_starting(&self, start_date: NaiveDate) -> Period {
        let end_date = start_date + Months::new(1);
        Period {
            start_date,
            start: self.start_of_day(start_date),
            end: self.start_of_day(end_date),
        }
    }

    /// A local date's first instant. Where midnight does not exist (a zone that springs
    /// forward at 00:00), the day starts when the clocks jump: midnight read with the offset in
    /// force before the change. Where midnight happens twice, the first.
    fn start_of_day(&self, date: NaiveDate) -> DateTime<Utc> {
        let midnight = date.and_hms_opt(0, 0, 0).expect("00:00:00 is a time");
        match self.time_zone.from_local_datetime(&midnight) {
            chrono::LocalResult::Single(t) => t.with_timezone(&Utc),
            chrono::LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
            chrono::LocalResult::None => self.through_the_gap(midnight),
        }
    }

    fn through_the_gap(&self, local: NaiveDateTime) -> DateTime<Utc> {
        // No zone has two changes within a day, so the offset a day before is the one the
        // change ends.
        let before = local - TimeDelta::days(1);
        let offset = match self.time_zone.from_local_datetime(&before) {
            chrono::LocalResult::Single(t) | chrono::LocalResult::Ambiguous(t, _) => {
                t.offset().fix()
            }
            chrono::LocalResult::None => chrono::FixedOffset::east_opt(0).expect("zero offset"),
        };
        offset
            .from_local_datetime(&local)
            .single()
            .expect("a fixed offset maps every local time once")
            .with_timezone(&Utc)
    }
}

/// One billing period: `[start, end)`, named by its first local date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start_date: NaiveDate,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// A period's state: `open` until its end, `closing` for the grace after it (late reports and
/// read-backs settle), then `closed` and immutable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeriodState {
    Open,
    Closing,
    Closed,
}

impl Period {
    /// `per_` and the first local date, `per_YYYYMMDD`: one period per brand starts on a date.
    pub fn id(&self) -> String {
        format!("per_{}", self.start_date.format("%Y%m%d"))
    }

    /// The date a period id names, when it is one.
    pub fn date_of_id(id: &str) -> Option<NaiveDate> {
        let digits = id.strip_prefix("per_")?;
        if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        NaiveDate::parse_from_str(digits, "%Y%m%d").ok()
    }

    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.start <= at && at < self.end
    }

    pub fn state(&self, now: DateTime<Utc>, grace: std::time::Duration) -> PeriodState {
        let grace = TimeDelta::from_std(grace).unwrap_or(TimeDelta::MAX);
        if now < self.end {
            PeriodState::Open
        } else if now
            < self
                .end
                .checked_add_signed(grace)
                .unwrap_or(DateTime::<Utc>::MAX_UTC)
        {
            PeriodState::Closing
        } else {
            PeriodState::Closed
        }
    }

    /// The local dates the period covers, in order (28 to 31).
    pub fn dates(&self) -> impl Iterator<Item = NaiveDate> {
        let end = self.start_date + Months::new(1);
        self.start_date.iter_days().take_while(move |d| *d < end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn utc_periods_are_calendar_months() {
        let cycle = BillingCycle::default();
        let p = cycle.period_containing(utc("2026-12-04T18:00:00Z"));
        assert_eq!(p.start, utc("2026-12-01T00:00:00Z"));
        assert_eq!(p.end, utc("2027-01-01T00:00:00Z"));
        assert_eq!(p.id(), "per_20261201");
        assert_eq!(p.dates().count(), 31);
        assert_eq!(cycle.next(&p).start, p.end);
        assert_eq!(cycle.previous(&p).end, p.start);
        // The last millisecond is in; the end is the next period's.
        assert!(p.contains(utc("2026-12-31T23:59:59.999Z")));
        assert!(!p.contains(p.end));
        assert_eq!(cycle.period_containing(p.end), cycle.next(&p));
    }

    #[test]
    fn an_anchor_day_starts_each_period_in_the_brand_zone() {
        let cycle = BillingCycle::new("America/New_York", 15).unwrap();
        // 2026-03-15 00:00 in New York is 04:00Z (EDT since March 8).
        let p = cycle.period_containing(utc("2026-03-20T12:00:00Z"));
        assert_eq!(p.start, utc("2026-03-15T04:00:00Z"));
        assert_eq!(p.end, utc("2026-04-15T04:00:00Z"));
        // Before the anchor day: the period that began last month, in standard time.
        let q = cycle.period_containing(utc("2026-03-15T03:59:59.999Z"));
        assert_eq!(q.start, utc("2026-02-15T05:00:00Z"));
        assert_eq!(q.end, p.start);
        // February's period holds the spring-forward: one hour short of 28 days.
        assert_eq!(q.end - q.start, TimeDelta::days(28) - TimeDelta::hours(1));
    }

    #[test]
    fn days_around_a_dst_change_are_23_and_25_hours() {
        let cycle = BillingCycle::new("Europe/Berlin", 1).unwrap();
        let (s, e) = cycle.day(date("2026-03-29"));
        assert_eq!(e - s, TimeDelta::hours(23));
        let (s, e) = cycle.day(date("2026-10-25"));
        assert_eq!(e - s, TimeDelta::hours(25));
        assert_eq!(s, utc("2026-10-24T22:00:00Z"));
        // The days of a period tile it exactly.
        let p = cycle.period_of_date(date("2026-10-10"));
        let mut at = p.start;
        for d in p.dates() {
            let (s, e) = cycle.day(d);
            assert_eq!(s, at);
            at = e;
        }
        assert_eq!(at, p.end);
    }

    #[test]
    fn a_midnight_that_does_not_exist_starts_the_day_when_clocks_jump() {
        // Chile springs forward at 00:00 (to 01:00) on the first Sunday of September.
        let cycle = BillingCycle::new("America/Santiago", 6).unwrap();
        let (s, e) = cycle.day(date("2026-09-06"));
        assert_eq!(s, utc("2026-09-06T04:00:00Z"));
        assert_eq!(e - s, TimeDelta::hours(23));
        let p = cycle.period_of_date(date("2026-09-06"));
        assert_eq!(p.start, s);
        assert_eq!(cycle.date_of(p.start), date("2026-09-06"));
    }

    #[test]
    fn states_move_open_closing_closed() {
        let p = BillingCycle::default().period_containing(utc("2026-11-10T00:00:00Z"));
        let grace = Duration::from_secs(DEFAULT_GRACE_SECS);
        assert_eq!(
            p.state(utc("2026-11-30T23:59:59Z"), grace),
            PeriodState::Open
        );
        assert_eq!(p.state(p.end, grace), PeriodState::Closing);
        assert_eq!(
            p.state(utc("2026-12-01T00:59:59.999Z"), grace),
            PeriodState::Closing
        );
        assert_eq!(
            p.state(utc("2026-12-01T01:00:00Z"), grace),
            PeriodState::Closed
        );
        assert_eq!(p.state(p.end, Duration::ZERO), PeriodState::Closed);
    }

    #[test]
    fn period_ids_read_back_and_refuse_anything_else() {
        assert_eq!(Period::date_of_id("per_20260215"), Some(date("2026-02-15")));
        for bad in [
            "per_20260230",
            "per_2026021",
            "per_2026-02-15",
            "20260215",
            "per_+0260215",
        ] {
            assert_eq!(Period::date_of_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn bad_cycles_are_refused() {
        assert_eq!(
            BillingCycle::new("Mars/Olympus", 1),
            Err(BillingCycleError::UnknownTimeZone)
        );
        assert_eq!(
            BillingCycle::new("UTC", 0),
            Err(BillingCycleError::AnchorDay)
        );
        assert_eq!(
            BillingCycle::new("UTC", 29),
            Err(BillingCycleError::AnchorDay)
        );
        assert_eq!(
            BillingCycle::new("Asia/Tokyo", 28).unwrap().time_zone(),
            "Asia/Tokyo"
        );
    }
}
