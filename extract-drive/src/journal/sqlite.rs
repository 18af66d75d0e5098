//! The journal in an SQLite database: every statement of the journal's SQL
//! is here. Synchronous (rusqlite); [`super::Store`] runs each call off the
//! async threads.
//!
//! The database is in WAL mode with `synchronous=FULL`, so each transaction
//! is on disk when its commit returns (in WAL mode `NORMAL` does not sync
//! each commit). Its header carries our `application_id` and the schema's
//! `user_version`; a file is looked at byte by byte before SQLite ever opens
//! it for writing, so a file that is not one of our journals is refused and
//! left as it was. One run at a time: an advisory lock (`flock`) on a file
//! beside the database (`<name>.lock`, named from the file's own path, so
//! every spelling of the path finds it), held while the run has it open and
//! gone when the process dies. Readers take no lock.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::stored::{Exported, StoredReview};
use super::{Event, JournalProblem, OpenBatch, OutcomeRow, Recorded, ReplyRecord};
use crate::Error;

/// Our `application_id` in the database header: "EXTR".
pub(crate) const APPLICATION_ID: i32 = 0x4558_5452;

/// The schema's version (`user_version`). A journal of a newer version is
/// refused; later versions migrate older ones forward ([`migrate`]): format 2
/// added who reviewed, when, the fields before and after, the checks
/// overridden, and rejected documents.
pub(crate) const FORMAT: i32 = 2;

/// The schema of a run: its header, documents, replies, outcomes, batch
/// intents and ids, resends, failures and reviews. `at` orders the events
/// of a document across tables (one writer at a time, so a counter).
const SCHEMA: &str = "
CREATE TABLE run (
    key TEXT PRIMARY KEY,      -- 'tool', 'schema', 'format'
    value TEXT NOT NULL
);
CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,     -- digest of its content, the tool and the instructions
    state TEXT NOT NULL        -- 'pending', 'valid', 'escalated', 'failed'
);
CREATE TABLE replies (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    prompt TEXT NOT NULL,      -- digest of the correction it answered ('' on a first attempt)
    batch TEXT,
    reply TEXT NOT NULL,       -- the Reply as JSON
    done INTEGER NOT NULL      -- whether it ended the document's run
);
CREATE INDEX replies_by_document ON replies (document, at);
CREATE TABLE outcomes (
    document TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    status TEXT NOT NULL,      -- 'ok', 'escalated'
    packet TEXT NOT NULL,      -- the outcome packet as JSON
    attempts INTEGER NOT NULL,
    usage TEXT NOT NULL,       -- Usage as JSON
    facts TEXT NOT NULL,       -- what the run's statistics count of it, as JSON
    reviewed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE failures (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    batch TEXT,
    error TEXT NOT NULL
);
CREATE TABLE batches (
    intent INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,  -- unix seconds, committed before the create call
    requests INTEGER NOT NULL,
    documents TEXT NOT NULL,      -- [[id, attempt, content], ...] as JSON
    id TEXT UNIQUE,               -- the API's batch id, once it answered
    collected INTEGER NOT NULL DEFAULT 0,
    abandoned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE resends (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    batch TEXT NOT NULL,
    reason TEXT NOT NULL,
    counted INTEGER NOT NULL
);
CREATE TABLE reviews (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    fix TEXT NOT NULL
);
";

/// What format 2 adds to format 1: each review's reviewer, time (RFC 3339),
/// the changed fields before and after (JSON objects) and the fingerprints
/// of the violations it overrode (a JSON list); rejected documents.
const FORMAT_2: &str = "
ALTER TABLE reviews ADD COLUMN reviewer TEXT;
ALTER TABLE reviews ADD COLUMN reviewed_at TEXT;
ALTER TABLE reviews ADD COLUMN before TEXT;
ALTER TABLE reviews ADD COLUMN after TEXT;
ALTER TABLE reviews ADD COLUMN overrode TEXT;
CREATE TABLE rejections (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    rejected_at TEXT NOT NULL,  -- RFC 3339
    reason TEXT NOT NULL
);
";

/// An open journal: the connection, and the lock that makes it the only
/// run on it (dropped after the connection: fields drop in order).
pub(crate) struct Sqlite {
    path: PathBuf,
    connection: Mutex<Connection>,
    /// The next `at` of an event.
    next_at: Mutex<i64>,
    _lock: Option<File>,
}

/// `journal <path>: <what>` as an I/O error keeping its cause.
fn io(path: &Path, what: &str, error: std::io::Error) -> Error {
    Error::io(format!("journal {}: {what}", path.display()), error)
}

/// A database error as an [`Error::Io`] naming the journal and what was
/// being done; a full disk keeps its kind.
pub(crate) fn db(path: &Path, what: &str, error: rusqlite::Error) -> Error {
    let kind = match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => std::io::ErrorKind::StorageFull,
        Some(rusqlite::ErrorCode::ReadOnly) => std::io::ErrorKind::PermissionDenied,
        Some(rusqlite::ErrorCode::CannotOpen) => std::io::ErrorKind::NotFound,
        _ => std::io::ErrorKind::Other,
    };
    io(path, what, std::io::Error::new(kind, error))
}

/// What a file at a journal's path is, from its first bytes.
enum Found {
    /// No file, or an empty one: a new journal.
    Nothing,
    /// An SQLite database (whose header is read next).
    Database,
}

/// Reads the first bytes of `path` without writing it: only a missing or
/// empty file, or an SQLite database, goes on; anything else is refused.
fn look_at(path: &Path) -> Result<Found, Error> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io(path, "cannot open it", e)),
    };
    let mut head = Vec::with_capacity(100);
    (&mut file).take(100).read_to_end(&mut head).map_err(|e| io(path, "cannot read it", e))?;
    drop(file);
    if head.is_empty() {
        return Ok(Found::Nothing);
    }
    if head.starts_with(b"SQLite format 3\0") {
        return Ok(Found::Database);
    }
    if head.starts_with(b"{\"record\":\"header\"") {
        return Err(refused(path, JournalProblem::OldFormat));
    }
    let found = format!("not an SQLite database: it begins {}", shown_prefix(&head));
    Err(refused(path, JournalProblem::NotAJournal { found }))
}

