//! The transport retry policy, as pure functions: given what came back (a
//! status and headers, or a failure to get any), whether to try again and how
//! long to wait. It follows the official SDKs:
//!
//! - a server's `x-should-retry: true|false` is obeyed;
//! - otherwise 408, 409, 429 and every 5xx (including 529 `overloaded_error`)
//!   are retried, and so are connection failures and timeouts;
//! - the wait is the server's `retry-after-ms`, else its `retry-after`
//!   (seconds or an HTTP date), when that is more than 0 and at most 60 s;
//!   otherwise an exponential backoff (0.5 s doubling to at most 8 s by
//!   default) with up to 25 % jitter taken off; no wait is longer than
//!   [`MAX_WAIT`], whatever the backoff settings.
//!
//! One exception the SDKs do not make: a 429 whose error code says a spend
//! limit or quota is exhausted ([`UNRETRYABLE_CODES`]) is never retried,
//! because access only resumes when the month turns or the plan changes.

use std::time::{Duration, SystemTime};

/// The longest server-requested wait that is trusted; longer ones fall back
/// to the backoff, as the official SDKs do.
pub const MAX_TRUSTED_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The error codes of a 429 that waiting cannot fix: Anthropic's exhausted
/// spend limit, OpenAI's exhausted quota.
pub const UNRETRYABLE_CODES: &[&str] = &["enforced_spend_limit_reached", "insufficient_quota"];

