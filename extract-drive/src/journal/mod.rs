//! The journal: a run's durable memory, in a real database. [`Journal`]
//! describes one (no I/O until a run opens it); [`Store`] is a journal a
//! run has open, with an async interface whose SQLite work runs off the
//! async threads; the SQL is all in `sqlite.rs` and `postgres.rs`.
//!
//! What a journal holds for a run: its header (tool, schema digest, format
//! version), its documents (id, content digest, state), every reply (with
//! the attempt, the digest of the correction it answered, its batch), every
//! outcome, transport failure, batch intent and id, resend and review. Each
//! is committed durably before the run reports it or acts on it. Resuming
//! replays a document's replies through a fresh `Run` (the policy is
//! deterministic), so an outcome is always built again by the validators,
//! never read from disk, and only while the digest of the document's
//! content, the run's tool and its instructions still match.
//!
//! Without a database feature (`sqlite`, `postgres`) a journal cannot be
//! described, so none is ever opened: the code below stays compiled, and
//! unreachable.
#![cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(unused, unreachable_code))]

#[cfg(feature = "postgres")]
mod credentials;
mod migrations;
#[cfg(feature = "postgres")]
mod postgres;
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stored;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
#[cfg(feature = "sqlite")]
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub use crate::engine::{CallKey, Part};
use crate::run::{Facts, Windows};
use crate::{Content, Document, Error, Escalation, Outcome, Prompt, Reply, ReplyContent, Stats, Tool};
use rows::{Event, OpenBatch};

pub use crate::error::JournalProblem;
#[cfg(feature = "postgres")]
pub use postgres::{Counts, Postgres};
#[cfg(feature = "sqlite")]
use sqlite::{DeskReview, Header, Sqlite};

/// Where a run keeps its memory. Only a description: nothing is opened,
/// created or locked until a run (or a reader) opens it.
///
/// A path (`&str`, `String`, `&Path`, `PathBuf`) converts into
/// [`Journal::sqlite`], so `Bulk::new(extractor).journal("runs/march.db")?`
/// is an SQLite journal.
///
/// ```
/// use extract::Journal;
/// assert_eq!(Journal::from("runs/march.db"), Journal::sqlite("runs/march.db"));
/// assert!(!std::path::Path::new("runs/march.db").exists(), "no I/O until a run opens it");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    #[cfg(feature = "sqlite")]
    Sqlite(PathBuf),
    #[cfg(feature = "postgres")]
    Postgres(postgres::Settings),
    /// Without a database feature there is no journal to describe: this
    /// variant cannot be built, and keeps every `match` exhaustive.
    #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
    Unavailable(std::convert::Infallible),
}

impl Journal {
    /// An SQLite database at `path`, created by the first run on it (SQLite
    /// is embedded and bundled: no server, no system library). Feature
    /// `sqlite` (on by default).
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub fn sqlite(path: impl Into<PathBuf>) -> Journal {
        Journal { kind: Kind::Sqlite(path.into()) }
    }

    /// Run `run` in the PostgreSQL database at `url`
    /// (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`), shared by every
    /// worker process that opens the same run, on any machine: each claims
    /// the next pending document under a lease it renews while the document
    /// is in flight (30 s, renewed every 10 s: [`Journal::leases`]), and a
    /// 429 or 529 one worker sees pauses them all. Many runs share one
    /// database, each by its name; the schema is created or migrated by the
    /// first worker that connects. The password appears in no `Debug`,
    /// error or trace. Feature `postgres`.
    ///
    /// ```
    /// use extract::Journal;
    /// let journal = Journal::postgres("postgres://extract:s3cret@db/extract", "march-2026");
    /// assert!(!format!("{journal:?}").contains("s3cret"));
    /// ```
    #[cfg(feature = "postgres")]
    pub fn postgres(url: impl Into<String>, run: impl Into<String>) -> Journal {
        Journal {
            kind: Kind::Postgres(postgres::Settings {
                url: url.into(),
                run: run.into(),
                lease: Duration::from_secs(30),
                renew_every: Duration::from_secs(10),
                reconnect: Duration::from_secs(60),
            }),
        }
    }