/// The journal at `path` refused for `problem`.
fn refused(path: &Path, problem: JournalProblem) -> Error {
    Error::Journal { journal: path.display().to_string(), problem }
}

/// The header values a journal is for: its tool, the digest of the tool's schema.
pub(crate) struct Header<'a> {
    pub tool: &'a str,
    pub schema: &'a str,
}

impl Sqlite {
    /// Opens the journal at `path` for a run: checks the file's first bytes,
    /// takes the lock, creates the database if there is none, and checks
    /// its header against `header`.
    pub fn open_for_run(path: &Path, header: &Header<'_>) -> Result<Sqlite, Error> {
        let lock = lock(path)?;
        let found = look_at(path)?;
        if let Found::Database = found {
            // Read-only first: a database of another application is never written.
            let reading = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(|e| db(path, "cannot open it", e))?;
            check_header(&reading, path, header)?;
        }
        let connection = Connection::open(path).map_err(|e| db(path, "cannot open it", e))?;
        connection.busy_timeout(Duration::from_secs(10)).map_err(|e| db(path, "cannot open it", e))?;
        if let Found::Nothing = found {
            create(&connection, path, header)?;
        } else {
            check_header(&connection, path, header)?;
            migrate(&connection, path)?;
        }
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| connection.pragma_update(None, "synchronous", "FULL"))
            .map_err(|e| db(path, "cannot set WAL mode with synchronous=FULL", e))?;
        let next_at = next_at(&connection).map_err(|e| db(path, "cannot read it", e))?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            next_at: Mutex::new(next_at),
            _lock: Some(lock),
        })
    }

    /// Opens an existing journal at `path` to read it (and to record a
    /// review, one short transaction), without the run's lock.
    pub fn open_for_reading(path: &Path, header: Option<&Header<'_>>) -> Result<Sqlite, Error> {
        // No file of ours is opened (and closed) here: a run of this process
        // may have the database open, and closing any other descriptor of
        // the file would drop its connection's POSIX locks. SQLite opens an
        // existing file only (no CREATE), and reading a file that is not a
        // database writes nothing: its header check fails first.
        if !path.exists() {
            return Err(io(
                path,
                "there is no journal there",
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }
        let connection = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .map_err(|e| db(path, "cannot open it", e))?;
        connection.busy_timeout(Duration::from_secs(10)).map_err(|e| db(path, "cannot open it", e))?;
        match header {
            Some(header) => check_header(&connection, path, header)?,
            None => check_ours(&connection, path)?,
        }
        migrate(&connection, path)?;
        connection
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| db(path, "cannot set synchronous=FULL", e))?;
        let next_at = next_at(&connection).map_err(|e| db(path, "cannot read it", e))?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            next_at: Mutex::new(next_at),
            _lock: None,
        })
    }

    /// Runs `work` in one transaction, committed (durably) before it returns.
    fn transaction<R>(
        &self,
        what: &str,
        work: impl FnOnce(&rusqlite::Transaction<'_>, &mut i64) -> rusqlite::Result<R>,
    ) -> Result<R, Error> {
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let mut next_at = self.next_at.lock().unwrap_or_else(|p| p.into_inner());
        let mut at = *next_at;
        let done = (|| {
            let transaction = connection.transaction()?;
            let result = work(&transaction, &mut at)?;
            transaction.commit()?;
            Ok(result)
        })();
        match done {
            Ok(result) => {
                *next_at = at;
                Ok(result)
            }
            Err(e) => Err(db(&self.path, what, e)),
        }
    }

    /// Records the run's documents with their content digests (new ones
    /// pending; a changed one pending again).
    pub fn documents(&self, documents: &[(String, String)]) -> Result<(), Error> {
        self.transaction("cannot record the run's documents", |t, _| {
            let mut insert = t.prepare(
                "INSERT INTO documents (id, content, state) VALUES (?1, ?2, 'pending')
                 ON CONFLICT (id) DO UPDATE SET content = excluded.content, state = 'pending'
                 WHERE content <> excluded.content",
            )?;
            for (id, content) in documents {
                insert.execute(params![id, content])?;
            }
            Ok(())
        })
    }

    /// A reply, and the outcome it ended the run with, in one transaction.
    pub fn reply(&self, record: &ReplyRecord, outcome: Option<&OutcomeRow>) -> Result<(), Error> {
        self.transaction("cannot record a reply", |t, at| {
            t.execute(
                "INSERT INTO replies (at, document, content, attempt, prompt, batch, reply, done)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    *at,
                    record.document,
                    record.content,
                    record.attempt,
                    record.prompt,
                    record.batch,
                    record.reply,
                    outcome.is_some()
                ],
            )?;
            *at += 1;
            if let Some(outcome) = outcome {
                write_outcome(t, &record.document, outcome)?;
            }
            Ok(())
        })
    }

    /// A transport failure of `document` (of a result of `batch`, if any).
    pub fn failed(
        &self,
        document: &str,
        content: &str,
        error: &str,
        batch: Option<&str>,
    ) -> Result<(), Error> {
        self.transaction("cannot record a failure", |t, at| {
            t.execute(
                "INSERT INTO failures (at, document, content, batch, error) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![*at, document, content, batch, error],
            )?;
            *at += 1;
            t.execute("UPDATE documents SET state = 'failed' WHERE id = ?1", params![document])?;
            Ok(())
        })
    }

    /// The intent to create a batch of `documents` ([id, attempt, content]),
    /// committed before the create call; its number.
    pub fn intent(&self, created_at: i64, documents: &[(String, u32, String)]) -> Result<i64, Error> {
        let listed = serde_json::to_string(documents).unwrap_or_default();
        self.transaction("cannot record the intent to create a message batch", |t, _| {
            t.execute(
                "INSERT INTO batches (created_at, requests, documents) VALUES (?1, ?2, ?3)",
                params![created_at, documents.len() as i64, listed],
            )?;
            Ok(t.last_insert_rowid())
        })
    }

    /// The API's id of the batch of `intent`.
    pub fn batch_created(&self, intent: i64, id: &str) -> Result<(), Error> {
        self.transaction("cannot record a message batch's id", |t, _| {
            t.execute("UPDATE batches SET id = ?2 WHERE intent = ?1", params![intent, id])?;
            Ok(())
        })
    }

    /// The batch of `intent` was never created, or is to be forgotten: its
    /// documents are sent again.
    pub fn abandon(&self, intent: i64) -> Result<(), Error> {
        self.transaction("cannot record that a batch intent is abandoned", |t, _| {
            t.execute("UPDATE batches SET abandoned = 1 WHERE intent = ?1", params![intent])?;
            Ok(())
        })
    }

    pub fn resent(&self, document: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        self.transaction("cannot record a resend", |t, at| {
            t.execute(
                "INSERT INTO resends (at, document, batch, reason, counted) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![*at, document, batch, reason, counted],
            )?;
            *at += 1;
            Ok(())
        })
    }

    pub fn collected(&self, batch: &str) -> Result<(), Error> {
        self.transaction("cannot record that a message batch was collected", |t, _| {
            t.execute("UPDATE batches SET collected = 1 WHERE id = ?1", params![batch])?;
            Ok(())
        })
    }

    /// A reviewer's fix (already validated), and the reviewed outcome.
    pub fn reviewed(
        &self,
        document: &str,
        content: &str,
        fix: &str,
        outcome: &OutcomeRow,
    ) -> Result<(), Error> {
        self.transaction("cannot record a review", |t, at| {
            t.execute(
                "INSERT INTO reviews (at, document, content, fix) VALUES (?1, ?2, ?3, ?4)",
                params![*at, document, content, fix],
            )?;
            *at += 1;
            write_outcome(t, document, outcome)?;
            t.execute("UPDATE outcomes SET reviewed = 1 WHERE document = ?1", params![document])?;
            Ok(())
        })
    }

    /// What earlier runs recorded, for documents whose content digests are
    /// `contents` (by id): replies under another content are kept in the
    /// database but not replayed, and such documents are counted.
    pub fn recorded(&self, contents: &BTreeMap<String, String>) -> Result<Recorded, Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        read(&connection, contents).map_err(|e| db(&self.path, "cannot read it", e))
    }

    /// Every document of the run, in id order, with its outcome for its
    /// current content, if any, and its last failure.
    pub fn documents_with_outcomes(&self) -> Result<Vec<Exported>, Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let rows = (|| {
            let mut select = connection.prepare(
                "SELECT d.id, o.packet, o.attempts, o.usage, o.reviewed, o.facts,
                        (SELECT error FROM failures f WHERE f.document = d.id AND f.content = d.content
                         ORDER BY at DESC LIMIT 1)
                 FROM documents d LEFT JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 ORDER BY d.id",
            )?;
            let rows = select.query_map([], |row| {
                let json = |text: Option<String>| {
                    text.map(|t| serde_json::from_str(&t).unwrap_or(serde_json::Value::Null))
                };
                let packet = json(row.get(1)?);
                let outcome = match packet {
                    Some(packet) => Some((
                        packet,
                        row.get::<_, u32>(2)?,
                        json(row.get(3)?).unwrap_or_default(),
                        row.get::<_, bool>(4)?,
                    )),
                    None => None,
                };
                let facts = json(row.get(5)?).unwrap_or_default();
                Ok(Exported { id: row.get(0)?, outcome, facts, failure: row.get(6)? })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })();
        rows.map_err(|e| db(&self.path, "cannot read its outcomes", e))
    }
}

