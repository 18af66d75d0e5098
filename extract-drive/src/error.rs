//! [`Error`]: transport, API, I/O, journal and configuration failures, and
//! the [`ErrorKind`] each is of. Validation results are never errors; they
//! are [`Outcome`](crate::Outcome)s.

use std::fmt;
use std::sync::Arc;

use crate::{FailedAttempt, Usage};

/// A failure to reach a model, to read or write a run's files, of the
/// run's journal, or to configure a run. Every validation result is an
/// `Outcome`, never an `Error`. [`kind()`](Error::kind) says what kind of
/// failure it is, and [`is_retryable()`](Error::is_retryable) whether the
/// same call may pass later.
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
    /// The journal refused the run, or holds what the run cannot go on
    /// from: in use by another run, not a journal, of a newer format, a
    /// lease lost. Its database failing to read or write is [`Io`](Error::Io).
    Journal {
        /// The journal as messages show it: its path, or its URL (with the
        /// password masked) and run name.
        journal: String,
        /// What is wrong.
        problem: JournalProblem,
    },
    /// A worker of the run (a task or thread) panicked: which, and the
    /// panic's message, such as `a bulk worker failed: task 7 panicked with message "..."`.
    WorkerPanicked(String),
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

// Display and `std::error::Error` are written by hand, not derived with
// `thiserror`: its derive always implements both, and its `source()` can
// only return a field itself. Here that is not the cause: an `Interrupted`
// failure's source is the cause of the failure it wraps (which is already
// in its message; a chain holding it would say it twice), and `Io` and
// `Other` keep their causes in an `Arc` (the error is `Clone`), which would
// be the source instead of the `io::Error` or the backend's error, so
// `downcast_ref` to them would fail.
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
            Error::Journal { journal, problem } => f.write_str(&journal_message(journal, problem)),
            Error::WorkerPanicked(message) => f.write_str(message),
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
    /// What kind of failure this is; an [`Interrupted`](Error::Interrupted)
    /// failure is of its [`root`](Error::root)'s kind.
    ///
    /// ```
    /// use extract::{Error, ErrorKind};
    /// assert_eq!(Error::api(429, "rate_limit_error", "slow down", None).kind(), ErrorKind::RateLimited);
    /// assert_eq!(Error::config("no key").kind(), ErrorKind::Configuration);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Api { status, .. } => match status {
                429 => ErrorKind::RateLimited,
                401 | 403 => ErrorKind::Auth,
                408 | 409 | 500..=599 => ErrorKind::Server,
                400..=499 => ErrorKind::InvalidRequest,
                // An error with a status that is not one: the answer is malformed.
                _ => ErrorKind::InvalidResponse,
            },
            Error::Transport(_) => ErrorKind::Transport,
            Error::InvalidResponse(_) => ErrorKind::InvalidResponse,
            Error::Config(_) => ErrorKind::Configuration,
            Error::Io { .. } => ErrorKind::Io,
            Error::Journal { .. } => ErrorKind::Journal,
            Error::WorkerPanicked(_) => ErrorKind::Worker,
            Error::Other(_) => ErrorKind::Backend,
            Error::Interrupted { error, .. } => error.kind(),
        }
    }

    /// Whether the same call may succeed if made again later: a
    /// [`Transport`](ErrorKind::Transport) failure, a
    /// [`RateLimited`](ErrorKind::RateLimited) or a
    /// [`Server`](ErrorKind::Server) error. (The run already retried these
    /// as its [`Retries`](crate::Retries) and the backend allow.)
    pub fn is_retryable(&self) -> bool {
        self.kind().is_retryable()
    }

    /// `self` with `said` appended to its message, of the same kind (what
    /// a failed write of the journal adds: the reply it could not record).
    /// A failure whose message is not its own text (a typed journal
    /// problem, a backend's error) cannot take it: `said` is logged instead.
    pub(crate) fn said(self, said: &str) -> Error {
        match self {
            Error::Io { context, source } => Error::Io { context: context + said, source },
            Error::Config(message) => Error::Config(message + said),
            Error::Transport(message) => Error::Transport(message + said),
            Error::InvalidResponse(message) => Error::InvalidResponse(message + said),
            Error::WorkerPanicked(message) => Error::WorkerPanicked(message + said),
            Error::Api { status, error_type, message, request_id } => {
                Error::Api { status, error_type, message: message + said, request_id }
            }
            Error::Journal { journal, problem: JournalProblem::Unreadable(what) } => {
                Error::Journal { journal, problem: JournalProblem::Unreadable(what + said) }
            }
            Error::Interrupted { error, attempts, usage } => {
                Error::Interrupted { error: Box::new(error.said(said)), attempts, usage }
            }
            other => {
                tracing::error!(target: "extract", error = %other, "{}", said.trim_start_matches("; "));
                other
            }
        }
    }

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

