//! One HTTP exchange with a model API and its transport retries, shared by
//! every backend: the endpoint (with any credentials in its URL masked for
//! messages), the headers (secret ones never shown), the retry loop of
//! [`retry`], and a cap on the response body.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use tracing::{debug, warn};

use super::pace::{Demand, Pacer, Reservation};
use super::retry;
use crate::vocabulary::text::shorten;
use crate::{Error, Usage};

/// The largest response body a client reads: 16 MiB. A model reply is a few
/// kilobytes to a few hundred; a body past the cap is an
/// [`Error::InvalidResponse`] naming the limit, and the rest is never read.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// How requests are timed and retried; each backend's builder fills it in.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How long one request may take, connecting to the end of the body.
    pub timeout: Duration,
    /// How many times a failed request is retried.
    pub retries: u32,
    /// The first backoff when the server gives no usable `retry-after`.
    pub backoff_initial: Duration,
    /// The longest backoff.
    pub backoff_max: Duration,
    /// The largest response body read.
    pub body_limit: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeout: Duration::from_secs(600),
            retries: 2,
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }
}

/// An error body, in the terms every API shares.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The API's error type (`invalid_request_error`), or `http_error` for a
    /// body that is not the API's error shape.
    pub error_type: String,
    /// The API's message, or a short prefix of the body.
    pub message: String,
    /// A finer code the body states (`enforced_spend_limit_reached`), if any.
    pub error_code: Option<String>,
    /// The request id the body states, if any.
    pub request_id: Option<String>,
    /// The request field the error is about (`tool_choice`), when the body
    /// names one (the Chat Completions API's `param`).
    pub param: Option<String>,
}

impl ApiError {
    /// The error for a body that is not the API's error shape: its status and
    /// the first characters of the body.
    pub fn unparsed(status: u16, body: &[u8]) -> ApiError {
        ApiError {
            error_type: "http_error".into(),
            message: if body.is_empty() {
                format!("HTTP {status} with an empty body")
            } else {
                format!("HTTP {status}: {}", body_prefix(body))
            },
            error_code: None,
            request_id: None,
            param: None,
        }
    }
}

/// The first 200 characters of a body, for messages.
pub fn body_prefix(body: &[u8]) -> String {
    shorten(&String::from_utf8_lossy(&body[..body.len().min(4096)]), 200)
}

/// Why one exchange failed, before a backend turns it into an [`Error`].
#[derive(Debug)]
pub enum Failure {
    /// The API answered with an error status.
    Api {
        /// HTTP status.
        status: u16,
        /// The API's error body.
        error: Box<ApiError>,
        /// The request id header, when sent.
        request_id: Option<String>,
    },
    /// No usable answer came: connection, timeout, a body cut short.
    Transport(String),
    /// No connection was made, so the server cannot have acted on the request.
    Unsent(String),
    /// The answer was larger than the body limit.
    TooLarge(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Api { status, error, .. } => {
                write!(f, "HTTP {status} {}: {}", error.error_type, error.message)
            }
            Failure::Transport(message) | Failure::Unsent(message) | Failure::TooLarge(message) => {
                f.write_str(message)
            }
        }
    }
}

impl From<Failure> for Error {
    fn from(failure: Failure) -> Error {
        match failure {
            Failure::Api { status, error, request_id } => {
                Error::api(status, error.error_type, error.message, request_id.or(error.request_id))
            }
            Failure::Transport(message) | Failure::Unsent(message) => Error::transport(message),
            Failure::TooLarge(message) => Error::invalid_response(message),
        }
    }
}

/// A URL with any user name and password in it replaced by `***`, for
/// messages, traces and accessors. A text that is not a URL is shown only
/// up to an `@`, so credentials in it stay out too.
pub fn mask_credentials(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("***");
            let _ = parsed.set_password(None);
            let shown = parsed.to_string();
            // `Url` adds a `/` to a bare host; keep the caller's spelling.
            if url.ends_with('/') { shown } else { shown.trim_end_matches('/').to_string() }
        }
        // `user:pass@host` without a scheme parses as scheme `user`: no host to hold credentials.
        Ok(parsed) if parsed.has_host() || !url.contains('@') => url.to_string(),
        _ => match url.rsplit_once('@') {
            Some((_, host)) => format!("***@{host}"),
            None => url.to_string(),
        },
    }
}

