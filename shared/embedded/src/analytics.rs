//! The embedded store's analytics aggregates (ARCHITECTURE.md, "Analytics at any volume"): each
//! brand's figures per day, hour and minute of creation, kept as streams start and finish.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use hosting_domain::analytics::Figures;

/// The minute of creation analytics aggregates a stream under.
pub(super) fn minute_of(at: DateTime<Utc>) -> i64 {
    at.timestamp().div_euclid(60)
}

/// `value` divided by `by`, rounded up.
fn ceil_div(value: i64, by: i64) -> i64 {
    (value + by - 1).div_euclid(by)
}

/// A brand's analytics aggregates per day, hour and minute of creation (numbered from the
/// epoch), so a window sums at most a day's hours, an hour's minutes and its days.
#[derive(Default)]
pub(super) struct Aggregates {
    days: Level,
    hours: Level,
    minutes: Level,
}

/// One level of the aggregates: figures per unit (day, hour or minute).
#[derive(Default)]
struct Level {
    units: BTreeMap<i64, Figures>,
    /// The earliest and latest units with figures, kept beside the map: a window part that
    /// ends before the first or starts after the last skips the map without reading it. A
    /// brand's aggregates are cold memory on most reads, and a brand that streamed a while ago,
    /// or began within the window, has nothing in its window's first hour or day.
    span: Option<(i64, i64)>,
}

impl Level {
    fn add(&mut self, unit: i64, figures: &Figures, add: bool) {
        let entry = self.units.entry(unit).or_default();
        if add {
            entry.add(figures);
        } else {
            entry.subtract(figures);
        }
        if entry.is_empty() {
            self.units.remove(&unit);
        }
        self.span = self
            .units
            .first_key_value()
            .zip(self.units.last_key_value())
            .map(|((earliest, _), (latest, _))| (*earliest, *latest));
    }

    /// Adds the figures of the units from `from` on, and before `to` when given, to `sum`.
    fn sum_into(&self, from: i64, to: Option<i64>, sum: &mut Figures) {
        let Some((earliest, latest)) = self.span else {
            return;
        };
        if latest < from || to.is_some_and(|to| to <= from.max(earliest)) {
            return;
        }
        let units = match to {
            Some(to) => self.units.range(from..to),
            None => self.units.range(from..),
        };
        for (_, figures) in units {
            sum.add(figures);
        }
    }
}

impl Aggregates {
    pub(super) fn add(&mut self, minute: i64, figures: &Figures, add: bool) {
        self.days.add(minute.div_euclid(24 * 60), figures, add);
        self.hours.add(minute.div_euclid(60), figures, add);
        self.minutes.add(minute, figures, add);
    }

    /// The figures of every minute from `minute` on.
    pub(super) fn since(&self, minute: i64) -> Figures {
        let hour = ceil_div(minute, 60);
        let day = ceil_div(hour, 24);
        let mut figures = Figures::default();
        self.minutes.sum_into(minute, Some(hour * 60), &mut figures);
        self.hours.sum_into(hour, Some(day * 24), &mut figures);
        self.days.sum_into(day, None, &mut figures);
        figures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days, hours and minutes sum to what every minute from any start sums to.
    #[test]
    fn aggregates_since_any_minute_match_the_minutes() {
        let mut aggregates = Aggregates::default();
        let minutes: Vec<i64> = (0..400)
            .map(|i| 29_000_000 + i * 37 + (i % 7) * 300)
            .collect();
        // Added in reverse, so that each level's earliest unit moves back as they come.
        for (i, minute) in minutes.iter().enumerate().rev() {
            let figures = Figures {
                streams: 1,
                viewers: i as i64,
                ..Figures::default()
            };
            aggregates.add(*minute, &figures, true);
        }
        // Three taken out again: the latest and the earliest, which move the levels' spans
        // in, then one in the middle, which leaves them.
        let latest = (0..minutes.len()).max_by_key(|i| minutes[*i]).unwrap();
        let earliest = (0..minutes.len()).min_by_key(|i| minutes[*i]).unwrap();
        let taken_out = [latest, earliest, 10];
        for i in taken_out {
            let figures = Figures {
                streams: 1,
                viewers: i as i64,
                ..Figures::default()
            };
            aggregates.add(minutes[i], &figures, false);
        }
        let starts = (minutes[0] - 5..minutes[latest] + 5)
            .step_by(13)
            .chain(minutes[latest] - 70..minutes[latest] + 2);
        for start in starts {
            let expected: Vec<i64> = minutes
                .iter()
                .enumerate()
                .filter(|(i, m)| **m >= start && !taken_out.contains(i))
                .map(|(i, _)| i as i64)
                .collect();
            let figures = aggregates.since(start);
            assert_eq!(figures.streams, expected.len() as i64, "from {start}");
            assert_eq!(
                figures.viewers,
                expected.iter().sum::<i64>(),
                "from {start}"
            );
        }
    }
}