    /// How long a claimed document stays a worker's without a renewal
    /// (`lease`: a worker that dies loses its documents after it), and how
    /// often a worker renews its leases (`renew_every`, shorter than
    /// `lease`). Default 30 s and 10 s. A PostgreSQL journal only: an SQLite
    /// journal has one run at a time and no leases, and ignores this.
    pub fn leases(mut self, lease: Duration, renew_every: Duration) -> Journal {
        match &mut self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(_) => {
                let _ = (lease, renew_every);
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                settings.lease = lease;
                settings.renew_every = renew_every;
            }
        }
        self
    }

    /// How long a lost connection to the database is tried again (with
    /// backoff) before the worker ends with `Err`; what was committed
    /// stays. Default 60 s. A PostgreSQL journal only (SQLite has no
    /// connection to lose).
    pub fn reconnect_within(mut self, within: Duration) -> Journal {
        match &mut self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(_) => {
                let _ = within;
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => settings.reconnect = within,
        }
        self
    }

    /// The database file, for a journal in SQLite.
    pub fn path(&self) -> Option<&Path> {
        match &self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => Some(path),
            #[cfg(feature = "postgres")]
            Kind::Postgres(_) => None,
        }
    }

    /// `Err` for a journal that can never be opened (an empty path, an
    /// empty run name, a renewal no shorter than its lease).
    pub fn checked(self) -> Result<Journal, Error> {
        match &self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) if path.as_os_str().is_empty() => {
                Err(Error::config("the journal path is empty"))
            }
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(_) => Ok(self),
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) if settings.run.is_empty() => Err(Error::config(format!(
                "journal {}: the run's name is empty: name it, as in Journal::postgres(url, \"march-2026\")",
                credentials::mask(&settings.url)
            ))),
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings)
                if settings.renew_every.is_zero() || settings.renew_every >= settings.lease =>
            {
                Err(Error::config(format!(
                    "journal {}: leases are renewed every {:?}, which is not shorter than the lease ({:?}): \
                     a lease would run out before its renewal",
                    credentials::mask(&settings.url),
                    settings.renew_every,
                    settings.lease
                )))
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres(_) => Ok(self),
        }
    }

    /// This journal's name in messages: its path, or its URL (password
    /// masked) and run.
    pub fn shown(&self) -> String {
        match &self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => path.display().to_string(),
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                format!("{} run {}", credentials::mask(&settings.url), crate::quote_prefix(&settings.run))
            }
        }
    }

    /// Every document of the run with its outcome and last failure, read
    /// without the run's lock.
    fn exported(&self) -> Result<Vec<rows::Exported>, Error> {
        match &self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => Sqlite::open_for_reading(path, None)?.documents_with_outcomes(),
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                let settings = settings.clone();
                outside_any_runtime(async move {
                    Postgres::open(&settings, None, false).await?.documents_with_outcomes().await
                })
            }
        }
    }

    /// Writes the run the journal holds as JSON lines, one object per
    /// document, in id order: `{"id", "outcome", "attempts", "usage",
    /// "reviewed"}` for a document with an outcome (`outcome` is its packet;
    /// a valid one without its `sources`), `{"id", "outcome": null,
    /// "failure"}` for one that failed, `{"id", "outcome": null}` for one
    /// not finished. For `jq` and spreadsheets; it takes no lock, so it can
    /// read a journal a run has open. Returns the number of lines.
    pub fn export_jsonl(&self, mut out: impl std::io::Write) -> Result<usize, Error> {
        let rows = self.exported()?;
        let cannot =
            |e: std::io::Error| Error::io(format!("cannot write the export of journal {}", self.shown()), e);
        for row in &rows {
            let line = match &row.outcome {
                Some((packet, attempts, usage, reviewed)) => json!({
                    "id": row.id, "outcome": packet, "attempts": attempts, "usage": usage, "reviewed": reviewed,
                }),
                None => match &row.failure {
                    Some(failure) => json!({"id": row.id, "outcome": null, "failure": failure}),
                    None => json!({"id": row.id, "outcome": null}),
                },
            };
            serde_json::to_writer(&mut out, &line).map_err(|e| cannot(e.into()))?;
            out.write_all(b"\n").map_err(cannot)?;
        }
        out.flush().map_err(cannot)?;
        Ok(rows.len())
    }
}

/// A run read back from its journal alone, after the run (or while it goes
/// on): the statistics over every outcome recorded for the documents' current
/// content, and every escalation with its document id, for a
/// report (`extract::report::Report`) or a look at what failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JournalSummary {
    /// Statistics over every recorded outcome, as the run's own `stats`.
    pub stats: Stats,
    /// Every escalated document (not reviewed since), in id order.
    pub escalations: Vec<(String, Escalation)>,
    /// The documents whose last attempt failed (transport), with the error's text.
    pub failed: Vec<(String, String)>,
    /// The documents without an outcome yet.
    pub unfinished: Vec<String>,
    /// What reviewers did (fixes and rejections), oldest first, for the
    /// report's section of reviewer corrections.
    pub reviews: Vec<Review>,
}

/// What a reviewer did to one escalated document, as the journal keeps it:
/// a fix held to the type's checks, or a rejection of the source.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Review {
    /// The document's id.
    pub document: String,
    /// Who reviewed it, as the reviewer gave it (`None` for a fix recorded
    /// without a name, by [`Bulk::record_review`](crate::Bulk::record_review)).
    pub reviewer: Option<String>,
    /// When (RFC 3339, UTC), where recorded.
    pub at: Option<String>,
    /// What the reviewer decided.
    pub decision: ReviewDecision,
}

/// A reviewer's decision on an escalated document.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// Read once per review for a report: the size of a rejection does not matter.
#[allow(clippy::large_enum_variant)]
pub enum ReviewDecision {
    /// A fix (a JSON merge patch over the last output) that passed all three layers.
    Fixed {
        /// The merge patch.
        fix: Value,
        /// The top-level fields it changed (JSON names), with their values
        /// before (`null`: absent) ...
        before: serde_json::Map<String, Value>,
        /// ... and after (`null`: removed).
        after: serde_json::Map<String, Value>,
        /// The fingerprints (as displayed) of the violations the escalation
        /// ended with, which the reviewer's answer overrode.
        overrode: Vec<String>,
    },
    /// The source cannot be used (unreadable, not an invoice, ...): no value.
    Rejected {
        /// Why, in the reviewer's words.
        reason: String,
    },
}