/// An error status as the retry loop weighs it.
struct ErrorStatus {
    failure: Failure,
    status: u16,
    /// How long the server asks to wait (`retry-after-ms`, `retry-after`).
    server_delay: Option<Duration>,
    /// Whether the status may be retried at all.
    retryable: bool,
}

/// How the retry loop weighs a failure without a status: a body too large
/// or a handler that stopped ends the exchange (`Err`); no connection may
/// always be retried; anything else only when the request may be repeated.
fn unanswered(failure: Failure, repeat: Repeat) -> Result<(Failure, Option<Duration>, bool), Failure> {
    match failure {
        Failure::TooLarge(_) => Err(failure),
        Failure::Unsent(_) => Ok((failure, None, true)),
        failure => Ok((failure, None, repeat == Repeat::Always)),
    }
}

/// Over how long the tasks a pause held resume.
const RESUME_SPREAD: Duration = Duration::from_secs(1);

/// The longest a streamed body may take in all (its reads still time out
/// one by one at the client's timeout).
const STREAM_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// When an exchange may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// After any retryable failure.
    Always,
    /// Only when the server cannot have acted on it (no connection was
    /// made, or it answered 429 or 529): for a request that must not take
    /// effect twice, such as creating a batch. Never after a timeout, a
    /// dropped connection or another 5xx.
    WhenUnsent,
}

/// What an exchange does with a success response.
enum Read<'a> {
    /// Reads the whole body (up to the body limit).
    Whole,
    /// Hands each line to the callback as it arrives.
    Lines(&'a mut LineReader<'a>),
}

/// What reads a body line by line, as it arrives; its `Err` ends the read
/// as a body cut short does (retried when the exchange may be repeated).
pub type LineReader<'a> = dyn FnMut(BodyLine<'_>) -> Result<(), Failure> + Send + 'a;

/// What a body read line by line hands its reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLine<'a> {
    /// A success response starts: the first, or the request sent again
    /// after a body was cut short (what came before is void).
    Start,
    /// One line, without its `\n`.
    Line(&'a [u8]),
    /// The body ended (a reader that expected more says so with its `Err`).
    End,
}

/// The HTTP side of a backend: where requests go, what headers they carry,
/// and how failures are retried. Clones share one connection pool.
#[derive(Clone)]
pub struct Transport {
    http: reqwest::Client,
    service: &'static str,
    base_url: String,
    shown_base: String,
    endpoint: String,
    shown_endpoint: String,
    headers: HeaderMap,
    settings: Settings,
    /// Until when every request through this transport (and its clones)
    /// waits: a 429 or 529 slows every task of a bulk run, not only the one
    /// that saw it.
    paused_until: Arc<Mutex<Option<Instant>>>,
    /// The rate limits' buckets, per model, that a paced run's requests
    /// wait on (shared by the clones).
    pacer: Arc<Pacer>,
}

/// A model's reply body, and what its request was charged against the rate
/// limits: settle it with the usage the body states.
#[must_use = "settle the answer with the reply's usage"]
pub struct Answer<'a> {
    /// The success body.
    pub body: Vec<u8>,
    reservation: Option<Reservation<'a>>,
}

impl Answer<'_> {
    /// Sets the rate limits' charge right with the usage the reply states.
    pub fn settle(self, usage: &Usage) {
        if let Some(reservation) = self.reservation {
            reservation.settle(usage);
        }
    }
}

