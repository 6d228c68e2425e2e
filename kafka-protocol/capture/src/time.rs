//! Capture timestamps, and their RFC 3339 form.

use std::fmt;

/// A packet's capture time: nanoseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The time `nanos` nanoseconds after the Unix epoch.
    pub const fn from_nanos(nanos: i64) -> Self {
        Timestamp(nanos)
    }

    /// The time `seconds` and `nanos` nanoseconds after the Unix epoch,
    /// saturating far outside the years 1677 to 2262.
    pub fn from_parts(seconds: i64, nanos: i64) -> Self {
        Timestamp(seconds.saturating_mul(1_000_000_000).saturating_add(nanos))
    }

    /// Nanoseconds since the Unix epoch.
    pub const fn nanos(self) -> i64 {
        self.0
    }

    /// Microseconds from `earlier` to this time (negative when it is later).
    pub fn micros_since(self, earlier: Timestamp) -> i64 {
        self.0.saturating_sub(earlier.0) / 1000
    }
}

/// RFC 3339 in UTC with microseconds: `2026-12-07T01:02:03.456789Z`.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let micros = self.0.div_euclid(1000);
        let seconds = micros.div_euclid(1_000_000);
        let fraction = micros.rem_euclid(1_000_000);
        let days = seconds.div_euclid(86_400);
        let of_day = seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{fraction:06}Z",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60
        )
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01
/// (H. Hinnant's days-to-civil algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_with_microseconds() {
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000000Z");
        let t = Timestamp::from_parts(1_796_605_323, 456_789_123);
        assert_eq!(t.to_string(), "2026-12-07T01:02:03.456789Z");
        assert_eq!(
            Timestamp::from_parts(951_782_400, 0).to_string(),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(Timestamp(-1000).to_string(), "1969-12-31T23:59:59.999999Z");
    }
}