impl Journal {
    /// The run this journal holds, read from the journal alone (no
    /// documents, no type, no model; no lock, so while a run goes on too):
    /// its statistics and escalations, for the HTML report:
    ///
    /// ```no_run
    /// let run = extract::Journal::sqlite("runs/march.db").summary()?;
    /// let escalations = run.escalations.iter().map(|(id, e)| (id.as_str(), e));
    /// let page = extract::report::Report::new(&run.stats).escalations(escalations).html();
    /// std::fs::write("runs/march.html", page)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn summary(&self) -> Result<JournalSummary, Error> {
        let rows = self.exported()?;
        let mut summary = JournalSummary {
            stats: Stats::new(),
            escalations: Vec::new(),
            failed: Vec::new(),
            unfinished: Vec::new(),
            reviews: Vec::new(),
        };
        let unreadable = |id: &str| unreadable_outcome(self.shown(), id);
        for row in rows {
            match (&row.outcome, row.failure) {
                (Some((packet, ..)), _) => {
                    let facts = stored::facts_from(&row.facts).ok_or_else(|| unreadable(&row.id))?;
                    summary.stats.record_facts(&facts);
                    if packet["status"] == "escalated" {
                        let escalation =
                            stored::escalation_from(packet).ok_or_else(|| unreadable(&row.id))?;
                        summary.escalations.push((row.id, escalation));
                    }
                }
                (None, Some(failure)) => summary.failed.push((row.id, failure)),
                (None, None) => summary.unfinished.push(row.id),
            }
        }
        summary.reviews = self.reviews()?;
        Ok(summary)
    }

    /// Every review and rejection recorded for the run's documents as they
    /// are now, oldest first (no lock: a run may have the journal open).
    pub fn reviews(&self) -> Result<Vec<Review>, Error> {
        let stored = match &self.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => Sqlite::open_for_reading(path, None)?.reviews()?,
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                let settings = settings.clone();
                outside_any_runtime(
                    async move { Postgres::open(&settings, None, false).await?.reviews().await },
                )?
            }
        };
        Ok(reviews_from(stored))
    }
}

/// Stored reviews and rejections, read back.
fn reviews_from(stored: Vec<rows::StoredReview>) -> Vec<Review> {
    let json = |text: &Option<String>| text.as_deref().and_then(|t| serde_json::from_str::<Value>(t).ok());
    let object = |text: &Option<String>| match json(text) {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    stored
        .into_iter()
        .map(|stored| {
            let decision = match &stored.rejected {
                Some(reason) => ReviewDecision::Rejected { reason: reason.clone() },
                None => ReviewDecision::Fixed {
                    fix: json(&stored.fix).unwrap_or(Value::Null),
                    before: object(&stored.before),
                    after: object(&stored.after),
                    overrode: json(&stored.overrode)
                        .and_then(|v| serde_json::from_value(v).ok())
                        .unwrap_or_default(),
                },
            };
            Review { document: stored.document, reviewer: stored.reviewer, at: stored.at, decision }
        })
        .collect()
}

/// The journal as the review desk uses it: opened for one type's tool,
/// read-only for its pages, one short immediate transaction per decision.
/// Synchronous (the desk calls it off its async threads).
#[cfg(feature = "sqlite")]
pub struct DeskJournal {
    path: PathBuf,
    tool: String,
    schema: String,
}

/// A document waiting for a reviewer, read from the journal.
#[cfg(feature = "sqlite")]
pub struct Waiting {
    /// The document's id.
    pub id: String,
    /// Its content digest in the journal, which a decision is recorded under.
    pub content: String,
    /// Its escalation, rebuilt from the stored packet.
    pub escalation: Escalation,
}

/// A reviewer's passing fix, ready to be recorded.
#[cfg(feature = "sqlite")]
pub struct Fix<'a> {
    /// The document's id.
    pub document: &'a str,
    /// Its content digest.
    pub content: &'a str,
    /// The reviewer's patch.
    pub fix: &'a Value,
    /// The patched output, whole.
    pub output: Value,
    /// Who fixed it.
    pub reviewer: &'a str,
    /// When (RFC 3339).
    pub at: &'a str,
    /// The fields the patch changed, as they were.
    pub before: &'a serde_json::Map<String, Value>,
    /// The same fields, as the patch left them.
    pub after: &'a serde_json::Map<String, Value>,
    /// The fingerprints of the violations the reviewer overrode.
    pub overrode: &'a [String],
}

#[cfg(feature = "sqlite")]
#[cfg(feature = "sqlite")]
impl DeskJournal {
    /// Checks that `journal` is a journal of `tool`'s runs (and brings an
    /// older format forward, the one write of opening it).
    pub fn open(journal: &Journal, tool: &Tool) -> Result<DeskJournal, Error> {
        let (path, tool, schema) = where_and_what(&journal.clone().checked()?, tool)?;
        Sqlite::open_for_reading(&path, Some(&Header { tool: &tool, schema: &schema }))?;
        Ok(DeskJournal { path, tool, schema })
    }

    fn header(&self) -> Header<'_> {
        Header { tool: &self.tool, schema: &self.schema }
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every document waiting for a reviewer, in id order, and how many
    /// were reviewed and rejected. Read-only.
    pub fn waiting(&self) -> Result<(Vec<Waiting>, u64, u64), Error> {
        let (rows, reviewed, rejected) = Sqlite::open_read_only(&self.path, &self.header())?.waiting()?;
        let waiting = rows.into_iter().map(|row| self.read_back(row)).collect::<Result<_, _>>()?;
        Ok((waiting, reviewed, rejected))
    }

    /// The ids of every waiting document, in id order, and document `id`
    /// if it waits. Read-only; only its packet is read back.
    pub fn around(&self, id: &str) -> Result<(Vec<String>, Option<Waiting>), Error> {
        let (ids, row) = Sqlite::open_read_only(&self.path, &self.header())?.around(id)?;
        let Some(row) = row else { return Ok((ids, None)) };
        Ok((ids, Some(self.read_back(row)?)))
    }

    /// A waiting row with its escalation read back from the stored packet.
    fn read_back(&self, row: rows::Waiting) -> Result<Waiting, Error> {
        let escalation = stored::escalation_from(&row.packet)
            .ok_or_else(|| unreadable_outcome(self.path.display(), &row.id))?;
        Ok(Waiting { id: row.id, content: row.content, escalation })
    }

