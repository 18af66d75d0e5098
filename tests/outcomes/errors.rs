//! Errors by kind: every variant of `Error` and every class of API status
//! says its kind, whether it is retryable, its message and its cause; a
//! journal's failures are `Error::Journal` with typed detail, end to end.

use std::error::Error as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use extract::journal::JournalProblem;
use extract::model::{Model, ModelFuture, Prompt};
use extract::run::FailedAttempt;
use extract::testing::{ScriptExhausted, Scripted};
use extract::{
    Bulk, Code, Error, ErrorKind, Extractor, FieldPath, Journal, Layer, Usage, Violation, Violations,
};

use crate::support::invoices::{self, Invoice};

/// One row: an error, its kind, whether it is retryable, and its message.
fn check(error: &Error, kind: ErrorKind, retryable: bool, message: &str) {
    assert_eq!(error.kind(), kind, "{error:?}");
    assert_eq!(error.is_retryable(), retryable, "{error:?}");
    assert_eq!(kind.is_retryable(), retryable, "{kind:?}");
    assert_eq!(error.to_string(), message, "{error:?}");
}

#[test]
fn api_statuses_map_to_their_kinds() {
    let api = |status| Error::api(status, "some_error", "no", Some("req_1".into()));
    for (status, kind, retryable) in [
        (400, ErrorKind::InvalidRequest, false),
        (401, ErrorKind::Auth, false),
        (402, ErrorKind::InvalidRequest, false),
        (403, ErrorKind::Auth, false),
        (404, ErrorKind::InvalidRequest, false),
        (408, ErrorKind::Server, true),
        (409, ErrorKind::Server, true),
        (413, ErrorKind::InvalidRequest, false),
        (422, ErrorKind::InvalidRequest, false),
        (429, ErrorKind::RateLimited, true),
        (500, ErrorKind::Server, true),
        (502, ErrorKind::Server, true),
        (503, ErrorKind::Server, true),
        (529, ErrorKind::Server, true),
        // An error that came with a status that is not one is malformed.
        (200, ErrorKind::InvalidResponse, false),
    ] {
        let error = api(status);
        check(
            &error,
            kind,
            retryable,
            &format!("model API returned {status} some_error: no (request-id req_1)"),
        );
        assert!(error.source().is_none());
        assert!(matches!(error, Error::Api { status: s, .. } if s == status));
    }
}

#[test]
fn every_variant_says_its_kind_message_and_cause() {
    check(
        &Error::transport("connection reset"),
        ErrorKind::Transport,
        true,
        "transport error: connection reset",
    );
    assert!(Error::transport("x").source().is_none());
    check(
        &Error::invalid_response("no tool call"),
        ErrorKind::InvalidResponse,
        false,
        "invalid response from the model API: no tool call",
    );
    check(&Error::config("no key"), ErrorKind::Configuration, false, "configuration error: no key");
    assert!(Error::config("x").source().is_none());

    let io = Error::io("journal runs/march.db: cannot open it", std::io::Error::other("disk on fire"));
    check(&io, ErrorKind::Io, false, "journal runs/march.db: cannot open it: disk on fire");
    assert_eq!(io.source().unwrap().to_string(), "disk on fire");
    assert!(io.source().unwrap().downcast_ref::<std::io::Error>().is_some());

    let panicked =
        Error::WorkerPanicked("a bulk worker failed: task 3 panicked with message \"boom\"".into());
    check(&panicked, ErrorKind::Worker, false, "a bulk worker failed: task 3 panicked with message \"boom\"");
    assert!(panicked.source().is_none());

    let other = Error::other(ScriptExhausted { call: 2 });
    assert_eq!(other.kind(), ErrorKind::Backend);
    assert!(!other.is_retryable());
    assert!(other.to_string().starts_with("model backend error: "), "{other}");
    assert_eq!(other.source().unwrap().downcast_ref::<ScriptExhausted>(), Some(&ScriptExhausted { call: 2 }));

    // An interrupted failure is of its root's kind, and its cause is the root's cause.
    let violation = Violation::new(Layer::Semantic, Code::CHECK_FAILED, FieldPath::root(), "no");
    let attempts = vec![FailedAttempt::new(1, Violations::one(violation), Usage::new(100, 10))];
    let interrupted = Error::io("journal j: cannot record a reply", std::io::Error::other("full"))
        .after(attempts.clone(), Usage::new(100, 10));
    check(
        &interrupted,
        ErrorKind::Io,
        false,
        "journal j: cannot record a reply: full (after 1 failed attempt that spent 110 tokens)",
    );
    assert_eq!(interrupted.source().unwrap().to_string(), "full");
    assert_eq!(interrupted.attempts().len(), 1);
    let limited = Error::api(429, "rate_limit_error", "slow down", None).after(attempts, Usage::new(100, 10));
    assert!(matches!(limited, Error::Interrupted { .. }));
    assert_eq!((limited.kind(), limited.is_retryable()), (ErrorKind::RateLimited, true));
    assert!(limited.source().is_none());
}

