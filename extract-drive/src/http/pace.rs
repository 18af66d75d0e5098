//! Requests paced by the provider's rate limits before they bite.
//!
//! A provider meters requests, input tokens and output tokens per minute in
//! buckets that refill continuously, and says where each stands in the
//! headers of every reply (Anthropic's `anthropic-ratelimit-*`, OpenAI's
//! `x-ratelimit-*`). A [`Pacer`] keeps one such bucket per limit, per model,
//! for one client (and its clones): before a request goes out it takes what
//! the request will cost from every bucket, waiting until each can give it;
//! every reply's headers bring the buckets down to what the server says is
//! left. The headers count the whole organisation's use, so separate
//! processes pace each other without sharing any state.
//!
//! What a request costs:
//! - one request;
//! - its input tokens, estimated from the body's bytes at a rate calibrated
//!   by the usage replies report (input plus cache writes: cache reads do
//!   not count toward the limit), and corrected once the reply says;
//! - its `max_tokens` of output, reserved until the reply says how many it
//!   used.
//!
//! A request larger than a bucket goes when that bucket is full, so a
//! limit smaller than one request slows a run instead of stopping it.
//!
//! Pacing is a setting of a bulk run (`Bulk::pace`, on by default), which
//! reaches the transport as a task-local around each of its workers
//! ([`crate::pace`]): a model called outside a run sends at once, as before.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;

use crate::pace::{LIMITS, Limit, Limits};
use crate::vocabulary::usage::Usage;

/// What one request asks of the limits, as its client knows it.
#[derive(Debug, Clone, Copy)]
pub struct Demand<'a> {
    /// The model the request is for: each model has limits of its own.
    pub model: &'a str,
    /// The most output tokens the request may produce (its `max_tokens`);
    /// 0 when the request sets none.
    pub max_output_tokens: u64,
}

impl Limit {
    /// The header names of this limit: Anthropic's prefix, then OpenAI's
    /// `(limit, remaining, reset)`.
    fn anthropic(self) -> Option<&'static str> {
        match self {
            Limit::Requests => Some("anthropic-ratelimit-requests"),
            Limit::InputTokens => Some("anthropic-ratelimit-input-tokens"),
            Limit::OutputTokens => Some("anthropic-ratelimit-output-tokens"),
            // Anthropic's `tokens-*` restate the tightest of the two above.
            Limit::Tokens => None,
        }
    }

    fn openai(self) -> Option<&'static str> {
        match self {
            Limit::Requests => Some("requests"),
            Limit::Tokens => Some("tokens"),
            Limit::InputTokens | Limit::OutputTokens => None,
        }
    }
}

/// Where one limit stands, as a reply's headers say.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reading {
    limit: f64,
    remaining: Option<f64>,
    /// When the bucket is full again.
    reset: Option<SystemTime>,
}

/// The readings of every limit a reply's headers state.
fn readings(headers: &HeaderMap, now: SystemTime) -> Vec<(Limit, Reading)> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let number =
        |name: &str| header(name).and_then(|v| v.parse::<f64>().ok()).filter(|n| n.is_finite() && *n >= 0.0);
    let mut found = Vec::new();
    for limit in LIMITS {
        if let Some(prefix) = limit.anthropic()
            && let Some(total) = number(&format!("{prefix}-limit"))
        {
            found.push((
                limit,
                Reading {
                    limit: total,
                    remaining: number(&format!("{prefix}-remaining")),
                    reset: header(&format!("{prefix}-reset")).and_then(rfc3339),
                },
            ));
        } else if let Some(name) = limit.openai()
            && let Some(total) = number(&format!("x-ratelimit-limit-{name}"))
        {
            found.push((
                limit,
                Reading {
                    limit: total,
                    remaining: number(&format!("x-ratelimit-remaining-{name}")),
                    reset: header(&format!("x-ratelimit-reset-{name}"))
                        .and_then(go_duration)
                        .and_then(|after| now.checked_add(after)),
                },
            ));
        }
    }
    found
}