    /// Records a passing fix and the reviewed outcome; `Ok(false)` when
    /// the document no longer waits (nothing recorded).
    pub fn record_fix<T>(&self, fix: Fix<'_>, outcome: &Outcome<T>) -> Result<bool, Error> {
        let row = OutcomeRow::new(fix.content, outcome, Some(fix.output.clone()));
        let overrode = serde_json::to_string(fix.overrode).unwrap_or_default();
        let review = DeskReview {
            document: fix.document,
            content: fix.content,
            fix: &fix.fix.to_string(),
            reviewer: fix.reviewer,
            at: fix.at,
            before: &Value::Object(fix.before.clone()).to_string(),
            after: &Value::Object(fix.after.clone()).to_string(),
            overrode: &overrode,
        };
        Sqlite::open_for_reading(&self.path, Some(&self.header()))?.desk_review(&review, &row)
    }

    /// Records a rejection; `Ok(false)` when the document no longer waits.
    pub fn record_rejection(
        &self,
        document: &str,
        content: &str,
        reviewer: &str,
        at: &str,
        reason: &str,
    ) -> Result<bool, Error> {
        Sqlite::open_for_reading(&self.path, Some(&self.header()))?
            .rejection(document, content, reviewer, at, reason)
    }
}

// A path, however it is held, describes an SQLite journal.
#[cfg(feature = "sqlite")]
macro_rules! journal_from_path {
    ($($path:ty),*) => {$(
        impl From<$path> for Journal {
            fn from(path: $path) -> Journal {
                Journal::sqlite(path)
            }
        }
    )*};
}

#[cfg(feature = "sqlite")]
journal_from_path!(PathBuf, &Path, &PathBuf, String, &String, &str);

/// What an earlier run with the same journal did, by document id, for the
/// documents whose content is unchanged.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The replies each document got, oldest first.
    pub replies: BTreeMap<String, Vec<RecordedReply>>,
    /// The reviewers' fixes, by document id (the last one counts).
    pub reviews: BTreeMap<String, Value>,
    /// The documents a reviewer rejected (their source unusable).
    pub rejected: BTreeSet<String>,
    /// The message batches created and not yet collected, oldest first,
    /// each with its documents and their attempts.
    pub open_batches: Vec<(String, Vec<(String, u32)>)>,
    /// Batches about to be created when an earlier run stopped, whose id
    /// the API never gave it.
    pub intents: Vec<Intent>,
    /// The results already handled, as (batch id, document id).
    pub handled: BTreeSet<(String, String)>,
    /// How many times each document's current attempt has been resent.
    pub resends: BTreeMap<String, u32>,
    /// Documents that had replies for another content (or tool, or
    /// instructions), and none for this one: asked again.
    pub asked_again: BTreeSet<String>,
}

/// A reply as the journal holds it: the call it answered, and whether it
/// is the prefix of a stream that was cancelled.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedReply {
    /// The call it answered.
    pub key: CallKey,
    /// The reply (for a cancelled stream, what had arrived).
    pub reply: Reply,
    /// Whether the stream was cancelled before the reply ended.
    pub cancelled: bool,
}

impl Recorded {
    /// What the stored `events` (with their order `seq`) and open
    /// `batches` say of the documents whose content digests are `contents`:
    /// replies under another content are not replayed, and such documents
    /// are counted.
    pub(crate) fn from_events(
        mut events: Vec<(i64, Event)>,
        batches: Vec<OpenBatch>,
        contents: &BTreeMap<String, String>,
    ) -> Result<Recorded, serde_json::Error> {
        events.sort_unstable_by_key(|(seq, _)| *seq);
        let current = |document: &str, content: &str| contents.get(document).is_some_and(|c| c == content);
        let mut recorded = Recorded::default();
        let mut stale = BTreeSet::new();
        for (_, event) in events {
            match event {
                Event::Reply { document, content, key, batch, reply, cancelled } => {
                    if !current(&document, &content) {
                        stale.insert(document);
                        continue;
                    }
                    let reply: Reply = serde_json::from_str(&reply)?;
                    recorded.resends.remove(&document);
                    if let Some(batch) = batch {
                        recorded.handled.insert((batch, document.clone()));
                    }
                    recorded.replies.entry(document).or_default().push(RecordedReply {
                        key,
                        reply,
                        cancelled,
                    });
                }
                Event::Failed { document, content, batch } => {
                    if !current(&document, &content) {
                        continue;
                    }
                    recorded.resends.remove(&document);
                    if let Some(batch) = batch {
                        recorded.handled.insert((batch, document.clone()));
                    }
                    recorded.replies.entry(document).or_default();
                }
                Event::Resent { document, batch, counted } => {
                    *recorded.resends.entry(document.clone()).or_default() += u32::from(counted);
                    recorded.handled.insert((batch, document));
                }
                Event::Reviewed { document, content, fix } => {
                    if current(&document, &content) {
                        recorded.reviews.insert(document, serde_json::from_str(&fix).unwrap_or(Value::Null));
                    }
                }
                Event::Rejected { document, content } => {
                    if current(&document, &content) {
                        recorded.rejected.insert(document);
                    }
                }
            }
        }
        recorded.asked_again = stale.into_iter().filter(|d| !recorded.replies.contains_key(d)).collect();
        for batch in batches {
            let documents: Vec<(String, u32, String)> =
                serde_json::from_str(&batch.documents).unwrap_or_default();
            // A document whose content changed since does not take this batch's result.
            let documents =
                documents.into_iter().filter(|(d, _, c)| current(d, c)).map(|(d, a, _)| (d, a)).collect();
            match batch.id {
                Some(id) => recorded.open_batches.push((id, documents)),
                None => recorded.intents.push(Intent {
                    number: batch.intent,
                    created_at: batch.created_at,
                    requests: batch.requests as u64,
                    documents,
                }),
            }
        }
        Ok(recorded)
    }
}

/// The intent to create a message batch, recorded before the create call.
#[derive(Debug, Clone)]
pub struct Intent {
    /// Its number in the journal.
    pub number: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// How many requests the batch holds.
    pub requests: u64,
    /// Each document and the attempt it asks for.
    pub documents: Vec<(String, u32)>,
}

