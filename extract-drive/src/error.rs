//! [`Error`]: transport, I/O and configuration failures. Validation results
//! are never errors; they are [`Outcome`](crate::Outcome)s.

use std::fmt;
use std::sync::Arc;

use crate::{FailedAttempt, Usage};

/// A failure to reach a model, to read or write a run's files, or to
/// configure a run. Every validation result is an `Outcome`, never an
/// `Error`.
///
/// [`source()`](std::error::Error::source) gives what caused it, where
/// something did: the `std::io::Error` of an [`Io`](Error::Io) failure, a
/// backend's own error in [`Other`](Error::Other); for
/// [`Interrupted`](Error::Interrupted), the cause of the failure it wraps.
/// A [`Transport`](Error::Transport) failure's causes are in its message
/// instead, with any credentials of the URL masked: the HTTP client's
/// error, kept as a source, would show them.
///
/// It is `Clone` (a batch's failure is every one of its documents'), so
/// causes are shared.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// The model API answered with an error status.
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
    Transport(String),
    /// The API answered with something that is not a well-formed reply.
    InvalidResponse(String),
    /// The run is misconfigured: a missing key, a bad option, a blocking call inside a runtime.
    Config(String),
    /// Reading or writing a file failed (the journal's): what was being
    /// done, and the I/O error, which [`source()`](std::error::Error::source) returns.
    Io {
        /// What was being done, naming the file: `journal runs/march.journal: cannot open it`.
        context: String,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A model backend's own failure, kept whole as the
    /// [`source()`](std::error::Error::source) (a backend outside the crate
    /// builds one with [`Error::other`]; the scripted model's
    /// [`ScriptExhausted`](crate::testing::ScriptExhausted) is one).
    Other(Arc<dyn std::error::Error + Send + Sync>),
    /// A failure after attempts that failed validation: the failure, those
    /// attempts (oldest first), and the tokens they spent, so spent tokens
    /// are always reported. [`Error::root`] is the failure itself.
    Interrupted {
        /// What stopped the run.
        error: Box<Error>,
        /// The attempts made before it, each with its violations and usage.
        attempts: Vec<FailedAttempt>,
        /// The tokens those attempts spent, summed.
        usage: Usage,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api { status, error_type, message, request_id } => {
                f.write_str(&api_message(status, error_type, message, request_id))
            }
            Error::Transport(message) => write!(f, "transport error: {message}"),
            Error::InvalidResponse(message) => write!(f, "invalid response from the model API: {message}"),
            Error::Config(message) => write!(f, "configuration error: {message}"),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Other(source) => write!(f, "model backend error: {source}"),
            Error::Interrupted { error, attempts, usage } => write!(
                f,
                "{error} (after {} that spent {} tokens)",
                crate::vocabulary::text::count(attempts.len(), "failed attempt"),
                usage.total()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(&**source),
            Error::Other(source) => Some(&**source),
            // The attempts are context, not a cause: the cause is the wrapped failure's.
            Error::Interrupted { error, .. } => error.source(),
            _ => None,
        }
    }
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

    /// An I/O failure while doing `context` (which names the file).
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Error {
        Error::Io { context: context.to_string(), source: Arc::new(source) }
    }

    /// A model backend's own failure, kept as the [`source()`](std::error::Error::source).
    pub fn other(source: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Other(Arc::new(source))
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
    /// use extract::{Error, Extractor, Retries, testing::{ScriptExhausted, Scripted}};
    /// # use extract::{Code, FieldPath, Layer, Tool, Violation, Violations};
    /// # let tool = Tool { name: "t".into(), description: String::new(), input_schema: serde_json::json!({"type": "object"}), strict: false };
    /// # fn never(_: &serde_json::Value, _: &str) -> Result<(), Violations> {
    /// #     Err(Violations::one(Violation::new(Layer::Semantic, Code::CHECK_FAILED, FieldPath::root(), "no")))
    /// # }
    /// // One reply, then the model is gone: the error keeps the failed attempt.
    /// let model = Scripted::new([extract::model::Reply::tool_call(serde_json::json!({})).with_usage(extract::Usage::new(100, 10))]);
    /// let err = Extractor::new(model).retries(Retries::new(2)?).extract_with_blocking(tool, "doc", never).unwrap_err();
    /// let dry = std::error::Error::source(err.root()).and_then(|e| e.downcast_ref::<ScriptExhausted>());
    /// assert_eq!(dry, Some(&ScriptExhausted { call: 2 }));
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