/// Whether `document` (of content `content`) still waits for a reviewer:
/// escalated, not reviewed, not rejected.
const WAITING: &str =
    "SELECT count(*) FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
     WHERE d.id = ?1 AND d.content = ?2 AND o.status = 'escalated' AND o.reviewed = 0
       AND NOT EXISTS (SELECT 1 FROM rejections r WHERE r.document = d.id AND r.content = d.content)";

impl Sqlite {
    /// Opens an existing journal of `header`'s tool read-only: what the
    /// desk reads (SQLite's WAL lets it read while a run writes; the busy
    /// timeout covers a checkpoint). It records nothing and takes no lock.
    pub fn open_read_only(path: &Path, header: &Header<'_>) -> Result<Sqlite, Error> {
        let connection = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| db(path, "cannot open it to read", e))?;
        connection.busy_timeout(Duration::from_secs(10)).map_err(|e| db(path, "cannot open it", e))?;
        check_header(&connection, path, header)?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            next_at: Mutex::new(0),
            _lock: None,
        })
    }

    /// Every document that waits for a reviewer (escalated for its current
    /// content, neither reviewed nor rejected), in id order, with its
    /// content digest and outcome packet; and how many were reviewed and
    /// rejected.
    pub fn waiting(&self) -> Result<(Vec<Waiting>, u64, u64), Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let read = (|| {
            let mut select = connection.prepare(
                "SELECT d.id, d.content, o.packet FROM documents d
                 JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 WHERE o.status = 'escalated' AND o.reviewed = 0
                   AND NOT EXISTS (SELECT 1 FROM rejections r WHERE r.document = d.id AND r.content = d.content)
                 ORDER BY d.id",
            )?;
            let rows = select.query_map([], |r| {
                let packet: String = r.get(2)?;
                Ok(Waiting {
                    id: r.get(0)?,
                    content: r.get(1)?,
                    packet: serde_json::from_str(&packet).unwrap_or(serde_json::Value::Null),
                })
            })?;
            let waiting = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            let count = |sql: &str| connection.query_row(sql, [], |r| r.get::<_, i64>(0));
            let reviewed = count(
                "SELECT count(*) FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 WHERE o.reviewed = 1",
            )?;
            let rejected = count(
                "SELECT count(DISTINCT r.document) FROM rejections r JOIN documents d
                 ON d.id = r.document AND d.content = r.content",
            )?;
            Ok((waiting, reviewed as u64, rejected as u64))
        })();
        read.map_err(|e| db(&self.path, "cannot read its review queue", e))
    }

    /// The ids of every document that waits for a reviewer, in id order,
    /// and document `id`'s content digest and outcome packet if it is one:
    /// what a document's page needs, without reading every packet.
    pub fn around(&self, id: &str) -> Result<(Vec<String>, Option<Waiting>), Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let read = (|| {
            let mut select = connection.prepare(
                "SELECT d.id FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 WHERE o.status = 'escalated' AND o.reviewed = 0
                   AND NOT EXISTS (SELECT 1 FROM rejections r WHERE r.document = d.id AND r.content = d.content)
                 ORDER BY d.id",
            )?;
            let ids =
                select.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
            if ids.binary_search_by(|probe| probe.as_str().cmp(id)).is_err() {
                return Ok((ids, None));
            }
            let (content, packet): (String, String) = connection.query_row(
                "SELECT d.content, o.packet FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 WHERE d.id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let packet = serde_json::from_str(&packet).unwrap_or(serde_json::Value::Null);
            Ok((ids, Some(Waiting { id: id.to_string(), content, packet })))
        })();
        read.map_err(|e| db(&self.path, "cannot read its review queue", e))
    }

    /// A reviewer's fix from the desk (already validated) and the reviewed
    /// outcome, in one immediate transaction (short: one check and three
    /// writes). `Ok(false)` records nothing: the document no longer waits
    /// (another reviewer was first, or a run changed it).
    pub fn desk_review(&self, review: &DeskReview<'_>, outcome: &OutcomeRow) -> Result<bool, Error> {
        self.immediate("cannot record a review", |t, at| {
            if t.query_row(WAITING, params![review.document, review.content], |r| r.get::<_, i64>(0))? == 0 {
                return Ok(false);
            }
            t.execute(
                "INSERT INTO reviews (at, document, content, fix, reviewer, reviewed_at, before, after, overrode)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    at,
                    review.document,
                    review.content,
                    review.fix,
                    review.reviewer,
                    review.at,
                    review.before,
                    review.after,
                    review.overrode
                ],
            )?;
            write_outcome(t, review.document, outcome)?;
            t.execute("UPDATE outcomes SET reviewed = 1 WHERE document = ?1", params![review.document])?;
            Ok(true)
        })
    }

    /// A document rejected by a reviewer (its source is unusable), in one
    /// immediate transaction; `Ok(false)` records nothing: it no longer waits.
    pub fn rejection(
        &self,
        document: &str,
        content: &str,
        reviewer: &str,
        rejected_at: &str,
        reason: &str,
    ) -> Result<bool, Error> {
        self.immediate("cannot record a rejection", |t, at| {
            if t.query_row(WAITING, params![document, content], |r| r.get::<_, i64>(0))? == 0 {
                return Ok(false);
            }
            t.execute(
                "INSERT INTO rejections (at, document, content, reviewer, rejected_at, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![at, document, content, reviewer, rejected_at, reason],
            )?;
            Ok(true)
        })
    }

    /// Runs `work` in an immediate transaction (the write lock taken first,
    /// so what it checks cannot change before it writes), with the next
    /// `at` read inside it: a run writing the journal meanwhile cannot take
    /// the same one.
    fn immediate<R>(
        &self,
        what: &str,
        work: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> rusqlite::Result<R>,
    ) -> Result<R, Error> {
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let done = (|| {
            let transaction =
                connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let at = next_at(&transaction)?;
            let result = work(&transaction, at)?;
            transaction.commit()?;
            Ok(result)
        })();
        done.map_err(|e| db(&self.path, what, e))
    }

    /// Every review and rejection of the run's documents as they are now,
    /// oldest first: the fixes as (document, reviewer, time, fix, before,
    /// after, overrode), the rejections as (document, reviewer, time, reason).
    pub fn reviews(&self) -> Result<Vec<StoredReview>, Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let read = (|| {
            let mut select = connection.prepare(
                "SELECT r.at, r.document, r.reviewer, r.reviewed_at, r.fix, r.before, r.after, r.overrode, NULL
                 FROM reviews r JOIN documents d ON d.id = r.document AND d.content = r.content
                 UNION ALL
                 SELECT j.at, j.document, j.reviewer, j.rejected_at, NULL, NULL, NULL, NULL, j.reason
                 FROM rejections j JOIN documents d ON d.id = j.document AND d.content = j.content
                 ORDER BY 1",
            )?;
            let rows = select.query_map([], |r| {
                Ok(StoredReview {
                    document: r.get(1)?,
                    reviewer: r.get(2)?,
                    at: r.get(3)?,
                    fix: r.get(4)?,
                    before: r.get(5)?,
                    after: r.get(6)?,
                    overrode: r.get(7)?,
                    rejected: r.get(8)?,
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })();
        read.map_err(|e| db(&self.path, "cannot read its reviews", e))
    }
}

/// A document waiting for a reviewer: its id, content digest and outcome packet.
pub(crate) struct Waiting {
    pub id: String,
    pub content: String,
    pub packet: serde_json::Value,
}

/// A desk review as the journal stores it (JSON texts).
pub(crate) struct DeskReview<'a> {
    pub document: &'a str,
    pub content: &'a str,
    pub fix: &'a str,
    pub reviewer: &'a str,
    pub at: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    pub overrode: &'a str,
}

fn write_outcome(
    t: &rusqlite::Transaction<'_>,
    document: &str,
    outcome: &OutcomeRow,
) -> rusqlite::Result<()> {
    t.execute(
        "INSERT INTO outcomes (document, content, status, packet, attempts, usage, facts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (document) DO UPDATE SET content = excluded.content, status = excluded.status,
             packet = excluded.packet, attempts = excluded.attempts, usage = excluded.usage,
             facts = excluded.facts, reviewed = 0",
        params![
            document,
            outcome.content,
            outcome.status,
            outcome.packet,
            outcome.attempts,
            outcome.usage,
            outcome.facts
        ],
    )?;
    let state = if outcome.status == "ok" { "valid" } else { "escalated" };
    t.execute("UPDATE documents SET state = ?2 WHERE id = ?1", params![document, state])?;
    Ok(())
}

/// The lock of a run on the journal at `path`: `flock` on `<file>.lock`,
/// where `<file>` is the database file's own path, whatever spelling
/// `path` is ([`identity`]), so that a symbolic link, a relative path or
/// `a/../run.db` finds the lock the same file's run holds. Not a lock on
/// the database file itself: closing any descriptor of that file (SQLite
/// closes its own) would drop the POSIX locks of the process on it.
fn lock(path: &Path) -> Result<File, Error> {
    let mut name =
        identity(path).map_err(|e| io(path, "cannot open it (its lock file)", e))?.into_os_string();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| io(path, "cannot open it (its lock file)", e))?;
    file.try_lock().map_err(|e| match e {
        TryLockError::WouldBlock => refused(path, JournalProblem::InUse),
        TryLockError::Error(e) => io(path, "cannot lock it", e),
    })?;
    Ok(file)
}