/// A reply, ready to be recorded: serialized before the policy takes it.
pub struct ReplyRecord {
    document: String,
    content: String,
    key: CallKey,
    /// Whether it is the prefix of a stream that was cancelled.
    cancelled: bool,
    prompt: String,
    batch: Option<String>,
    reply: String,
    /// The tool input, for a valid outcome's packet.
    output: Option<Value>,
}

/// An outcome as the journal stores it.
pub struct OutcomeRow {
    content: String,
    /// `valid` or `escalated`, as the document's state says it.
    state: &'static str,
    packet: String,
    attempts: u32,
    usage: String,
    /// What the run's statistics count of it.
    facts: String,
}

impl OutcomeRow {
    /// The row of `outcome`, whose last output (for a valid one) is `output`.
    fn new<T>(content: &str, outcome: &Outcome<T>, output: Option<Value>) -> OutcomeRow {
        let (state, packet, usage) = match outcome {
            Outcome::Valid(valid) => {
                let mut packet = json!({"status": "ok", "output": output, "attempts": valid.attempts()});
                if valid.reviewed() {
                    packet["reviewed"] = json!(true);
                }
                ("valid", packet, valid.usage())
            }
            Outcome::Escalated(escalation) => {
                ("escalated", serde_json::to_value(escalation).unwrap_or(Value::Null), escalation.usage)
            }
        };
        OutcomeRow {
            content: content.to_string(),
            state,
            packet: packet.to_string(),
            attempts: outcome.attempts(),
            usage: serde_json::to_string(&usage).unwrap_or_default(),
            facts: stored::facts_json(&Facts::of(outcome)),
        }
    }
}

/// The digest journals use for a tool's schema, a prompt's correction and a
/// document's content.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    hash[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest of what a run asks, whatever the document: its tool, its
/// instructions and its windows (a run with another window size asks other
/// calls: its replies are not replayed; a run without windows digests as
/// it did before windows existed).
pub fn run_digest(tool: &Tool, instructions: Option<&str>, windows: Option<Windows>) -> String {
    let mut text = serde_json::to_string(tool).unwrap_or_default();
    text.push('\0');
    text.push_str(instructions.unwrap_or_default());
    if let Some(windows) = windows {
        text.push_str(&format!("\0windows {windows}"));
    }
    digest(text.as_bytes())
}

/// The digest of one document's content (text; a PDF's bytes and text
/// layer) under the run digest `run`: a recorded reply is replayed only
/// while it matches.
pub fn content_digest(run: &str, document: &Document) -> String {
    let mut hash = Sha256::new();
    hash.update(run.as_bytes());
    match document.content() {
        Content::Text(text) => {
            hash.update(b"\0text\0");
            hash.update(text.as_bytes());
        }
        Content::Pdf { bytes, text_layer } => {
            hash.update(b"\0pdf\0");
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
            if let Some(layer) = text_layer {
                hash.update(b"\0layer\0");
                hash.update(layer.as_bytes());
            }
        }
    }
    hash.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The journal `shown`: the outcome of document `id` does not read back.
fn unreadable_outcome(shown: impl std::fmt::Display, id: &str) -> Error {
    Error::Journal {
        journal: shown.to_string(),
        problem: JournalProblem::Unreadable(format!(
            "the outcome of document {} does not read back",
            crate::quote_prefix(id)
        )),
    }
}

/// The journal's file, and the tool name and schema digest its header must
/// hold, for the review desk, which reads SQLite journals only.
#[cfg(feature = "sqlite")]
fn where_and_what(journal: &Journal, tool: &Tool) -> Result<(PathBuf, String, String), Error> {
    let path = journal.path().ok_or_else(|| {
        Error::config(format!(
            "the review desk reads SQLite journals; journal {} is not one: review its escalations with \
             Bulk::escalations and Bulk::record_review",
            journal.shown()
        ))
    })?;
    let (tool, schema) = header_of(tool);
    Ok((path.to_path_buf(), tool, schema))
}

/// The tool name and schema digest a journal's header must hold: what
/// opening it for a run or for reading checks alike.
fn header_of(tool: &Tool) -> (String, String) {
    let schema = digest(serde_json::to_string(tool).unwrap_or_default().as_bytes());
    (tool.name.clone(), schema)
}

/// A journal a run has open (an SQLite one locked), or a reader has open.
/// Its methods are async: SQLite's work runs on tokio's blocking threads,
/// so a run works under a current-thread runtime too; PostgreSQL's is async.
pub struct Store {
    backend: Backend,
    /// The first write that failed: the run stops making model calls.
    failure: Mutex<Option<Error>>,
    /// The paid replies that later writes could not record either, each
    /// said as `reply of document ... is not recorded: ...`: they join the
    /// failure, so none is lost without a word.
    unrecorded: Mutex<Vec<String>>,
    /// The documents another worker took over (this one's lease ran out):
    /// this worker leaves them.
    lost: Mutex<BTreeSet<String>>,
}

/// The database a [`Store`] has open: one interface, two backends.
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(Arc<Sqlite>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<Postgres>),
    #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
    Unavailable(std::convert::Infallible),
}

impl Store {
    fn new(backend: Backend) -> Store {
        Store {
            backend,
            failure: Mutex::new(None),
            unrecorded: Mutex::new(Vec::new()),
            lost: Mutex::new(BTreeSet::new()),
        }
    }