/// An RFC 3339 time (`2026-12-05T12:00:30Z`), as Anthropic states resets.
fn rfc3339(text: &str) -> Option<SystemTime> {
    chrono::DateTime::parse_from_rfc3339(text).ok().map(SystemTime::from)
}

/// A duration as OpenAI states resets: numbers with units, run together
/// (`6m0s`, `1.5s`, `120ms`, `1h2m3s`).
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += value * seconds;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// One limit's bucket: `level` available at `at`, refilling at `limit`
/// per minute up to `limit`. The level goes below zero when a request
/// larger than the bucket is let through.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    limit: f64,
    level: f64,
    at: Instant,
}

/// The share of each limit the pacer keeps in hand: its bucket starts that
/// much below full and stays that much below what the server states, so
/// requests that arrive bunched (the network, a stalled task) or reordered
/// find the server's bucket not yet empty. Only the first burst is smaller:
/// the rate after it is the limit's.
const MARGIN: f64 = 0.05;

impl Bucket {
    fn full(limit: f64, now: Instant) -> Bucket {
        Bucket { limit, level: limit * (1.0 - MARGIN), at: now }
    }

    fn per_second(&self) -> f64 {
        self.limit / 60.0
    }

    fn level_at(&self, now: Instant) -> f64 {
        let refilled = now.saturating_duration_since(self.at).as_secs_f64() * self.per_second();
        (self.level + refilled).min(self.limit)
    }

    /// How long until `amount` can be taken (a request larger than the
    /// bucket waits for a full one).
    fn wait_for(&self, amount: f64, now: Instant) -> Duration {
        let need = amount.min(self.limit);
        let short = need - self.level_at(now);
        if short <= 0.0 || self.limit <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((short / self.per_second()).min(3600.0))
        }
    }

    fn add(&mut self, amount: f64, now: Instant) {
        self.level = self.level_at(now) + amount;
        self.at = now;
    }

    /// Brings the bucket down to what the server says was left when it
    /// admitted a request, less what this process sent after that request
    /// (which the server had not counted yet). Never up: a stale reading
    /// of a slow reply says less than the bucket holds now.
    fn read(&mut self, reading: Reading, sent_since: f64, now: Instant, wall: SystemTime) {
        if reading.limit != self.limit {
            let level = self.level_at(now);
            *self = Bucket { limit: reading.limit, level: level.min(reading.limit), at: now };
        }
        let by_reset = reading.reset.map(|reset| {
            let until_full = reset.duration_since(wall).unwrap_or(Duration::ZERO).as_secs_f64();
            reading.limit - until_full * self.per_second()
        });
        let stated = match (reading.remaining, by_reset) {
            (Some(remaining), Some(by_reset)) => remaining.min(by_reset),
            (Some(remaining), None) => remaining,
            (None, Some(by_reset)) => by_reset,
            (None, None) => return,
        } - sent_since
            - self.limit * MARGIN;
        if stated < self.level_at(now) {
            self.level = stated;
            self.at = now;
        }
    }
}

/// One request sent: when, and what it was charged, limit by limit.
#[derive(Debug, Clone, Copy)]
struct Sent {
    id: u64,
    at: Instant,
    charges: [f64; 4],
}

/// How long a request sent is remembered: longer than any reply takes.
const SENT_MEMORY: Duration = Duration::from_secs(15 * 60);

/// The buckets of one model, and what it sent lately.
#[derive(Debug, Default)]
struct ModelLimits {
    buckets: [Option<Bucket>; 4],
    /// The requests sent lately, oldest first: a reply's headers count
    /// those sent before it, not those sent after.
    sent: VecDeque<Sent>,
    next_id: u64,
    /// Input tokens counted, and request bytes, over the replies seen.
    calibration: (f64, f64),
}

/// Before any reply has calibrated it: a little over one token per three
/// bytes of JSON request, so the first requests are not underestimated.
const FIRST_TOKENS_PER_BYTE: f64 = 0.35;

