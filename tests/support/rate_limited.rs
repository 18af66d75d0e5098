//! A Messages API stand-in on 127.0.0.1 that meters as Anthropic does:
//! requests and input tokens per minute, each in a bucket that refills
//! continuously; a request the buckets cannot take gets a 429 with a
//! `retry-after` of one or two seconds; every reply carries
//! `anthropic-ratelimit-{requests,input-tokens}-{limit,remaining,reset}`
//! (reset as RFC 3339: when the bucket is full again). Its own count of a
//! request's input tokens (a quarter of the body's bytes) is what it
//! meters and what its usage reports; with `cache` on, the input is billed
//! against the prompt cache of `prompt_cache.rs` (cache reads do not count
//! toward the input limit). The output tokens are a quarter of the
//! answer's bytes. Written apart from the client's pacer, which it judges.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::prompt_cache::{CacheUsage, PromptCache};
use super::server::read_request;

/// What the stand-in meters, and how it answers.
#[derive(Clone)]
pub struct Metering {
    pub requests_per_minute: f64,
    pub input_tokens_per_minute: f64,
    /// How long an answer takes.
    pub latency: Duration,
    /// Whether replies state the limits in headers (a server that does not:
    /// vLLM, Ollama).
    pub headers: bool,
    /// Whether input is billed against a prompt cache.
    pub cache: bool,
    /// The tool input for a request's body.
    pub answer: Arc<dyn Fn(&Value) -> Value + Send + Sync>,
}

impl Metering {
    /// No limit, no latency, no headers, no cache: a plain Messages API
    /// that answers each request with `answer`'s tool input.
    pub fn unmetered(answer: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Metering {
        Metering {
            requests_per_minute: 1e12,
            input_tokens_per_minute: 1e12,
            latency: Duration::ZERO,
            headers: false,
            cache: false,
            answer: Arc::new(answer),
        }
    }

    /// The same, billing input against a prompt cache.
    pub fn with_cache(mut self) -> Metering {
        self.cache = true;
        self
    }
}

/// What the stand-in saw.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub answered: usize,
    pub refused: usize,
    /// When each answered request was admitted, from the server's start.
    pub admitted_at: Vec<Duration>,
}

/// A continuous bucket: `level` at `at`, refilling at `limit` per minute.
struct Bucket {
    limit: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn level(&self, now: Instant) -> f64 {
        (self.level + now.duration_since(self.at).as_secs_f64() * self.limit / 60.0).min(self.limit)
    }

    fn take(&mut self, amount: f64, now: Instant) {
        self.level = self.level(now) - amount;
        self.at = now;
    }

    /// `limit`, `remaining` and `reset` headers under `prefix`.
    fn headers(&self, prefix: &str, now: Instant, wall: SystemTime) -> String {
        let level = self.level(now).max(0.0);
        let until_full = Duration::from_secs_f64((self.limit - level) / (self.limit / 60.0));
        let reset = chrono::DateTime::<chrono::Utc>::from(wall + until_full)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        format!(
            "{prefix}-limit: {}\r\n{prefix}-remaining: {}\r\n{prefix}-reset: {reset}\r\n",
            self.limit as u64,
            level.floor() as u64
        )
    }
}

struct Meter {
    requests: Bucket,
    input: Bucket,
    started: Instant,
    tally: Tally,
    cache: PromptCache,
}

/// The stand-in, serving until the test ends.
pub struct RateLimited {
    pub base_url: String,
    meter: Arc<Mutex<Meter>>,
}

impl RateLimited {
    pub async fn start(metering: Metering) -> RateLimited {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let now = Instant::now();
        let meter = Arc::new(Mutex::new(Meter {
            requests: Bucket {
                limit: metering.requests_per_minute,
                level: metering.requests_per_minute,
                at: now,
            },
            input: Bucket {
                limit: metering.input_tokens_per_minute,
                level: metering.input_tokens_per_minute,
                at: now,
            },
            started: now,
            tally: Tally::default(),
            cache: PromptCache::default(),
        }));
        let shared = meter.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (meter, metering) = (shared.clone(), metering.clone());
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut stream).await else { return };
                    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                    let (admitted, limit_headers, usage) = {
                        let mut meter = meter.lock().unwrap();
                        let usage = if metering.cache {
                            meter.cache.bill(&body)
                        } else {
                            CacheUsage { uncached: request.body.len() as u64 / 4, ..CacheUsage::default() }
                        };
                        // Cache reads do not count toward the input limit.
                        let input_tokens = (usage.uncached + usage.written) as f64;
                        let now = Instant::now();
                        let fits = meter.requests.level(now) >= 1.0 && meter.input.level(now) >= input_tokens;
                        if fits {
                            meter.requests.take(1.0, now);
                            meter.input.take(input_tokens, now);
                            let at = now.duration_since(meter.started);
                            meter.tally.answered += 1;
                            meter.tally.admitted_at.push(at);
                        } else {
                            meter.tally.refused += 1;
                        }
                        let wall = SystemTime::now();
                        let headers = if metering.headers {
                            meter.requests.headers("anthropic-ratelimit-requests", now, wall)
                                + &meter.input.headers("anthropic-ratelimit-input-tokens", now, wall)
                        } else {
                            String::new()
                        };
                        (fits, headers, usage)
                    };
                    let (status, extra, reply) = if admitted {
                        tokio::time::sleep(metering.latency).await;
                        let tool = body["tools"][0]["name"].as_str().unwrap_or("tool").to_string();
                        let input = (metering.answer)(&body);
                        let reply = json!({
                            "id": "msg_limited", "type": "message", "role": "assistant",
                            "model": body["model"],
                            "content": [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}],
                            "stop_reason": "tool_use",
                            "usage": {"input_tokens": usage.uncached, "output_tokens": input.to_string().len() / 4,
                                      "cache_read_input_tokens": usage.read,
                                      "cache_creation_input_tokens": usage.written},
                        });
                        ("200 OK", String::new(), reply)
                    } else {
                        let wait = 1 + fastrand_bit();
                        let reply = json!({"type": "error", "error": {"type": "rate_limit_error",
                            "message": "This request would exceed the rate limit"}});
                        ("429 Too Many Requests", format!("retry-after: {wait}\r\n"), reply)
                    };
                    let text = reply.to_string();
                    let head = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{limit_headers}{extra}content-length: {}\r\nconnection: close\r\n\r\n",
                        text.len()
                    );
                    let _ = stream.write_all(head.as_bytes()).await;
                    let _ = stream.write_all(text.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        RateLimited { base_url, meter }
    }

    /// What it saw so far.
    pub fn tally(&self) -> Tally {
        self.meter.lock().unwrap().tally.clone()
    }
}

/// 0 or 1, from the clock's nanoseconds: a retry-after of one or two seconds.
fn fastrand_bit() -> u64 {
    u64::from(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().subsec_nanos() % 2)
}

/// The right invoice (`tests/support/invoices.rs`'s type) for the document
/// in a request: `amounts 4 1 2 total 7`.
pub fn invoice_answer(body: &Value) -> Value {
    let text = body.to_string();
    let document = &text[text.find("amounts ").expect("a document in the request")..];
    let words: Vec<&str> = document[..document.find(['"', '\\']).unwrap()].split_whitespace().collect();
    let total_at = words.iter().position(|w| *w == "total").unwrap();
    let items: Vec<Value> =
        words[1..total_at].iter().map(|w| json!({"amount": w.parse::<f64>().unwrap()})).collect();
    json!({"line_items": items, "total": words[total_at + 1].parse::<f64>().unwrap()})
}