/// The file a journal's path names, as one absolute path with no symbolic
/// link, `.` or `..` in it, whether the file exists yet or not: its
/// directory made canonical, and a symbolic link in its last part followed
/// (a dangling one too: the journal it names is created where it points,
/// as SQLite follows it).
fn identity(path: &Path) -> std::io::Result<PathBuf> {
    /// As many links as the kernel follows in one path (Linux's `MAXSYMLINKS`).
    const MAX_LINKS: usize = 40;
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Some(name) = path.file_name().map(ToOwned::to_owned) else {
            // `..`, `/` or `.` last: not a file's name; whatever it names.
            return path.canonicalize();
        };
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.canonicalize()?,
            _ => std::env::current_dir()?.canonicalize()?,
        };
        let file = parent.join(name);
        match std::fs::read_link(&file) {
            // A link, absolute or relative to its own directory.
            Ok(target) => path = parent.join(target),
            // Not a link (or no file yet): the file itself.
            Err(_) => return Ok(file),
        }
    }
    // A loop: the system says so.
    path.canonicalize()
}

/// A new journal: header and schema in one transaction, before WAL mode
/// (so that the database's first page already says whose it is).
fn create(connection: &Connection, path: &Path, header: &Header<'_>) -> Result<(), Error> {
    let made = (|| {
        let transaction = connection.unchecked_transaction()?;
        transaction.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {FORMAT}; {SCHEMA} {FORMAT_2}"
        ))?;
        transaction.execute(
            "INSERT INTO run (key, value) VALUES ('tool', ?1), ('schema', ?2), ('format', ?3)",
            params![header.tool, header.schema, FORMAT.to_string()],
        )?;
        transaction.commit()
    })();
    made.map_err(|e| db(path, "cannot create it", e))
}