/// What kind of failure an [`Error`] is, from [`Error::kind`]: what a
/// caller decides on (try again later, fix the key, fix the request, look
/// at the journal) without matching messages. More kinds may come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request did not complete: the connection failed, timed out or
    /// was cut short. Retryable.
    Transport,
    /// The API refused the call for its rate limits (status 429). Retryable,
    /// after a pause.
    RateLimited,
    /// The API refused the credentials (status 401 or 403): the key is
    /// wrong, revoked or lacks the permission.
    Auth,
    /// The API refused the request itself (another 4xx status, such as 400
    /// or 413): sending it again fails again.
    InvalidRequest,
    /// The API failed or was overloaded (a 5xx status, 529 included), or
    /// the request timed out or conflicted there (408, 409). Retryable.
    Server,
    /// The API answered with something that is not a well-formed reply.
    InvalidResponse,
    /// The run is misconfigured: a missing key, a bad option, a document
    /// id that breaks the pattern, a blocking call inside a runtime.
    Configuration,
    /// The journal refused the run or cannot go on with it: see
    /// [`JournalProblem`].
    Journal,
    /// Reading or writing a file or the journal's database failed.
    Io,
    /// A model backend's own failure ([`Error::Other`]).
    Backend,
    /// A worker of the run panicked.
    Worker,
}

impl ErrorKind {
    /// Whether a failure of this kind may pass if the call is made again later.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorKind::Transport | ErrorKind::RateLimited | ErrorKind::Server)
    }

    /// The kind in snake case (`rate_limited`): traces' `error.type`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Transport => "transport",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Auth => "auth",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Server => "server",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::Configuration => "configuration",
            ErrorKind::Journal => "journal",
            ErrorKind::Io => "io",
            ErrorKind::Backend => "backend",
            ErrorKind::Worker => "worker",
        }
    }
}

/// What is wrong with a journal, in an [`Error::Journal`]. The journal is
/// always left as it was found. More problems may come.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalProblem {
    /// Another run holds the journal (in this process or another).
    InUse,
    /// The file or database is not a journal of extract.
    NotAJournal {
        /// What it is instead, as far as can be told: `not an SQLite
        /// database: it begins "..."`, or an SQLite database's application id.
        found: String,
    },
    /// A journal in the memory-mapped format (JSON lines) of the versions
    /// before journals were SQLite databases, which this version no longer reads.
    OldFormat,
    /// A journal of a format newer than this version of extract reads.
    NewerFormat {
        /// The journal's format (its schema version).
        found: u32,
        /// The newest format this version reads.
        supported: u32,
    },
    /// The journal (or the run of that name in it) was written for another
    /// tool, or for another schema of the same tool.
    OtherTool {
        /// The tool the journal was written for.
        tool: String,
        /// The digest of that tool's schema.
        schema: String,
        /// The tool of this run.
        expected_tool: String,
        /// The digest of this run's schema.
        expected_schema: String,
    },
    /// This worker's lease on a document ran out and another worker took
    /// the document over: its reply is not recorded here.
    LeaseLost {
        /// The document's id.
        document: String,
    },
    /// Another worker ran the document with other content (its text was
    /// corrected since this worker read it): the outcome is the new
    /// content's, and this worker's is not recorded.
    ContentChanged {
        /// The document's id.
        document: String,
    },
    /// This worker's lease on coordinating the run's message batches ran
    /// out and another worker took over, so it creates no batch.
    CoordinationLost,
    /// An earlier run was creating a message batch and stopped before the
    /// API's answer was recorded, and the API lists no batch (or more than
    /// one) that could be it: a batch may exist and be billed. Look in the
    /// Console, then call `Batches::forget_unconfirmed`.
    UnconfirmedBatch {
        /// When the batch was being created (RFC 3339).
        created_at: String,
        /// How many requests it held.
        requests: u64,
        /// The ids of its documents.
        documents: Vec<String>,
        /// The batches the API lists that could be it (none, or more than one).
        candidates: Vec<String>,
    },
    /// Something the journal recorded does not read back: what.
    Unreadable(String),
}