    /// Opens `journal` for a run of `tool`'s documents, whose ids and
    /// content digests are `documents`; returns what earlier runs recorded
    /// of them.
    pub async fn open_for_run(
        journal: &Journal,
        tool: &Tool,
        documents: Vec<(String, String)>,
    ) -> Result<(Store, Recorded), Error> {
        let (tool_name, schema) = header_of(tool);
        match &journal.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => {
                let path = path.clone();
                let (db, recorded) = blocking(move || {
                    let db = Sqlite::open_for_run(&path, &Header { tool: &tool_name, schema: &schema })?;
                    let contents: BTreeMap<String, String> = documents.iter().cloned().collect();
                    let recorded = db.recorded(&contents)?;
                    db.documents(&documents)?;
                    Ok((db, recorded))
                })
                .await?;
                Ok((Store::new(Backend::Sqlite(Arc::new(db))), recorded))
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                let header = postgres::Header { tool: &tool_name, schema: &schema };
                let db = Postgres::open(settings, Some(&header), true).await?;
                let contents: BTreeMap<String, String> = documents.iter().cloned().collect();
                let recorded = db.recorded(&contents, None).await?;
                db.documents(&documents).await?;
                Ok((Store::new(Backend::Postgres(Arc::new(db))), recorded))
            }
        }
    }

    /// Opens `journal` to read it (the review queue, reports), and to
    /// record a review, without the run's lock.
    pub async fn open_for_reading(
        journal: &Journal,
        tool: &Tool,
        documents: Vec<(String, String)>,
    ) -> Result<(Store, Recorded), Error> {
        let (tool_name, schema) = header_of(tool);
        let contents: BTreeMap<String, String> = documents.into_iter().collect();
        match &journal.kind {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Kind::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Kind::Sqlite(path) => {
                let path = path.clone();
                let (db, recorded) = blocking(move || {
                    let header = Header { tool: &tool_name, schema: &schema };
                    let db = Sqlite::open_for_reading(&path, Some(&header))?;
                    let recorded = db.recorded(&contents)?;
                    Ok((db, recorded))
                })
                .await?;
                Ok((Store::new(Backend::Sqlite(Arc::new(db))), recorded))
            }
            #[cfg(feature = "postgres")]
            Kind::Postgres(settings) => {
                let header = postgres::Header { tool: &tool_name, schema: &schema };
                let db = Postgres::open(settings, Some(&header), false).await?;
                let recorded = db.recorded(&contents, None).await?;
                Ok((Store::new(Backend::Postgres(Arc::new(db))), recorded))
            }
        }
    }

    /// The journal on PostgreSQL, whose workers share the run: `None` for SQLite.
    #[cfg(feature = "postgres")]
    pub fn shared(&self) -> Option<&Arc<Postgres>> {
        match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(_) => None,
            Backend::Postgres(db) => Some(db),
        }
    }

    /// The first write that failed, if one did: no model call is to be
    /// made after it.
    /// It names every paid reply that was not recorded.
    pub fn failure(&self) -> Option<Error> {
        let failure = self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        let more = self.unrecorded.lock().unwrap_or_else(|p| p.into_inner());
        if more.is_empty() {
            return Some(failure);
        }
        Some(failure.said(&format!(
            "; and {} more replies were not recorded: {}",
            more.len(),
            more.join("; ")
        )))
    }

    /// The journal's `error` on recording `reply` (the paid reply it could
    /// not record): the run's failure if it is the first, else one more
    /// reply the failure names.
    fn unrecorded_reply(&self, error: Error, reply: String) -> Error {
        let error =
            if reply.is_empty() { error } else { error.said(&format!("; the run stops, and this {reply}")) };
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        match &*failure {
            None => *failure = Some(error.clone()),
            Some(_) if !reply.is_empty() => {
                self.unrecorded.lock().unwrap_or_else(|p| p.into_inner()).push(reply)
            }
            Some(_) => {}
        }
        error
    }

    /// Keeps `error` as the journal's failure, if it is the first.
    pub fn fail(&self, error: &Error) {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if failure.is_none() {
            *failure = Some(error.clone());
        }
    }

    /// Whether another worker took `document` over from this one.
    pub fn lost(&self, document: &str) -> bool {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).contains(document)
    }

    /// `result`, its failure kept as the journal's (the first one).
    fn kept<R>(&self, result: Result<R, Error>) -> Result<R, Error> {
        if let Err(error) = &result {
            self.fail(error);
        }
        result
    }

    /// Runs `work` on an SQLite database off the async threads.
    #[cfg(feature = "sqlite")]
    async fn on_sqlite<R: Send + 'static>(
        db: &Arc<Sqlite>,
        work: impl FnOnce(&Sqlite) -> Result<R, Error> + Send + 'static,
    ) -> Result<R, Error> {
        let db = db.clone();
        blocking(move || work(&db)).await
    }

    /// A reply's record, serialized from borrows before the policy takes the reply.
    pub fn reply_record(
        document: &str,
        content: &str,
        prompt: &Prompt,
        reply: &Reply,
        batch: Option<&str>,
        rung: u32,
    ) -> Result<ReplyRecord, Error> {
        // The prompt is its document (the content digest), the tool and, on
        // a correction, what the last attempt gave: that part is digested.
        let sent = prompt.correction.as_ref().map_or(String::new(), |c| digest(c.previous_output.as_bytes()));
        let output = match &reply.content {
            ReplyContent::ToolCall { input, .. } => Some(input.clone()),
            ReplyContent::ToolCallText { json, .. } => serde_json::from_str(json).ok(),
            _ => None,
        };
        Ok(ReplyRecord {
            document: document.to_string(),
            content: content.to_string(),
            key: CallKey { part: prompt.part(), rung, attempt: prompt.attempt },
            // A stream stopped early: its usage is an estimate.
            cancelled: matches!(reply.content, ReplyContent::Stopped { .. }),
            prompt: sent,
            batch: batch.map(str::to_owned),
            // Not the journal's failure: a reply that does not serialize is malformed.
            reply: serde_json::to_string(reply)
                .map_err(|e| Error::invalid_response(format!("a reply cannot be journaled: {e}")))?,
            output,
        })
    }

    /// Commits a reply, and the outcome it ended the run with (if it did),
    /// before the run acts on it. When the database cannot take it, the
    /// error carries the reply (and the outcome's packet), so a paid reply
    /// is not silently dropped. On PostgreSQL, a reply of a document another
    /// worker took over is not recorded: `Err`, and [`Store::lost`] says so.
    pub fn reply<T>(
        &self,
        mut record: ReplyRecord,
        outcome: Option<&Outcome<T>>,
    ) -> impl Future<Output = Result<(), Error>> + Send + '_ {
        // The outcome's row is made here, so the future does not hold the outcome.
        let output = record.output.take();
        let row = outcome.map(|outcome| OutcomeRow::new(&record.content, outcome, output));
        async move {
            // The journal's error, with the reply it could not record (said only then).
            let result: Result<(), (Error, String)> = match &self.backend {
                #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
                Backend::Unavailable(never) => match *never {},
                #[cfg(feature = "sqlite")]
                Backend::Sqlite(db) => {
                    let written = Store::on_sqlite(db, move |db| {
                        Ok(db
                            .reply(&record, row.as_ref())
                            .map_err(|e| (e, unrecorded(&record, row.as_ref()))))
                    });
                    match written.await {
                        Ok(written) => written,
                        Err(panicked) => Err((panicked, String::new())),
                    }
                }
                #[cfg(feature = "postgres")]
                Backend::Postgres(db) => match db.reply(&record, row.as_ref()).await {
                    Ok(postgres::Recording::Recorded) => Ok(()),
                    Ok(postgres::Recording::LeaseLost) => {
                        self.lost.lock().unwrap_or_else(|p| p.into_inner()).insert(record.document.clone());
                        // Not a failure of the journal's to keep: this worker
                        // leaves the document to its new owner.
                        return Err(db.refused(JournalProblem::LeaseLost { document: record.document }));
                    }
                    Err(e) => Err((e, unrecorded(&record, row.as_ref()))),
                },
            };
            result.map_err(|(error, reply)| self.unrecorded_reply(error, reply))
        }
    }

    /// Records that `document` failed (transport or configuration), with `error`.
    pub async fn failed(
        &self,
        document: &str,
        content: &str,
        error: &Error,
        batch: Option<&str>,
    ) -> Result<(), Error> {
        let (document, content, error, batch) =
            (document.to_string(), content.to_string(), error.to_string(), batch.map(str::to_owned));
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => {
                Store::on_sqlite(db, move |db| db.failed(&document, &content, &error, batch.as_deref())).await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => match db.failed(&document, &content, &error, batch.as_deref()).await {
                Ok(postgres::Recording::Recorded) => Ok(()),
                Ok(postgres::Recording::LeaseLost) => {
                    // Another worker's document now (or its content changed): not ours to fail.
                    self.lost.lock().unwrap_or_else(|p| p.into_inner()).insert(document);
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        self.kept(result)
    }

    /// The intent to create a batch of `documents`, committed before the
    /// create call (on PostgreSQL, only while this worker coordinates the
    /// run's batches); its number.
    pub async fn intent(&self, created_at: i64, documents: Vec<(String, u32, String)>) -> Result<i64, Error> {
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => Store::on_sqlite(db, move |db| db.intent(created_at, &documents)).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => {
                let token =
                    format!("{}/{created_at}/{}", db.worker(), digest(format!("{documents:?}").as_bytes()));
                db.intent(&token, created_at, &documents).await
            }
        };
        self.kept(result)
    }

    /// Records the API's id for the batch of intent `intent`.
    pub async fn batch_created(&self, intent: i64, id: &str) -> Result<(), Error> {
        let id = id.to_string();
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => Store::on_sqlite(db, move |db| db.batch_created(intent, &id)).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.batch_created(intent, &id).await,
        };
        self.kept(result)
    }

    /// Records that intent `intent` made no batch.
    pub async fn abandon(&self, intent: i64) -> Result<(), Error> {
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => Store::on_sqlite(db, move |db| db.abandon(intent)).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.abandon(intent).await,
        };
        self.kept(result)
    }

    /// Records that `document` is sent again in a later batch, and why.
    pub async fn resent(
        &self,
        document: &str,
        batch: &str,
        reason: &str,
        counted: bool,
    ) -> Result<(), Error> {
        let (document, batch, reason) = (document.to_string(), batch.to_string(), reason.to_string());
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => {
                Store::on_sqlite(db, move |db| db.resent(&document, &batch, &reason, counted)).await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.resent(&document, &batch, &reason, counted).await,
        };
        self.kept(result)
    }

    /// Records that batch `batch` was collected whole.
    pub async fn collected(&self, batch: &str) -> Result<(), Error> {
        let batch = batch.to_string();
        let result = match &self.backend {
            #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
            Backend::Unavailable(never) => match *never {},
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(db) => Store::on_sqlite(db, move |db| db.collected(&batch)).await,
            #[cfg(feature = "postgres")]
            Backend::Postgres(db) => db.collected(&batch).await,
        };
        self.kept(result)
    }

    /// Records a reviewer's fix (already validated) and the reviewed outcome.
    pub fn reviewed<T>(
        &self,
        document: &str,
        content: &str,
        fix: &Value,
        outcome: &Outcome<T>,
        output: Value,
    ) -> impl Future<Output = Result<(), Error>> + Send + '_ {
        let row = OutcomeRow::new(content, outcome, Some(output));
        let (document, content, fix) = (document.to_string(), content.to_string(), fix.to_string());
        async move {
            let result = match &self.backend {
                #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
                Backend::Unavailable(never) => match *never {},
                #[cfg(feature = "sqlite")]
                Backend::Sqlite(db) => {
                    Store::on_sqlite(db, move |db| db.reviewed(&document, &content, &fix, &row)).await
                }
                #[cfg(feature = "postgres")]
                Backend::Postgres(db) => db.reviewed(&document, &content, &fix, &row).await,
            };
            self.kept(result)
        }
    }
}