/// Brings a journal of an older format (checked ours, not newer) up to
/// [`FORMAT`], in one immediate transaction: two openers at once migrate it
/// once, the second finding it done.
fn migrate(connection: &Connection, path: &Path) -> Result<(), Error> {
    let version = |c: &Connection| {
        c.query_row("SELECT user_version FROM pragma_user_version", [], |r| r.get::<_, i32>(0))
    };
    let done = (|| {
        if version(connection)? >= FORMAT {
            return Ok(());
        }
        let transaction =
            rusqlite::Transaction::new_unchecked(connection, rusqlite::TransactionBehavior::Immediate)?;
        if version(&transaction)? < 2 {
            transaction.execute_batch(FORMAT_2)?;
        }
        transaction.execute_batch(&format!("PRAGMA user_version = {FORMAT}"))?;
        transaction.execute("UPDATE run SET value = ?1 WHERE key = 'format'", params![FORMAT.to_string()])?;
        transaction.commit()
    })();
    done.map_err(|e| db(path, &format!("cannot bring it to format {FORMAT}"), e))
}

/// The first bytes of a file, for an error message.
fn shown_prefix(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(&head[..head.len().min(24)]).into_owned();
    format!("{text:?}")
}

/// `Err` unless the database is a journal of ours, of a format this version reads.
fn check_ours(connection: &Connection, path: &Path) -> Result<(), Error> {
    let (application, version): (i32, i32) = connection
        .query_row("SELECT * FROM pragma_application_id, pragma_user_version", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => {
                refused(path, JournalProblem::NotAJournal { found: "not an SQLite database".into() })
            }
            _ => db(path, "cannot read its header", e),
        })?;
    if application != APPLICATION_ID {
        let found = format!(
            "its application_id is {application:#x}, not {APPLICATION_ID:#x}: an SQLite database of another program"
        );
        return Err(refused(path, JournalProblem::NotAJournal { found }));
    }
    if version > FORMAT {
        return Err(refused(
            path,
            JournalProblem::NewerFormat { found: version as u32, supported: FORMAT as u32 },
        ));
    }
    Ok(())
}