#[test]
fn every_journal_problem_is_of_kind_journal_and_says_what_is_wrong() {
    let journal = |problem| Error::Journal { journal: "runs/march.db".into(), problem };
    let cases = [
        (
            JournalProblem::InUse,
            "journal runs/march.db is in use by another run (in this process or another): wait for it to end, \
             or use another journal",
        ),
        (
            JournalProblem::NotAJournal { found: "not an SQLite database: it begins \"PK\"".into() },
            "runs/march.db is not a journal of extract (not an SQLite database: it begins \"PK\"); it was left \
             as it was: give the run a path of its own, such as runs/NAME.db",
        ),
        (JournalProblem::OldFormat, "journal runs/march.db is in the old memory-mapped format (JSON lines)"),
        (
            JournalProblem::NewerFormat { found: 7, supported: 2 },
            "journal runs/march.db is of format 7, newer than this version of extract reads (format 2); it was \
             left as it was: use a newer extract",
        ),
        (
            JournalProblem::OtherTool {
                tool: "invoice".into(),
                schema: "ab".into(),
                expected_tool: "receipt".into(),
                expected_schema: "cd".into(),
            },
            "journal runs/march.db was written for the tool `invoice` (schema ab), not for `receipt` (schema \
             cd); it was left as it was: use another journal",
        ),
        (
            JournalProblem::LeaseLost { document: "d7".into() },
            "journal runs/march.db: document \"d7\" was taken over by another worker (this one's lease ran out)",
        ),
        (
            JournalProblem::CoordinationLost,
            "journal runs/march.db: this worker no longer coordinates the run's message batches",
        ),
        (
            JournalProblem::UnconfirmedBatch {
                created_at: "2026-03-01T10:00:00Z".into(),
                requests: 4,
                documents: vec!["a".into(), "b".into(), "c".into(), "d".into()],
                candidates: vec![],
            },
            "journal runs/march.db: an earlier run was creating a message batch of 4 requests (documents a, b, \
             c, ...) at 2026-03-01T10:00:00Z and stopped before the API's answer was recorded; the API lists no \
             batch of that size created then",
        ),
        (
            JournalProblem::Unreadable("the outcome of document \"d\" does not read back".into()),
            "journal runs/march.db: the outcome of document \"d\" does not read back",
        ),
    ];
    for (problem, says) in cases {
        let error = journal(problem.clone());
        assert_eq!((error.kind(), error.is_retryable()), (ErrorKind::Journal, false), "{error:?}");
        assert!(error.to_string().starts_with(says), "{error}\n  does not start with\n{says}");
        assert!(error.source().is_none());
        assert!(matches!(&error, Error::Journal { problem: p, .. } if *p == problem));
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_journal_is_a_journal_error_naming_it() {
    let path = invoices::temp_journal("outcomes", "errors-not-a-journal");
    std::fs::write(&path, "a shopping list, not a journal\n").unwrap();
    let model = Scripted::new(Vec::<serde_json::Value>::new());
    let err = Bulk::new(Extractor::new(model.clone()))
        .journal(&path)
        .unwrap()
        .run::<Invoice>(invoices::marked_invoices(2, 1, "x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Journal { problem: JournalProblem::NotAJournal { found }, journal }
            if found.starts_with("not an SQLite database: it begins \"a shopping list")
                && *journal == path.display().to_string()),
        "{err:?}"
    );
    assert_eq!((err.kind(), err.is_retryable()), (ErrorKind::Journal, false));
    assert!(err.to_string().contains("is not a journal of extract"), "{err}");
    assert!(model.prompts().is_empty(), "no model call");
    // A reader says the same.
    let err = Journal::sqlite(&path).summary().unwrap_err();
    assert!(matches!(&err, Error::Journal { problem: JournalProblem::NotAJournal { .. }, .. }), "{err:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a shopping list, not a journal\n", "left as it was");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_in_use_by_another_run_is_a_journal_error() {
    let path = invoices::temp_journal("outcomes", "errors-in-use");
    // The first run holds the journal while its model waits.
    let (release, wait) = tokio::sync::oneshot::channel::<()>();
    let waiting =
        Waiting { called: Arc::new(AtomicBool::new(false)), wait: Arc::new(Mutex::new(Some(wait))) };
    let held = Bulk::new(Extractor::new(waiting.clone())).journal(&path).unwrap();
    let first = tokio::spawn(async move { held.run::<Invoice>(invoices::marked_invoices(1, 1, "x")).await });
    while !waiting.called.load(Ordering::SeqCst) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let model = Scripted::new(Vec::<serde_json::Value>::new());
    let bulk = Bulk::new(Extractor::new(model.clone())).journal(&path).unwrap();
    let err = bulk.run::<Invoice>(invoices::marked_invoices(1, 1, "x")).await.unwrap_err();
    assert!(
        matches!(&err, Error::Journal { problem: JournalProblem::InUse, journal } if *journal == path.display().to_string()),
        "{err:?}"
    );
    assert_eq!((err.kind(), err.is_retryable()), (ErrorKind::Journal, false));
    assert!(err.to_string().contains("is in use by another run"), "{err}");
    assert!(model.prompts().is_empty(), "no model call");
    drop(release);
    first.await.unwrap().unwrap();
}

/// A model that says it was called, waits until its channel closes, then
/// fails as a transport would.
#[derive(Clone)]
struct Waiting {
    called: Arc<AtomicBool>,
    wait: Arc<Mutex<Option<tokio::sync::oneshot::Receiver<()>>>>,
}

impl Model for Waiting {
    fn call<'a>(&'a self, _: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let wait = self.wait.lock().unwrap().take();
            self.called.store(true, Ordering::SeqCst);
            if let Some(wait) = wait {
                let _ = wait.await;
            }
            Err(Error::transport("gone"))
        })
    }
}