impl ModelLimits {
    fn tokens_per_byte(&self) -> f64 {
        let (tokens, bytes) = self.calibration;
        if bytes > 0.0 { tokens / bytes } else { FIRST_TOKENS_PER_BYTE }
    }

    fn bucket(&mut self, limit: Limit, set: &Limits, now: Instant) -> Option<&mut Bucket> {
        let slot = &mut self.buckets[limit as usize];
        if slot.is_none() {
            *slot = set.of(limit).map(|per_minute| Bucket::full(per_minute as f64, now));
        }
        slot.as_mut()
    }

    /// Records a request sent now, charged `charges`; its id.
    fn send(&mut self, charges: [f64; 4], now: Instant) -> u64 {
        while self.sent.front().is_some_and(|sent| now.duration_since(sent.at) > SENT_MEMORY) {
            self.sent.pop_front();
        }
        let id = self.next_id;
        self.next_id += 1;
        self.sent.push_back(Sent { id, at: now, charges });
        id
    }

    /// What was charged to `limit` by the requests sent after request `id`.
    fn sent_after(&self, id: u64, limit: Limit) -> f64 {
        self.sent.iter().filter(|sent| sent.id > id).map(|sent| sent.charges[limit as usize]).sum()
    }
}

/// What one request was charged, to be set right by its reply. Dropped
/// unsettled (a connection lost before the reply), the estimate stands:
/// the server may have counted the request.
#[derive(Debug)]
#[must_use = "a reservation is settled with the reply's usage, or refunded"]
pub struct Reservation<'a> {
    pacer: &'a Pacer,
    model: String,
    id: u64,
    bytes: f64,
    charges: [f64; 4],
}

impl Reservation<'_> {
    /// Brings the buckets down to what the reply's headers say is left.
    pub fn read_headers(&self, headers: &HeaderMap) {
        let wall = SystemTime::now();
        let found = readings(headers, wall);
        if found.is_empty() {
            return;
        }
        let now = Instant::now();
        self.pacer.with(&self.model, |model| {
            for (limit, reading) in found {
                let sent_since = model.sent_after(self.id, limit);
                model.buckets[limit as usize]
                    .get_or_insert_with(|| Bucket::full(reading.limit, now))
                    .read(reading, sent_since, now, wall);
            }
        });
    }

    /// Sets the charge right with what the reply used, and calibrates the
    /// estimate of input tokens.
    pub fn settle(self, usage: &Usage) {
        let counted = (usage.input_tokens + usage.cache_write_tokens) as f64;
        let output = usage.output_tokens as f64;
        let input = counted - self.charges[Limit::InputTokens as usize];
        let output = output - self.charges[Limit::OutputTokens as usize];
        self.give_back([0.0, -input, -output, -(input + output)]);
        self.pacer.with(&self.model, |model| {
            model.calibration.0 += counted;
            model.calibration.1 += self.bytes;
        });
    }

    /// Gives the whole charge back: the server answered with an error,
    /// having done nothing.
    pub fn refund(self) {
        self.give_back(self.charges);
        self.pacer.with(&self.model, |model| {
            if let Some(sent) = model.sent.iter_mut().find(|sent| sent.id == self.id) {
                sent.charges = [0.0; 4];
            }
        });
    }

    /// The server refused the request for its rate limits (a 429): its
    /// charge is given back, and every bucket is taken for empty, since
    /// the server's is (arrivals bunched by the network, another process
    /// the headers do not report): requests go again at the refill rate.
    pub fn refused(self) {
        let now = Instant::now();
        self.pacer.with(&self.model, |model| {
            for bucket in model.buckets.iter_mut().flatten() {
                bucket.level = bucket.level_at(now).min(0.0);
                bucket.at = now;
            }
        });
        self.refund();
    }

    fn give_back(&self, amounts: [f64; 4]) {
        let now = Instant::now();
        self.pacer.with(&self.model, |model| {
            for (bucket, amount) in model.buckets.iter_mut().zip(amounts) {
                if let Some(bucket) = bucket {
                    bucket.add(amount, now);
                }
            }
        });
    }
}

