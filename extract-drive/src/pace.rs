//! Rate limits a bulk run paces its requests by: the [`Limits`] a user
//! sets for a server that states none, and the task-local that carries
//! them (and the fact that pacing is on) from `Bulk` to the transport,
//! which keeps the buckets (`http::pace`, behind the `http` feature).

use std::future::Future;

/// Rate limits per minute, for a server that sends no limit headers (vLLM,
/// Ollama behind a proxy): `Limits::per_minute().requests(50).input_tokens(40_000)`.
/// A limit the server states in its headers wins over the one set here.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    requests: Option<u64>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    tokens: Option<u64>,
}

impl Limits {
    /// No limit yet; add them with the setters.
    pub fn per_minute() -> Limits {
        Limits::default()
    }

    /// Requests per minute.
    pub fn requests(mut self, per_minute: u64) -> Limits {
        self.requests = Some(per_minute);
        self
    }

    /// Input tokens per minute (uncached input and cache writes).
    pub fn input_tokens(mut self, per_minute: u64) -> Limits {
        self.input_tokens = Some(per_minute);
        self
    }

    /// Output tokens per minute.
    pub fn output_tokens(mut self, per_minute: u64) -> Limits {
        self.output_tokens = Some(per_minute);
        self
    }

    /// Input and output tokens together per minute (OpenAI's one token limit).
    pub fn tokens(mut self, per_minute: u64) -> Limits {
        self.tokens = Some(per_minute);
        self
    }

    #[cfg(feature = "http")]
    pub(crate) fn of(&self, limit: Limit) -> Option<u64> {
        match limit {
            Limit::Requests => self.requests,
            Limit::InputTokens => self.input_tokens,
            Limit::OutputTokens => self.output_tokens,
            Limit::Tokens => self.tokens,
        }
    }
}

/// The limits a provider meters, each one bucket.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Requests,
    InputTokens,
    OutputTokens,
    /// OpenAI's: input and output together.
    Tokens,
}

#[cfg(feature = "http")]
pub(crate) const LIMITS: [Limit; 4] =
    [Limit::Requests, Limit::InputTokens, Limit::OutputTokens, Limit::Tokens];

tokio::task_local! {
    static PACING: Limits;
}

/// Runs `work` with requests paced, by the headers and by `limits` where
/// the server sends none.
pub async fn paced<F: Future>(limits: Limits, work: F) -> F::Output {
    PACING.scope(limits, work).await
}

/// The limits set for the running task, when it is paced.
pub fn current() -> Option<Limits> {
    PACING.try_with(|limits| *limits).ok()
}