impl Transport {
    /// A transport posting to `base_url` + `path` for `service` (named in
    /// messages: "the {service} did not answer"). `base_url` must be `http(s)://`; its
    /// trailing `/` is dropped. Mark secret `headers` sensitive.
    pub fn new(
        service: &'static str,
        base_url: &str,
        path: &str,
        headers: HeaderMap,
        settings: Settings,
    ) -> Result<Transport, Error> {
        let base_url = base_url.trim().trim_end_matches('/');
        let shown_base = mask_credentials(base_url);
        let parsed = reqwest::Url::parse(base_url)
            .map_err(|e| Error::config(format!("base URL `{shown_base}` is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::config(format!(
                "base URL `{shown_base}` must start with http:// or https://"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            // A stalled body is caught by the read timeout too, where the
            // total one is lifted (a results file streamed for hours).
            .read_timeout(settings.timeout)
            // The key is a plain header, which reqwest keeps across
            // redirects: only redirects to the same origin are followed.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same_origin =
                    attempt.previous().first().is_none_or(|first| first.origin() == attempt.url().origin());
                if attempt.previous().len() >= 10 || !same_origin { attempt.stop() } else { attempt.follow() }
            }))
            .user_agent(concat!("extract/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::config(format!("cannot start the HTTP client: {e}")))?;
        Ok(Transport {
            http,
            service,
            base_url: base_url.to_string(),
            shown_base: shown_base.clone(),
            endpoint: format!("{base_url}{path}"),
            shown_endpoint: format!("{shown_base}{path}"),
            headers,
            settings,
            paused_until: Arc::new(Mutex::new(None)),
            pacer: Arc::default(),
        })
    }

    /// The base URL requests go under (credentials and all: never for messages).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The endpoint as messages show it (credentials masked).
    pub fn shown_endpoint(&self) -> &str {
        &self.shown_endpoint
    }

    /// The endpoint requests go to (credentials included: never for messages).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// POSTs the JSON `body` of a model call to the endpoint, retrying per
    /// the transport policy; the success body, or the last failure.
    /// `parse_error` reads the API's error shape. In a paced run each
    /// request first waits until the rate limits of `demand.model` can take
    /// it (see [`pace`](super::pace)).
    pub async fn post(
        &self,
        body: Vec<u8>,
        parse_error: fn(u16, &[u8]) -> ApiError,
        demand: Demand<'_>,
    ) -> Result<Answer<'_>, Failure> {
        let mut reservation = None;
        let body = self
            .exchange(
                Method::POST,
                &self.endpoint,
                Some(&body),
                parse_error,
                &mut Read::Whole,
                Repeat::Always,
                Some((demand, &mut reservation)),
            )
            .await?;
        Ok(Answer { body, reservation })
    }

    /// Sends `method` to `path` under the base URL (with a JSON `body`, if
    /// any), retrying like [`post`](Transport::post) when `repeat` allows;
    /// the success body.
    pub async fn send_to(
        &self,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
        parse_error: fn(u16, &[u8]) -> ApiError,
        repeat: Repeat,
    ) -> Result<Vec<u8>, Failure> {
        let url = format!("{}{path}", self.base_url);
        self.exchange(method, &url, body, parse_error, &mut Read::Whole, repeat, None).await
    }

    /// POSTs a model call like [`post`](Transport::post), reading the
    /// success body line by line as it arrives (a streamed reply's
    /// server-sent events): `each` sees [`BodyLine::Start`] at every
    /// response read, so a request sent again after its body was cut short
    /// (or after `each` refused it) starts over there. The answer's body is
    /// empty: settle it with the usage the lines stated.
    pub async fn post_lines<'t>(
        &'t self,
        body: Vec<u8>,
        parse_error: fn(u16, &[u8]) -> ApiError,
        demand: Demand<'_>,
        each: &mut LineReader<'_>,
    ) -> Result<Answer<'t>, Failure> {
        let mut reservation = None;
        let paced = Some((demand, &mut reservation));
        let read = &mut Read::Lines(each);
        self.exchange(Method::POST, &self.endpoint, Some(&body), parse_error, read, Repeat::Always, paced)
            .await?;
        Ok(Answer { body: Vec::new(), reservation })
    }

    /// GETs `path` under the base URL and hands each line of the success
    /// body to `each` as it arrives (a body of any size; one line may be up
    /// to the body limit). A body cut short is fetched again from the
    /// start, under the same retry policy, so `each` may see a line twice.
    pub async fn get_lines(
        &self,
        path: &str,
        parse_error: fn(u16, &[u8]) -> ApiError,
        each: &mut (dyn FnMut(&[u8]) -> Result<(), Failure> + Send),
    ) -> Result<(), Failure> {
        let url = format!("{}{path}", self.base_url);
        let mut lines = |line: BodyLine<'_>| match line {
            BodyLine::Line(line) => each(line),
            BodyLine::Start | BodyLine::End => Ok(()),
        };
        let read = &mut Read::Lines(&mut lines);
        self.exchange(Method::GET, &url, None, parse_error, read, Repeat::Always, None).await.map(drop)
    }

    /// The lines of a success body, each handed to `each` as it arrives,
    /// between a `Start` and an `End`.
    async fn read_lines(
        &self,
        mut response: reqwest::Response,
        each: &mut LineReader<'_>,
    ) -> Result<(), Failure> {
        each(BodyLine::Start)?;
        let limit = self.settings.body_limit;
        let mut line = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failure::Transport(self.describe(&e, "reading the response body")))?
        {
            let mut rest = &chunk[..];
            while let Some(end) = rest.iter().position(|b| *b == b'\n') {
                line.extend_from_slice(&rest[..end]);
                each(BodyLine::Line(&line))?;
                line.clear();
                rest = &rest[end + 1..];
            }
            line.extend_from_slice(rest);
            if line.len() > limit {
                return Err(Failure::TooLarge(format!(
                    "a line of the response body from {} is longer than the {limit}-byte limit",
                    self.shown(response.url().as_str())
                )));
            }
        }
        if !line.is_empty() {
            each(BodyLine::Line(&line))?;
        }
        each(BodyLine::End)
    }

    /// The retry loop every exchange shares: send, read an error body and
    /// decide, wait, send again. A success response goes to `read`, whose
    /// transport failures (a body cut short) are retried like the others.
    /// A model call (`paced`) waits on the rate limits before each send in
    /// a paced run, and leaves the charge of the request that succeeded in
    /// the slot for its caller to settle.
    #[allow(clippy::too_many_arguments)]
    async fn exchange<'p>(
        &'p self,
        method: Method,
        url: &str,
        body: Option<&[u8]>,
        parse_error: fn(u16, &[u8]) -> ApiError,
        read: &mut Read<'_>,
        repeat: Repeat,
        mut paced: Option<(Demand<'_>, &mut Option<Reservation<'p>>)>,
    ) -> Result<Vec<u8>, Failure> {
        let limits = paced.as_ref().and_then(|_| crate::pace::current());
        let mut retry = 0;
        // A streamed body may take hours: the read timeout still catches a stall.
        let timeout = matches!(read, Read::Lines(_)).then_some(STREAM_TIMEOUT);
        loop {
            self.wait_out_pause().await;
            // A run on a PostgreSQL journal: the pause of every worker of the run.
            #[cfg(feature = "postgres")]
            crate::run_pause::wait_out().await;
            let mut reservation = match (&paced, &limits) {
                (Some((demand, _)), Some(limits)) => {
                    Some(self.pacer.reserve(*demand, body.map_or(0, <[u8]>::len), limits).await)
                }
                _ => None,
            };
            let sent = self.send_once(method.clone(), url, body, timeout).await;
            if let (Ok(response), Some(reservation)) = (&sent, &reservation) {
                reservation.read_headers(response.headers());
            }
            let (failure, server_delay, retryable) = match sent {
                Ok(response) if response.status().is_success() => {
                    let read = match read {
                        Read::Whole => self.read_whole(response, self.settings.body_limit).await,
                        Read::Lines(each) => {
                            self.read_lines(response, &mut **each).await.map(|()| Vec::new())
                        }
                    };
                    match read {
                        Ok(value) => {
                            if let Some((_, slot)) = paced.as_mut() {
                                **slot = reservation;
                            }
                            return Ok(value);
                        }
                        // An error a streamed body stated after its 200 (an `error`
                        // event): weighed as the same status before the body would be.
                        Err(Failure::Api { status, error, request_id }) => {
                            let retryable =
                                retry::should_retry_status(status, None, error.error_code.as_deref());
                            let failure = Failure::Api { status, error, request_id };
                            let error = ErrorStatus { failure, status, server_delay: None, retryable };
                            self.weigh(error, reservation.take(), retry, repeat).await
                        }
                        Err(failure) => unanswered(failure, repeat)?,
                    }
                }
                Ok(response) => match self.error_status(response, parse_error).await {
                    Ok(error) => self.weigh(error, reservation.take(), retry, repeat).await,
                    Err(failure) => unanswered(failure, repeat)?,
                },
                Err(failure) => unanswered(failure, repeat)?,
            };
            if !retryable || retry >= self.settings.retries {
                return Err(match failure {
                    Failure::Transport(message) | Failure::Unsent(message) if retry > 0 => {
                        Failure::Transport(format!("{message} (after {} attempts)", retry + 1))
                    }
                    failure => failure,
                });
            }
            let Settings { backoff_initial, backoff_max, .. } = self.settings;
            let mut wait = retry::delay(retry, server_delay, backoff_initial, backoff_max, fastrand::f64());
            if matches!(failure, Failure::Api { status: 429 | 529, .. }) {
                // Every task this pause holds comes back at its own moment.
                wait += RESUME_SPREAD.mul_f64(fastrand::f64());
            }
            retry += 1;
            warn!(
                retry,
                of = self.settings.retries,
                wait_ms = wait.as_millis() as u64,
                reason = %failure,
                "retrying the {} request", self.service
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// How the retry loop weighs an API error of its `retry`-th send: the
    /// request's charge against the rate limits given back (a 429 marks the
    /// bucket refused), a 429 or 529 pausing every request of the client,
    /// and whether it may be sent again; the failure and the server's delay.
    async fn weigh(
        &self,
        error: ErrorStatus,
        reservation: Option<Reservation<'_>>,
        retry: u32,
        repeat: Repeat,
    ) -> (Failure, Option<Duration>, bool) {
        let ErrorStatus { failure, status, server_delay, retryable } = error;
        // Answered with an error: nothing of it counts against the limits.
        match reservation {
            Some(reservation) if status == 429 => reservation.refused(),
            Some(reservation) => reservation.refund(),
            None => {}
        }
        let slowed = matches!(status, 429 | 529);
        if retryable && slowed {
            let Settings { backoff_initial, backoff_max, .. } = self.settings;
            let wait = retry::delay(retry, server_delay, backoff_initial, backoff_max, 0.0);
            self.pause_all(wait);
            #[cfg(feature = "postgres")]
            crate::run_pause::pause(wait).await;
        }
        (failure, server_delay, retryable && (repeat == Repeat::Always || slowed))
    }

    /// An error status, read: the API's error, how long the server asks to
    /// wait, and whether the request may be retried; `Err` when its body
    /// could not be read.
    async fn error_status(
        &self,
        response: reqwest::Response,
        parse_error: fn(u16, &[u8]) -> ApiError,
    ) -> Result<ErrorStatus, Failure> {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = self.read_whole(response, self.settings.body_limit).await?;
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let error = parse_error(status, &body);
        let retryable =
            retry::should_retry_status(status, header("x-should-retry"), error.error_code.as_deref());
        let server_delay =
            retry::server_delay(header("retry-after-ms"), header("retry-after"), SystemTime::now());
        let request_id = header("request-id")
            .or_else(|| header("x-request-id"))
            .map(str::to_owned)
            .or_else(|| error.request_id.clone());
        debug!(
            status,
            request_id = request_id.as_deref().unwrap_or(""),
            service = self.service,
            "error response"
        );
        Ok(ErrorStatus {
            failure: Failure::Api { status, error: Box::new(error), request_id },
            status,
            server_delay,
            retryable,
        })
    }

    /// Makes every request through this transport wait `wait` from now
    /// (extending, never shortening, a pause already set).
    fn pause_all(&self, wait: Duration) {
        // `wait` is capped by `retry::delay`; a checked sum all the same, as
        // a pause far past any clock is no pause worth panicking over.
        let now = Instant::now();
        let until = now.checked_add(wait).or_else(|| now.checked_add(retry::MAX_WAIT)).unwrap_or(now);
        let mut paused = self.paused_until.lock().expect("no thread panics holding the pause");
        if paused.is_none_or(|current| current < until) {
            *paused = Some(until);
        }
    }

    /// Sleeps until the pause a 429 or 529 set is over, and then a random
    /// part of a second more: the tasks it held resume spread out, not as
    /// one burst that meets the limit again.
    async fn wait_out_pause(&self) {
        let until = *self.paused_until.lock().expect("no thread panics holding the pause");
        if let Some(until) = until.filter(|until| *until > Instant::now()) {
            let spread = RESUME_SPREAD.mul_f64(fastrand::f64());
            tokio::time::sleep_until((until + spread).into()).await;
        }
    }

    /// One request, up to the response head.
    async fn send_once(
        &self,
        method: Method,
        url: &str,
        body: Option<&[u8]>,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, Failure> {
        let mut request = self.http.request(method, url).headers(self.headers.clone());
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, "application/json").body(body.to_vec());
        }
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        request.send().await.map_err(|e| {
            let message = self.describe(&e, "sending the request");
            if e.is_connect() { Failure::Unsent(message) } else { Failure::Transport(message) }
        })
    }

    /// The whole body of `response`, up to `limit` bytes.
    async fn read_whole(&self, mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Failure> {
        let shown = self.shown(response.url().as_str());
        let too_large = || {
            Failure::TooLarge(format!("the response body from {shown} is larger than the {limit}-byte limit"))
        };
        if response.content_length().is_some_and(|length| length > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failure::Transport(self.describe(&e, "reading the response body")))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// A URL under the base URL as messages show it (credentials masked).
    fn shown(&self, url: &str) -> String {
        mask_in_text(url, &self.base_url, &self.shown_base)
    }

    /// A transport failure in words, with its causes (never the request's headers).
    fn describe(&self, error: &reqwest::Error, during: &str) -> String {
        let shown = error.url().map_or_else(|| self.shown_endpoint.clone(), |url| self.shown(url.as_str()));
        let what = if error.is_timeout() {
            format!("the {} did not answer within the {:?} timeout", self.service, self.settings.timeout)
        } else if error.is_connect() {
            format!("could not connect to {shown}")
        } else if error.is_body() || error.is_decode() {
            format!("the response body from {shown} was cut short or unreadable")
        } else {
            format!("the request to {shown} failed")
        };
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            // A cause may quote the URL, credentials and all.
            causes.push(mask_in_text(&cause.to_string(), &self.base_url, &self.shown_base));
            source = cause.source();
        }
        if causes.is_empty() {
            format!("{what} while {during}")
        } else {
            format!("{what} while {during}: {}", causes.join(": "))
        }
    }
}

/// `text` with every occurrence of the real endpoint replaced by the shown one.
fn mask_in_text(text: &str, endpoint: &str, shown: &str) -> String {
    if endpoint == shown { text.to_string() } else { text.replace(endpoint, shown) }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("endpoint", &self.shown_endpoint)
            .field("timeout", &self.settings.timeout)
            .field("retries", &self.settings.retries)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_masked() {
        assert_eq!(mask_credentials("http://user:secret@127.0.0.1:9"), "http://***@127.0.0.1:9");
        assert_eq!(mask_credentials("http://user:secret@host/proxy/"), "http://***@host/proxy/");
        assert_eq!(mask_credentials("http://host:9/v1"), "http://host:9/v1");
        assert_eq!(mask_credentials("not a url user:secret@host"), "***@host");
        assert_eq!(mask_credentials("admin:s3cr3t@llm-proxy:4000"), "***@llm-proxy:4000");
    }

    #[test]
    fn a_bad_base_url_never_shows_its_credentials() {
        let err =
            Transport::new("the API", "ftp://user:secret@host", "/x", HeaderMap::new(), Settings::default())
                .unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
        assert!(err.to_string().contains("http://"), "{err}");
    }

    #[test]
    fn unparsed_bodies_are_quoted_by_a_short_prefix() {
        let long = "x".repeat(10_000);
        let error = ApiError::unparsed(500, long.as_bytes());
        assert!(error.message.chars().count() < 220, "{}", error.message.len());
        assert!(error.message.ends_with('…'));
        assert_eq!(ApiError::unparsed(503, b"").message, "HTTP 503 with an empty body");
    }
}