/// Runs `work` to its end on a runtime of its own, on a thread of its own,
/// so a synchronous reader (`summary`, `export_jsonl`) works inside an
/// async runtime and outside one alike.
#[cfg(feature = "postgres")]
fn outside_any_runtime<R: Send>(work: impl Future<Output = Result<R, Error>> + Send) -> Result<R, Error> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Error::io("cannot start a runtime to read the journal", e))?
                    .block_on(work)
            })
            .join()
            .unwrap_or_else(|panic| {
                Err(Error::WorkerPanicked(format!(
                    "reading the journal panicked: {}",
                    crate::error::panic_message(&*panic)
                )))
            })
    })
}

/// A reply (and the outcome it ended with) that the journal could not record.
fn unrecorded(record: &ReplyRecord, outcome: Option<&OutcomeRow>) -> String {
    let mut said = format!(
        "reply of document {} (attempt {}) is not recorded: {}",
        crate::quote_prefix(&record.document),
        record.key.attempt,
        record.reply
    );
    if let Some(outcome) = outcome {
        said.push_str(&format!("; the outcome it ended with: {}", outcome.packet));
    }
    said
}

/// Runs `work` on tokio's blocking threads (SQLite's work).
#[cfg(feature = "sqlite")]
async fn blocking<R: Send + 'static>(
    work: impl FnOnce() -> Result<R, Error> + Send + 'static,
) -> Result<R, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::WorkerPanicked(format!("the journal's worker thread failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool { name: "t".into(), description: String::new(), input_schema: json!({}), strict: false }
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_postgres_journal_needs_a_run_name_and_a_renewal_shorter_than_its_lease() {
        use std::time::Duration;
        let url = "postgres://extract:s3cret@db/x";
        let error = Journal::postgres(url, "").checked().unwrap_err().to_string();
        assert!(error.contains("the run's name is empty") && !error.contains("s3cret"), "{error}");
        let slow = Journal::postgres(url, "march").leases(Duration::from_secs(5), Duration::from_secs(5));
        let error = slow.checked().unwrap_err().to_string();
        assert!(error.contains("not shorter than the lease") && !error.contains("s3cret"), "{error}");
        assert!(Journal::postgres(url, "march").checked().is_ok());
        assert_eq!(Journal::postgres(url, "march").path(), None);
    }

    #[test]
    fn a_content_digest_covers_the_text_a_pdfs_bytes_and_its_text_layer_and_the_run() {
        let run = run_digest(&tool(), None, None);
        let digests = [
            content_digest(&run, &Document::text("Total 3")),
            content_digest(&run, &Document::text("Total 4")),
            content_digest(&run, &Document::pdf(b"%PDF-1.7 a".to_vec())),
            content_digest(&run, &Document::pdf(b"%PDF-1.7 b".to_vec())),
            content_digest(&run, &Document::pdf(b"%PDF-1.7 a".to_vec()).with_text_layer("Total 3")),
            content_digest(&run, &Document::pdf(b"%PDF-1.7 a".to_vec()).with_text_layer("Total 4")),
            content_digest(&run_digest(&tool(), Some("In euros."), None), &Document::text("Total 3")),
        ];
        let distinct: BTreeSet<&String> = digests.iter().collect();
        assert_eq!(distinct.len(), digests.len(), "{digests:?}");
        assert_eq!(digests[0], content_digest(&run, &Document::text("Total 3").with_id("another id")));
    }

    #[tokio::test]
    async fn every_kind_of_reply_reads_back_as_it_was_written_under_a_current_thread_runtime() {
        let dir = std::env::temp_dir().join(format!("extract-journal-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kinds.db");
        let _ = std::fs::remove_file(&path);
        let replies = [
            Reply::tool_call(json!({"total": 3.0})),
            Reply::new(ReplyContent::ToolCallText { name: Some("t".into()), json: "{\"total\":".into() }),
            Reply::new(ReplyContent::Text("I cannot find an invoice here.".into())),
            Reply::new(ReplyContent::Refusal { text: "no".into(), details: Some(json!({"x": 1})) }),
            Reply::new(ReplyContent::Truncated { limit: crate::Truncation::MaxTokens, partial: None }),
            Reply::stopped("{\"total\": -3", "total: check failed: total >= 0")
                .with_usage(crate::Usage::new(10, 4)),
        ];
        let journal = Journal::sqlite(&path);
        let documents = vec![("d".to_string(), "c1".to_string())];
        let (store, recorded) = Store::open_for_run(&journal, &tool(), documents.clone()).await.unwrap();
        assert!(recorded.replies.is_empty());
        let prompt = Prompt::new(tool(), "document");
        for reply in &replies {
            let record = Store::reply_record("d", "c1", &prompt, reply, None, 0).unwrap();
            store.reply::<()>(record, None).await.unwrap();
        }
        drop(store);
        let (_, recorded) = Store::open_for_run(&journal, &tool(), documents).await.unwrap();
        let read: Vec<&Reply> = recorded.replies["d"].iter().map(|r| &r.reply).collect();
        assert_eq!(read, replies.iter().collect::<Vec<_>>());
        assert!(recorded.replies["d"].iter().all(|r| r.key == CallKey::whole(1)));
        // Only the stopped stream is marked cancelled (its usage estimated).
        let cancelled: Vec<bool> = recorded.replies["d"].iter().map(|r| r.cancelled).collect();
        assert_eq!(cancelled, [false, false, false, false, false, true]);
        let (_, changed) =
            Store::open_for_run(&journal, &tool(), vec![("d".into(), "c2".into())]).await.unwrap();
        assert!(changed.replies.is_empty(), "another content: nothing replayed");
        assert!(changed.asked_again.contains("d"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