/// Whether a response with an error `status` should be retried.
///
/// `should_retry_header` is the value of `x-should-retry`, when sent;
/// `error_code` is the error code the body states, when it states one.
pub fn should_retry_status(status: u16, should_retry_header: Option<&str>, error_code: Option<&str>) -> bool {
    if status == 429 && error_code.is_some_and(|code| UNRETRYABLE_CODES.contains(&code)) {
        return false;
    }
    match should_retry_header.map(str::trim) {
        Some(v) if v.eq_ignore_ascii_case("true") => return true,
        Some(v) if v.eq_ignore_ascii_case("false") => return false,
        _ => {}
    }
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// The wait the server asked for, from `retry-after-ms` (milliseconds) or
/// else `retry-after` (seconds, possibly fractional, or an HTTP date measured
/// from `now`). `None` when neither header is usable; a date in the past
/// gives `Some(Duration::ZERO)`.
pub fn server_delay(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && let Some(delay) = seconds(ms / 1000.0)
    {
        return Some(delay);
    }
    let value = retry_after?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A finite, non-negative number of seconds as a `Duration`.
fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// The exponential backoff before retry number `retry` (0 for the first
/// retry): `initial * 2^retry`, capped at `max`, less `jitter * 25 %`
/// (`jitter` in `0.0..1.0`).
pub fn backoff(retry: u32, initial: Duration, max: Duration, jitter: f64) -> Duration {
    let factor = 2f64.powi(retry.min(62) as i32);
    let base = initial.as_secs_f64() * factor;
    let capped = base.min(max.as_secs_f64());
    let jitter = jitter.clamp(0.0, 1.0);
    // Absurd settings (`Duration::MAX`) saturate instead of panicking.
    Duration::try_from_secs_f64(capped * (1.0 - 0.25 * jitter)).unwrap_or(max)
}

/// The longest any one wait may be, whatever the backoff settings say: a
/// wait is added to the clock (`Instant + Duration` panics past its end)
/// and it shares a pause with every clone of a client.
pub const MAX_WAIT: Duration = Duration::from_secs(15 * 60);

/// How long to wait before retry number `retry`: the server's delay when it is
/// more than zero and at most [`MAX_TRUSTED_RETRY_AFTER`], else the backoff;
/// never more than [`MAX_WAIT`].
pub fn delay(
    retry: u32,
    server: Option<Duration>,
    initial: Duration,
    max: Duration,
    jitter: f64,
) -> Duration {
    let wait = match server {
        Some(d) if !d.is_zero() && d <= MAX_TRUSTED_RETRY_AFTER => d,
        _ => backoff(retry, initial, max, jitter),
    };
    wait.min(MAX_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_backoff_settings_saturate_instead_of_panicking() {
        assert_eq!(backoff(0, Duration::MAX, Duration::MAX, 0.0), Duration::MAX);
        assert_eq!(backoff(62, Duration::from_secs(10), Duration::MAX, 0.0), Duration::MAX);
        // A wait is added to the clock: it is capped, and a huge retry-after is not trusted.
        assert_eq!(delay(0, None, Duration::MAX, Duration::MAX, 0.0), MAX_WAIT);
        let forever = server_delay(None, Some("18446744073709551615"), SystemTime::now());
        assert!(
            std::time::Instant::now()
                .checked_add(delay(0, forever, Duration::MAX, Duration::MAX, 0.0))
                .is_some()
        );
    }

    const INITIAL: Duration = Duration::from_millis(500);
    const MAX: Duration = Duration::from_secs(8);

    #[test]
    fn retryable_statuses_follow_the_sdks() {
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(should_retry_status(status, None, None), "{status} should be retried");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!should_retry_status(status, None, None), "{status} should not be retried");
        }
    }

    #[test]
    fn x_should_retry_overrides_the_status() {
        assert!(!should_retry_status(500, Some("false"), None));
        assert!(!should_retry_status(529, Some("False"), None));
        assert!(should_retry_status(400, Some("true"), None));
        // Anything else is ignored and the status decides.
        assert!(should_retry_status(503, Some("maybe"), None));
        assert!(!should_retry_status(404, Some(""), None));
    }

    #[test]
    fn the_spend_limit_429_is_never_retried() {
        assert!(!should_retry_status(429, None, Some(UNRETRYABLE_CODES[0])));
        assert!(!should_retry_status(429, Some("true"), Some(UNRETRYABLE_CODES[0])));
        assert!(should_retry_status(429, None, Some("rate_limited")));
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let now = SystemTime::now();
        assert_eq!(server_delay(Some("1500"), Some("7"), now), Some(Duration::from_millis(1500)));
        assert_eq!(server_delay(Some("2.5"), None, now), Some(Duration::from_micros(2500)));
        // An unusable retry-after-ms falls through to retry-after.
        assert_eq!(server_delay(Some("soon"), Some("3"), now), Some(Duration::from_secs(3)));
    }

    #[test]
    fn retry_after_accepts_seconds_and_fractions() {
        let now = SystemTime::now();
        assert_eq!(server_delay(None, Some("1"), now), Some(Duration::from_secs(1)));
        assert_eq!(server_delay(None, Some(" 0.25 "), now), Some(Duration::from_millis(250)));
        assert_eq!(server_delay(None, Some("-4"), now), None);
        assert_eq!(server_delay(None, Some("NaN"), now), None);
        assert_eq!(server_delay(None, Some("tomorrow"), now), None);
        assert_eq!(server_delay(None, None, now), None);
    }

    #[test]
    fn retry_after_accepts_an_http_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            server_delay(None, Some("Sun, 06 Nov 1994 08:49:47 GMT"), now),
            Some(Duration::from_secs(10))
        );
        // The obsolete RFC 850 and asctime forms are HTTP dates too.
        assert_eq!(
            server_delay(None, Some("Sunday, 06-Nov-94 08:50:37 GMT"), now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(server_delay(None, Some("Sun Nov  6 08:49:39 1994"), now), Some(Duration::from_secs(2)));
        // A date already past asks for no wait.
        assert_eq!(server_delay(None, Some("Sun, 06 Nov 1994 08:00:00 GMT"), now), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_doubles_from_half_a_second_to_eight() {
        let expected = [500, 1000, 2000, 4000, 8000, 8000, 8000];
        for (retry, ms) in expected.into_iter().enumerate() {
            assert_eq!(backoff(retry as u32, INITIAL, MAX, 0.0), Duration::from_millis(ms), "retry {retry}");
        }
        assert_eq!(backoff(u32::MAX, INITIAL, MAX, 0.0), MAX);
    }

    #[test]
    fn jitter_takes_off_at_most_a_quarter() {
        assert_eq!(backoff(0, INITIAL, MAX, 1.0), Duration::from_millis(375));
        assert_eq!(backoff(3, INITIAL, MAX, 0.5), Duration::from_millis(3500));
        for _ in 0..100 {
            let d = backoff(1, INITIAL, MAX, fastrand::f64());
            assert!(d > Duration::from_millis(750) && d <= Duration::from_millis(1000), "{d:?}");
        }
    }

    #[test]
    fn a_server_delay_is_trusted_up_to_sixty_seconds() {
        let sixty = Duration::from_secs(60);
        assert_eq!(delay(0, Some(Duration::from_secs(1)), INITIAL, MAX, 0.0), Duration::from_secs(1));
        assert_eq!(delay(0, Some(sixty), INITIAL, MAX, 0.0), sixty);
        // Over 60 s is not trusted: the backoff is used instead.
        assert_eq!(delay(2, Some(Duration::from_secs(61)), INITIAL, MAX, 0.0), Duration::from_secs(2));
        assert_eq!(delay(0, Some(Duration::from_secs(3600)), INITIAL, MAX, 0.0), INITIAL);
        // Zero (or a date in the past) is not a usable wait either.
        assert_eq!(delay(1, Some(Duration::ZERO), INITIAL, MAX, 0.0), Duration::from_secs(1));
        assert_eq!(delay(1, None, INITIAL, MAX, 0.0), Duration::from_secs(1));
    }

    #[test]
    fn an_http_date_over_sixty_seconds_away_falls_back_to_backoff() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let server = server_delay(None, Some("Sun, 06 Nov 1994 09:49:37 GMT"), now);
        assert_eq!(server, Some(Duration::from_secs(3600)));
        assert_eq!(delay(0, server, INITIAL, MAX, 0.0), INITIAL);
    }
}
