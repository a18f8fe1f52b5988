//! The embedded store's analytics aggregates (README, "Analytics at any volume"): each
//! brand's figures per day, hour and minute of creation, kept as streams start and finish.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use hosting_domain::domain::analytics::Figures;

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
    days: BTreeMap<i64, Figures>,
    hours: BTreeMap<i64, Figures>,
    minutes: BTreeMap<i64, Figures>,
}

impl Aggregates {
    pub(super) fn add(&mut self, minute: i64, figures: &Figures, add: bool) {
        for (map, unit) in [
            (&mut self.days, minute.div_euclid(24 * 60)),
            (&mut self.hours, minute.div_euclid(60)),
            (&mut self.minutes, minute),
        ] {
            let entry = map.entry(unit).or_default();
            if add {
                entry.add(figures);
            } else {
                entry.subtract(figures);
            }
            if entry.is_empty() {
                map.remove(&unit);
            }
        }
    }

    /// The figures of every minute from `minute` on.
    pub(super) fn since(&self, minute: i64) -> Figures {
        let hour = ceil_div(minute, 60);
        let day = ceil_div(hour, 24);
        let mut figures = Figures::default();
        for (_, f) in self
            .minutes
            .range(minute..hour * 60)
            .chain(self.hours.range(hour..day * 24))
            .chain(self.days.range(day..))
        {
            figures.add(f);
        }
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
        for (i, minute) in minutes.iter().enumerate() {
            let figures = Figures {
                streams: 1,
                viewers: i as i64,
                ..Figures::default()
            };
            aggregates.add(*minute, &figures, true);
        }
        // One taken out again.
        aggregates.add(
            minutes[10],
            &Figures {
                streams: 1,
                viewers: 10,
                ..Figures::default()
            },
            false,
        );
        for start in (minutes[0] - 5..minutes[399] + 5).step_by(13) {
            let expected: Vec<i64> = minutes
                .iter()
                .enumerate()
                .filter(|(i, m)| **m >= start && *i != 10)
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
