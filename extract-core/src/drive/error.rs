//! [`Error`]: transport and configuration failures. Validation results are
//! never errors; they are [`Outcome`](crate::Outcome)s.

use std::fmt;

use crate::{FailedAttempt, Usage};

/// A failure to reach a model or to configure a run. Every validation result is
/// an `Outcome`, never an `Error`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model API answered with an error status.
    #[error("{}", api_message(.status, .error_type, .message, .request_id))]
    Api {
        /// HTTP status.
        status: u16,
        /// The API's error type, such as `invalid_request_error`.
        error_type: String,
        /// The API's message.
        message: String,
        /// The `request-id` header, when the API sent one.
        request_id: Option<String>,
    },
    /// The request did not complete: connection refused or reset, timeout, a body cut short.
    #[error("transport error: {0}")]
    Transport(String),
    /// The API answered with something that is not a well-formed reply.
    #[error("invalid response from the model API: {0}")]
    InvalidResponse(String),
    /// The run is misconfigured: a missing key, a bad option, a blocking call inside a runtime.
    #[error("configuration error: {0}")]
    Config(String),
    /// A failure after attempts that failed validation: the failure, those
    /// attempts (oldest first), and the tokens they spent, so spent tokens
    /// are always reported. [`Error::root`] is the failure itself.
    #[error("{error} (after {} that spent {} tokens)", crate::vocabulary::text::count(attempts.len(), "failed attempt"), usage.total())]
    Interrupted {
        /// What stopped the run.
        error: Box<Error>,
        /// The attempts made before it, each with its violations and usage.
        attempts: Vec<FailedAttempt>,
        /// The tokens those attempts spent, summed.
        usage: Usage,
    },
    /// A scripted model was called more times than it has replies.
    #[error("the scripted model has no reply left for call {call}")]
    ScriptExhausted {
        /// The 1-based number of the call that found the script empty.
        call: usize,
    },
}

fn api_message(status: &u16, error_type: &str, message: &str, request_id: &Option<String>) -> String {
    let mut out = format!("model API returned {status} {error_type}: {message}");
    if let Some(id) = request_id {
        out.push_str(&format!(" (request-id {id})"));
    }
    out
}

impl Error {
    /// An API error status with the API's error type and message.
    pub fn api(
        status: u16,
        error_type: impl Into<String>,
        message: impl Into<String>,
        request_id: Option<String>,
    ) -> Error {
        Error::Api { status, error_type: error_type.into(), message: message.into(), request_id }
    }

    /// A transport failure described by `message`.
    pub fn transport(message: impl fmt::Display) -> Error {
        Error::Transport(message.to_string())
    }

    /// A reply that could not be understood.
    pub fn invalid_response(message: impl fmt::Display) -> Error {
        Error::InvalidResponse(message.to_string())
    }

    /// A configuration mistake described by `message`.
    pub fn config(message: impl fmt::Display) -> Error {
        Error::Config(message.to_string())
    }

    /// `self` after the failed `attempts`, which spent `usage`; `self`
    /// unchanged when there were none.
    pub fn after(self, attempts: Vec<FailedAttempt>, usage: Usage) -> Error {
        if attempts.is_empty() {
            return self;
        }
        match self {
            Error::Interrupted { error, .. } => Error::Interrupted { error, attempts, usage },
            error => Error::Interrupted { error: Box::new(error), attempts, usage },
        }
    }

    /// The failure itself, without the attempts made before it.
    ///
    /// ```
    /// use extract::{Error, Extractor, Retries, testing::Scripted};
    /// # use extract::{Code, FieldPath, Layer, Tool, Violation, Violations};
    /// # let tool = Tool { name: "t".into(), description: String::new(), input_schema: serde_json::json!({"type": "object"}), strict: false };
    /// # fn never(_: &serde_json::Value, _: &str) -> Result<(), Violations> {
    /// #     Err(Violations::one(Violation::new(Layer::Semantic, Code::CHECK_FAILED, FieldPath::root(), "no")))
    /// # }
    /// // One reply, then the model is gone: the error keeps the failed attempt.
    /// let model = Scripted::new([extract::Reply::tool_call(serde_json::json!({})).with_usage(extract::Usage::new(100, 10))]);
    /// let err = Extractor::new(model).retries(Retries::new(2)?).extract_with_blocking(tool, "doc", never).unwrap_err();
    /// assert!(matches!(err.root(), Error::ScriptExhausted { call: 2 }));
    /// assert_eq!(err.attempts().len(), 1);
    /// assert_eq!(err.usage().total(), 110);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn root(&self) -> &Error {
        match self {
            Error::Interrupted { error, .. } => error,
            error => error,
        }
    }

    /// The attempts that failed validation before this error (empty when it
    /// came on the first call).
    pub fn attempts(&self) -> &[FailedAttempt] {
        match self {
            Error::Interrupted { attempts, .. } => attempts,
            _ => &[],
        }
    }

    /// The tokens spent before this error.
    pub fn usage(&self) -> Usage {
        match self {
            Error::Interrupted { usage, .. } => *usage,
            _ => Usage::default(),
        }
    }
}