/// The message of a panic's payload, as `std` prints it.
#[cfg(feature = "postgres")]
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The message of an [`Error::Journal`].
fn journal_message(journal: &str, problem: &JournalProblem) -> String {
    match problem {
        JournalProblem::InUse => format!(
            "journal {journal} is in use by another run (in this process or another): wait for it to end, or \
             use another journal"
        ),
        JournalProblem::NotAJournal { found } => format!(
            "{journal} is not a journal of extract ({found}); it was left as it was: give the run a path of \
             its own, such as runs/NAME.db"
        ),
        JournalProblem::OldFormat => format!(
            "journal {journal} is in the old memory-mapped format (JSON lines), which this version of \
             extract no longer reads: its journals are SQLite databases. The file was left as it was; \
             give the run a new path (runs/NAME.db), or finish the run with the version that wrote it"
        ),
        JournalProblem::NewerFormat { found, supported } => format!(
            "journal {journal} is of format {found}, newer than this version of extract reads (format \
             {supported}); it was left as it was: use a newer extract"
        ),
        JournalProblem::OtherTool { tool, schema, expected_tool, expected_schema } => format!(
            "journal {journal} was written for the tool `{tool}` (schema {schema}), not for \
             `{expected_tool}` (schema {expected_schema}); it was left as it was: use another journal"
        ),
        JournalProblem::LeaseLost { document } => format!(
            "journal {journal}: document {} was taken over by another worker (this one's lease ran out)",
            crate::quote_prefix(document)
        ),
        JournalProblem::ContentChanged { document } => format!(
            "journal {journal}: document {} was run by another worker with other content (its text changed \
             since this worker read it); this worker's result for the old text is not recorded",
            crate::quote_prefix(document)
        ),
        JournalProblem::CoordinationLost => format!(
            "journal {journal}: this worker no longer coordinates the run's message batches (its lease ran \
             out and another worker took over), so it records and creates none (a batch it was creating is \
             cancelled)"
        ),
        JournalProblem::UnconfirmedBatch { created_at, requests, documents, candidates } => {
            let first: Vec<&str> = documents.iter().take(3).map(String::as_str).collect();
            let which = match candidates.as_slice() {
                [] => "the API lists no batch of that size created then".to_string(),
                found => format!("the API lists {} that could be it: {}", found.len(), found.join(", ")),
            };
            format!(
                "journal {journal}: an earlier run was creating a message batch of {requests} requests \
                 (documents {}{}) at {created_at} and stopped before the API's answer was recorded; {which}. \
                 A batch may exist all the same and be billed: look in the Console for batches created \
                 around {created_at}, cancel any you do not want, then call Batches::forget_unconfirmed \
                 (its documents are sent again by the next run)",
                first.join(", "),
                if documents.len() > 3 { ", ..." } else { "" },
            )
        }
        JournalProblem::Unreadable(what) => format!("journal {journal}: {what}"),
    }
}