/// `Err` unless the journal is ours and was written for `header`'s tool and schema.
fn check_header(connection: &Connection, path: &Path, header: &Header<'_>) -> Result<(), Error> {
    check_ours(connection, path)?;
    let value = |key: &str| -> Result<String, Error> {
        connection
            .query_row("SELECT value FROM run WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| db(path, "cannot read its header", e))
            .map(Option::unwrap_or_default)
    };
    let (tool, schema) = (value("tool")?, value("schema")?);
    if tool != header.tool || schema != header.schema {
        let (expected_tool, expected_schema) = (header.tool.to_string(), header.schema.to_string());
        return Err(refused(
            path,
            JournalProblem::OtherTool { tool, schema, expected_tool, expected_schema },
        ));
    }
    Ok(())
}

fn next_at(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row(
        "SELECT 1 + max(coalesce((SELECT max(at) FROM replies), 0), coalesce((SELECT max(at) FROM failures), 0),
                        coalesce((SELECT max(at) FROM resends), 0), coalesce((SELECT max(at) FROM reviews), 0),
                        coalesce((SELECT max(at) FROM rejections), 0))",
        [],
        |r| r.get(0),
    )
}

fn read(connection: &Connection, contents: &BTreeMap<String, String>) -> rusqlite::Result<Recorded> {
    let mut events: Vec<(i64, Event)> = Vec::new();
    {
        let mut select = connection.prepare("SELECT at, document, content, batch, reply FROM replies")?;
        let rows = select.query_map([], |r| {
            Ok((
                r.get(0)?,
                Event::Reply { document: r.get(1)?, content: r.get(2)?, batch: r.get(3)?, reply: r.get(4)? },
            ))
        })?;
        for row in rows {
            events.push(row?);
        }
        let mut select = connection.prepare("SELECT at, document, content, batch FROM failures")?;
        let rows = select.query_map([], |r| {
            Ok((r.get(0)?, Event::Failed { document: r.get(1)?, content: r.get(2)?, batch: r.get(3)? }))
        })?;
        for row in rows {
            events.push(row?);
        }
        let mut select = connection.prepare("SELECT at, document, batch, counted FROM resends")?;
        let rows = select.query_map([], |r| {
            Ok((r.get(0)?, Event::Resent { document: r.get(1)?, batch: r.get(2)?, counted: r.get(3)? }))
        })?;
        for row in rows {
            events.push(row?);
        }
    }
    let mut reviews = Vec::new();
    let mut rejections = Vec::new();
    let mut batches = Vec::new();
    {
        let mut select = connection.prepare("SELECT document, content, fix FROM reviews ORDER BY at")?;
        let rows = select.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })?;
        for row in rows {
            reviews.push(row?);
        }
        let mut select = connection.prepare("SELECT document, content FROM rejections")?;
        let rows = select.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            rejections.push(row?);
        }
        let mut select = connection.prepare(
            "SELECT intent, created_at, requests, documents, id FROM batches
             WHERE collected = 0 AND abandoned = 0 ORDER BY intent",
        )?;
        let rows = select.query_map([], |r| {
            Ok(OpenBatch {
                intent: r.get(0)?,
                created_at: r.get(1)?,
                requests: r.get(2)?,
                documents: r.get(3)?,
                id: r.get(4)?,
            })
        })?;
        for row in rows {
            batches.push(row?);
        }
    }
    Recorded::from_events(events, reviews, rejections, batches, contents)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_of_format_1_is_brought_to_format_2_by_its_first_writer_and_keeps_its_rows() {
        let dir = std::env::temp_dir().join(format!("extract-journal-migrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.db");
        let _ = std::fs::remove_file(&path);
        {
            // A journal as format 1 wrote it, with one review.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1; {SCHEMA}"
            ))
            .unwrap();
            old.execute_batch(
                "INSERT INTO run (key, value) VALUES ('tool', 't'), ('schema', 's'), ('format', '1');
                 INSERT INTO documents (id, content, state) VALUES ('d', 'c', 'valid');
                 INSERT INTO reviews (at, document, content, fix) VALUES (1, 'd', 'c', '{\"total\":3}');",
            )
            .unwrap();
        }
        let header = Header { tool: "t", schema: "s" };
        let journal = Sqlite::open_for_reading(&path, Some(&header)).unwrap();
        let reviews = journal.reviews().unwrap();
        assert_eq!(reviews.len(), 1);
        assert_eq!(
            (reviews[0].fix.as_deref(), reviews[0].reviewer.as_deref()),
            (Some("{\"total\":3}"), None)
        );
        drop(journal);
        let db = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let version: i32 =
            db.query_row("SELECT user_version FROM pragma_user_version", [], |r| r.get(0)).unwrap();
        let format: String =
            db.query_row("SELECT value FROM run WHERE key = 'format'", [], |r| r.get(0)).unwrap();
        assert_eq!((version, format.as_str()), (FORMAT, "2"));
        // A read-only reader of the migrated journal sees the new tables.
        let reader = Sqlite::open_read_only(&path, &header).unwrap();
        assert_eq!(reader.waiting().unwrap().0.len(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