/// The buckets of one client, per model; shared by its clones.
#[derive(Debug, Default)]
pub struct Pacer {
    models: Mutex<HashMap<String, ModelLimits>>,
}

impl Pacer {
    /// Waits until every bucket of `demand.model` can take a request of
    /// `bytes` bytes, then takes it.
    pub async fn reserve(&self, demand: Demand<'_>, bytes: usize, limits: &Limits) -> Reservation<'_> {
        loop {
            let wait = self.with(demand.model, |model| {
                let now = Instant::now();
                let input = bytes as f64 * model.tokens_per_byte();
                let output = demand.max_output_tokens as f64;
                let charges = [1.0, input, output, input + output];
                let wait = LIMITS
                    .iter()
                    .zip(charges)
                    .filter_map(|(limit, charge)| {
                        Some(model.bucket(*limit, limits, now)?.wait_for(charge, now))
                    })
                    .max()
                    .unwrap_or(Duration::ZERO);
                if !wait.is_zero() {
                    return Err(wait);
                }
                for (limit, charge) in LIMITS.iter().zip(charges) {
                    if let Some(bucket) = model.bucket(*limit, limits, now) {
                        bucket.add(-charge, now);
                    }
                }
                Ok((model.send(charges, now), charges))
            });
            match wait {
                Ok((id, charges)) => {
                    return Reservation {
                        pacer: self,
                        model: demand.model.to_string(),
                        id,
                        bytes: bytes as f64,
                        charges,
                    };
                }
                Err(wait) => {
                    tracing::debug!(target: "extract", model = demand.model, wait_ms = wait.as_millis() as u64, "paced: waiting for the rate limits");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// `f` over `model`'s limits, under the lock.
    fn with<R>(&self, model: &str, f: impl FnOnce(&mut ModelLimits) -> R) -> R {
        let mut models = self.models.lock().expect("no thread panics holding the pacer");
        match models.get_mut(model) {
            Some(limits) => f(limits),
            None => f(models.entry(model.to_string()).or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_resets_are_durations() {
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(go_duration("120ms"), Some(Duration::from_millis(120)));
        assert_eq!(go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(go_duration("soon"), None);
        assert_eq!(go_duration(""), None);
        assert_eq!(go_duration("5x"), None);
    }

    #[test]
    fn a_bucket_refills_continuously_and_lets_an_oversized_request_go_when_full() {
        let start = Instant::now();
        let bucket = Bucket { limit: 60.0, level: 0.0, at: start };
        // One a second.
        assert_eq!(bucket.wait_for(1.0, start), Duration::from_secs(1));
        assert!((bucket.level_at(start + Duration::from_secs(30)) - 30.0).abs() < 1e-9);
        // Larger than the bucket: waits for it full, no longer.
        assert_eq!(bucket.wait_for(500.0, start), Duration::from_secs(60));
        assert_eq!(bucket.wait_for(500.0, start + Duration::from_secs(60)), Duration::ZERO);
    }

    #[test]
    fn headers_bring_a_bucket_down_never_up() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let mut bucket = Bucket::full(100.0, now);
        assert!((bucket.level_at(now) - 95.0).abs() < 1e-9, "the margin is kept");
        bucket.read(Reading { limit: 100.0, remaining: Some(40.0), reset: None }, 0.0, now, wall);
        assert!((bucket.level_at(now) - 35.0).abs() < 1e-9);
        bucket.read(Reading { limit: 100.0, remaining: Some(90.0), reset: None }, 0.0, now, wall);
        assert!((bucket.level_at(now) - 35.0).abs() < 1e-9);
        // Full again in 45 s at 100 a minute: 25 left, 20 less the margin.
        bucket.read(
            Reading { limit: 100.0, remaining: None, reset: Some(wall + Duration::from_secs(45)) },
            0.0,
            now,
            wall,
        );
        assert!((bucket.level_at(now) - 20.0).abs() < 1e-6, "{}", bucket.level_at(now));
    }

    #[test]
    fn anthropic_and_openai_headers_are_read() {
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-ratelimit-requests-limit", "50".parse().unwrap());
        headers.insert("anthropic-ratelimit-requests-remaining", "49".parse().unwrap());
        headers.insert("anthropic-ratelimit-requests-reset", "2027-01-15T08:00:01Z".parse().unwrap());
        headers.insert("x-ratelimit-limit-tokens", "1000".parse().unwrap());
        headers.insert("x-ratelimit-remaining-tokens", "10".parse().unwrap());
        headers.insert("x-ratelimit-reset-tokens", "59s".parse().unwrap());
        let found = readings(&headers, wall);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, Limit::Requests);
        assert_eq!(found[0].1.remaining, Some(49.0));
        assert_eq!(found[0].1.reset, Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_001)));
        assert_eq!(found[1].0, Limit::Tokens);
        assert_eq!(found[1].1.reset, Some(wall + Duration::from_secs(59)));
    }

    #[tokio::test]
    async fn a_reply_counts_the_requests_sent_before_it_not_those_after() {
        let pacer = Pacer::default();
        let demand = Demand { model: "m", max_output_tokens: 0 };
        let unlimited = Limits::per_minute();
        let first = pacer.reserve(demand, 0, &unlimited).await;
        let second = pacer.reserve(demand, 0, &unlimited).await;
        let third = pacer.reserve(demand, 0, &unlimited).await;
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-ratelimit-requests-limit", "100".parse().unwrap());
        headers.insert("anthropic-ratelimit-requests-remaining", "99".parse().unwrap());
        // The first reply's count knows the first request, not the two
        // after it (and 5 are kept in hand).
        first.read_headers(&headers);
        let level = pacer
            .with("m", |model| model.buckets[Limit::Requests as usize].unwrap().level_at(Instant::now()));
        assert!((92.0..92.1).contains(&level), "{level}");
        // Refused unread: given back, and no longer counted after the first.
        second.refund();
        let level = pacer
            .with("m", |model| model.buckets[Limit::Requests as usize].unwrap().level_at(Instant::now()));
        assert!((93.0..93.1).contains(&level), "{level}");
        drop(third);
    }

    #[tokio::test]
    async fn output_is_reserved_from_max_tokens_and_input_calibrated_by_the_reply() {
        let pacer = Pacer::default();
        let demand = Demand { model: "m", max_output_tokens: 1_000 };
        let limits = Limits::per_minute().output_tokens(2_000).input_tokens(100_000);
        let level = |limit: Limit| {
            pacer.with("m", |model| model.buckets[limit as usize].unwrap().level_at(Instant::now()))
        };
        let first = pacer.reserve(demand, 4_000, &limits).await;
        // 2,000 less the 5% margin, less max_tokens; the input estimated at
        // the first guess of tokens per byte.
        assert!((900.0..901.0).contains(&level(Limit::OutputTokens)), "{}", level(Limit::OutputTokens));
        assert!((93_600.0..93_601.0).contains(&level(Limit::InputTokens)), "{}", level(Limit::InputTokens));
        // The reply used 100 output tokens, and 800 input plus 200 written to the cache.
        first.settle(&Usage::new(800, 100).with_cache(5_000, 200));
        assert!((1_800.0..1_801.0).contains(&level(Limit::OutputTokens)), "{}", level(Limit::OutputTokens));
        assert!((94_000.0..94_001.0).contains(&level(Limit::InputTokens)), "{}", level(Limit::InputTokens));
        // Cache reads do not count: a quarter of a token per byte from now on.
        assert_eq!(pacer.with("m", |model| model.tokens_per_byte()), 0.25);
    }
}
