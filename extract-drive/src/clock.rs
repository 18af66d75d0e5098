//! Times as the journal and the APIs write them: RFC 3339 in UTC, to the
//! second. Written here once, for the journal's rows and the Message
//! Batches API's times alike.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, in unix seconds.
pub fn unix_now() -> i64 {
    unix_seconds_of(SystemTime::now())
}

/// `time` in unix seconds (negative before 1970).
pub fn unix_seconds_of(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Unix seconds as a time.
pub fn from_unix_seconds(seconds: i64) -> SystemTime {
    if seconds >= 0 {
        UNIX_EPOCH + Duration::from_secs(seconds as u64)
    } else {
        UNIX_EPOCH - Duration::from_secs(seconds.unsigned_abs())
    }
}

/// An RFC 3339 time (`2026-12-01T10:00:00Z`, with fractions of a second or
/// an offset), in unix seconds; `None` when it is not one.
pub fn unix_seconds(text: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(at, byte)| text.as_bytes()[at] != byte)
        || !matches!(text.as_bytes()[10], b'T' | b't' | b' ')
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let rest = text.get(19..)?;
    let rest = match rest.strip_prefix('.') {
        Some(fraction) => fraction.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => rest,
    };
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hours = rest.get(1..3)?.parse::<i64>().ok()?;
            let minutes = rest.get(4..6)?.parse::<i64>().ok()?;
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (hours * 3600 + minutes * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let of_cycle = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_cycle - 719_468
}

/// Unix seconds as an RFC 3339 time in UTC, to the second.
pub fn rfc3339(seconds: i64) -> String {
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let of_era = z - era * 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * of_year + 2) / 153;
    let day = of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_written_as_rfc_3339_in_utc() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_seconds("2026-12-01T10:00:00.123456Z"), Some(1_796_119_200));
        assert_eq!(unix_seconds("2026-12-01T11:30:00+01:30"), Some(1_796_119_200));
        assert_eq!(rfc3339(1_796_119_200), "2026-12-01T10:00:00Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        for seconds in [0, 951_782_400, 1_796_119_200, 4_102_444_800] {
            assert_eq!(unix_seconds(&rfc3339(seconds)), Some(seconds));
            assert_eq!(unix_seconds_of(from_unix_seconds(seconds)), seconds);
        }
        for not_a_time in
            ["", "2026-12-01", "2026-13-01T10:00:00Z", "2026-12-01T10:00:00", "2026-12-01T10:00:00+0100"]
        {
            assert_eq!(unix_seconds(not_a_time), None, "{not_a_time}");
        }
    }
}
