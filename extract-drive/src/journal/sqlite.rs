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

use super::migrations;
use super::rows::{Event, Exported, OpenBatch, StoredReview, Waiting};
use super::{JournalProblem, OutcomeRow, Recorded, ReplyRecord};
use crate::Error;

/// Our `application_id` in the database header: "EXTR".
pub(crate) const APPLICATION_ID: i32 = 0x4558_5452;

/// The schema's version (`user_version`): the number of the newest
/// migration ([`migrations::SQLITE`]). A journal of a newer version is
/// refused; an older one is brought forward by [`migrate`].
pub(crate) const FORMAT: i32 = migrations::newest(migrations::SQLITE) as i32;

/// An open journal: the connection, and the lock that makes it the only
/// run on it (dropped after the connection: fields drop in order).
pub(crate) struct Sqlite {
    path: PathBuf,
    connection: Mutex<Connection>,
    /// The next `seq` of an event.
    next_seq: Mutex<i64>,
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

/// Looks at `path` without writing it: only a missing or empty file, or an
/// SQLite database, goes on; anything else is refused.
///
/// No descriptor of a database is opened here: closing any descriptor of a
/// file drops every POSIX lock this process holds on it, SQLite's own
/// included (a reader of this process would lose its lock, and another
/// process could then delete the write-ahead log under it). The size comes
/// from the file's metadata and the header through SQLite, which shares one
/// descriptor per file among a process's connections; the first bytes are
/// read directly only of a file SQLite says is no database.
fn look_at(path: &Path) -> Result<Found, Error> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io(path, "cannot look at it", e)),
        Ok(metadata) if metadata.len() == 0 => return Ok(Found::Nothing),
        Ok(_) => {}
    }
    let reading = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| db(path, "cannot open it", e))?;
    let header = reading.query_row("SELECT * FROM pragma_application_id", [], |r| r.get::<_, i32>(0));
    drop(reading);
    match header {
        Ok(_) => return Ok(Found::Database),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) => {}
        Err(e) => return Err(db(path, "cannot read it", e)),
    }
    // Not a database: SQLite holds no lock on it, so reading it here costs none.
    let mut head = Vec::with_capacity(100);
    File::open(path)
        .and_then(|file| file.take(100).read_to_end(&mut head))
        .map_err(|e| io(path, "cannot read it", e))?;
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
        let next_seq = next_seq(&connection).map_err(|e| db(path, "cannot read it", e))?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            next_seq: Mutex::new(next_seq),
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
        let next_seq = next_seq(&connection).map_err(|e| db(path, "cannot read it", e))?;
        Ok(Sqlite {
            path: path.to_path_buf(),
            connection: Mutex::new(connection),
            next_seq: Mutex::new(next_seq),
            _lock: None,
        })
    }

    /// Runs `work` in one transaction, committed (durably) before it
    /// returns, with the next `seq` of an event.
    fn transaction<R>(
        &self,
        what: &str,
        work: impl FnOnce(&rusqlite::Transaction<'_>, &mut i64) -> rusqlite::Result<R>,
    ) -> Result<R, Error> {
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let mut next_seq = self.next_seq.lock().unwrap_or_else(|p| p.into_inner());
        let mut seq = *next_seq;
        let done = (|| {
            let transaction = connection.transaction()?;
            let result = work(&transaction, &mut seq)?;
            transaction.commit()?;
            Ok(result)
        })();
        match done {
            Ok(result) => {
                *next_seq = seq;
                Ok(result)
            }
            Err(e) => Err(db(&self.path, what, e)),
        }
    }

    /// Reads with the connection (statements prepared once per connection).
    fn reading<R>(
        &self,
        what: &str,
        work: impl FnOnce(&Connection) -> rusqlite::Result<R>,
    ) -> Result<R, Error> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        work(&connection).map_err(|e| db(&self.path, what, e))
    }

    /// Records the run's documents with their content digests (new ones
    /// pending; a changed one pending again).
    pub fn documents(&self, documents: &[(String, String)]) -> Result<(), Error> {
        self.transaction("cannot record the run's documents", |t, _| {
            let mut insert = t.prepare_cached(
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
        let (part, rung, attempt) = record.key.stored();
        self.transaction("cannot record a reply", |t, seq| {
            t.prepare_cached(
                "INSERT INTO replies (seq, document, content, part, rung, attempt, prompt, batch, reply, cancelled, done)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                *seq,
                record.document,
                record.content,
                part,
                rung,
                attempt,
                record.prompt,
                record.batch,
                record.reply,
                record.cancelled,
                outcome.is_some()
            ])?;
            *seq += 1;
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
        self.transaction("cannot record a failure", |t, seq| {
            t.prepare_cached(
                "INSERT INTO failures (seq, document, content, batch, error) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![*seq, document, content, batch, error])?;
            *seq += 1;
            t.prepare_cached("UPDATE documents SET state = 'failed' WHERE id = ?1")?
                .execute(params![document])?;
            Ok(())
        })
    }

    /// The intent to create a batch of `documents` ([id, attempt, content])
    /// at `created_at` (unix seconds), committed before the create call; its number.
    pub fn intent(&self, created_at: i64, documents: &[(String, u32, String)]) -> Result<i64, Error> {
        let listed = serde_json::to_string(documents).unwrap_or_default();
        let created_at = crate::clock::rfc3339(created_at);
        self.transaction("cannot record the intent to create a message batch", |t, _| {
            t.prepare_cached("INSERT INTO batches (created_at, requests, documents) VALUES (?1, ?2, ?3)")?
                .execute(params![created_at, documents.len() as i64, listed])?;
            Ok(t.last_insert_rowid())
        })
    }

    /// The API's id of the batch of `intent`.
    pub fn batch_created(&self, intent: i64, id: &str) -> Result<(), Error> {
        self.transaction("cannot record a message batch's id", |t, _| {
            t.prepare_cached("UPDATE batches SET id = ?2 WHERE intent = ?1")?.execute(params![intent, id])?;
            Ok(())
        })
    }

    /// The batch of `intent` was never created, or is to be forgotten: its
    /// documents are sent again.
    pub fn abandon(&self, intent: i64) -> Result<(), Error> {
        self.transaction("cannot record that a batch intent is abandoned", |t, _| {
            t.prepare_cached("UPDATE batches SET abandoned = 1 WHERE intent = ?1")?
                .execute(params![intent])?;
            Ok(())
        })
    }

    pub fn resent(&self, document: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        self.transaction("cannot record a resend", |t, seq| {
            t.prepare_cached(
                "INSERT INTO resends (seq, document, batch, reason, counted) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![*seq, document, batch, reason, counted])?;
            *seq += 1;
            Ok(())
        })
    }

    pub fn collected(&self, batch: &str) -> Result<(), Error> {
        self.transaction("cannot record that a message batch was collected", |t, _| {
            t.prepare_cached("UPDATE batches SET collected = 1 WHERE id = ?1")?.execute(params![batch])?;
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
        self.transaction("cannot record a review", |t, seq| {
            t.prepare_cached("INSERT INTO reviews (seq, document, content, fix) VALUES (?1, ?2, ?3, ?4)")?
                .execute(params![*seq, document, content, fix])?;
            *seq += 1;
            write_outcome(t, document, outcome)?;
            t.prepare_cached("UPDATE outcomes SET reviewed = 1 WHERE document = ?1")?
                .execute(params![document])?;
            Ok(())
        })
    }

    /// What earlier runs recorded, for documents whose content digests are
    /// `contents` (by id): replies under another content are kept in the
    /// database but not replayed, and such documents are counted.
    pub fn recorded(&self, contents: &BTreeMap<String, String>) -> Result<Recorded, Error> {
        let (events, batches) = self.reading("cannot read it", |c| {
            let events = c
                .prepare_cached(EVENTS)?
                .query_map([], |row| Event::read(row))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let batches = c
                .prepare_cached(
                    "SELECT intent, created_at, requests, documents, id FROM batches
                     WHERE collected = 0 AND abandoned = 0 ORDER BY intent",
                )?
                .query_map([], |row| OpenBatch::read(row))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((events, batches))
        })?;
        Recorded::from_events(events, batches, contents).map_err(|e| {
            refused(
                &self.path,
                JournalProblem::Unreadable(format!("a recorded reply does not read back: {e}")),
            )
        })
    }

    /// Every document of the run, in id order, with its outcome for its
    /// current content, if any, and its last failure.
    pub fn documents_with_outcomes(&self) -> Result<Vec<Exported>, Error> {
        self.reading("cannot read its outcomes", |c| {
            c.prepare_cached(
                "SELECT d.id, o.packet, o.attempts, o.usage, o.reviewed, o.facts,
                        (SELECT error FROM failures f WHERE f.document = d.id AND f.content = d.content
                         ORDER BY seq DESC LIMIT 1),
                        d.content
                 FROM documents d LEFT JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 ORDER BY d.id",
            )?
            .query_map([], |row| Exported::read(row))?
            .collect()
        })
    }
}

/// Every event of every document, in the order of [`Event::read`]'s columns.
const EVENTS: &str = "
    SELECT 'reply', seq, document, content, part, rung, attempt, batch, reply, cancelled FROM replies
    UNION ALL SELECT 'failed', seq, document, content, NULL, NULL, NULL, batch, NULL, 0 FROM failures
    UNION ALL SELECT 'resent', seq, document, NULL, NULL, NULL, NULL, batch, reason, counted FROM resends
    UNION ALL SELECT 'reviewed', seq, document, content, NULL, NULL, NULL, NULL, fix, 0 FROM reviews
    UNION ALL SELECT 'rejected', seq, document, content, NULL, NULL, NULL, NULL, reason, 0 FROM rejections
    ORDER BY 2";

/// Whether `document` (of content `content`) still waits for a reviewer.
const STILL_WAITING: &str = "SELECT count(*) FROM waiting WHERE document = ?1 AND content = ?2";

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
            next_seq: Mutex::new(0),
            _lock: None,
        })
    }

    /// Every document that waits for a reviewer (escalated for its current
    /// content, neither reviewed nor rejected), in id order, with its
    /// content digest and outcome packet; and how many were reviewed and
    /// rejected.
    pub fn waiting(&self) -> Result<(Vec<Waiting>, u64, u64), Error> {
        self.reading("cannot read its review queue", |c| {
            let waiting = c
                .prepare_cached("SELECT document, content, packet FROM waiting ORDER BY document")?
                .query_map([], |row| Waiting::read(row))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let count = |sql: &str| c.prepare_cached(sql)?.query_row([], |r| r.get::<_, i64>(0));
            let reviewed = count(
                "SELECT count(*) FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
                 WHERE o.reviewed = 1",
            )?;
            let rejected = count(
                "SELECT count(DISTINCT r.document) FROM rejections r JOIN documents d
                 ON d.id = r.document AND d.content = r.content",
            )?;
            Ok((waiting, reviewed as u64, rejected as u64))
        })
    }

    /// The ids of every document that waits for a reviewer, in id order,
    /// and document `id`'s content digest and outcome packet if it is one:
    /// what a document's page needs, without reading every packet.
    pub fn around(&self, id: &str) -> Result<(Vec<String>, Option<Waiting>), Error> {
        self.reading("cannot read its review queue", |c| {
            let ids = c
                .prepare_cached("SELECT document FROM waiting ORDER BY document")?
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let waiting = c
                .prepare_cached("SELECT document, content, packet FROM waiting WHERE document = ?1")?
                .query_row(params![id], |row| Waiting::read(row))
                .optional()?;
            Ok((ids, waiting))
        })
    }

    /// A reviewer's fix from the desk (already validated) and the reviewed
    /// outcome, in one immediate transaction (short: one check and three
    /// writes). `Ok(false)` records nothing: the document no longer waits
    /// (another reviewer was first, or a run changed it).
    pub fn desk_review(&self, review: &DeskReview<'_>, outcome: &OutcomeRow) -> Result<bool, Error> {
        let reviewed_at = self.time(review.at)?;
        self.immediate("cannot record a review", |t, seq| {
            if t.prepare_cached(STILL_WAITING)?.query_row(params![review.document, review.content], |r| r.get::<_, i64>(0))? == 0 {
                return Ok(false);
            }
            t.prepare_cached(
                "INSERT INTO reviews (seq, document, content, fix, reviewer, reviewed_at, fields_before, fields_after, overrode)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                seq,
                review.document,
                review.content,
                review.fix,
                review.reviewer,
                reviewed_at,
                review.before,
                review.after,
                review.overrode
            ])?;
            write_outcome(t, review.document, outcome)?;
            t.prepare_cached("UPDATE outcomes SET reviewed = 1 WHERE document = ?1")?
                .execute(params![review.document])?;
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
        let rejected_at = self.time(rejected_at)?;
        self.immediate("cannot record a rejection", |t, seq| {
            if t.prepare_cached(STILL_WAITING)?
                .query_row(params![document, content], |r| r.get::<_, i64>(0))?
                == 0
            {
                return Ok(false);
            }
            t.prepare_cached(
                "INSERT INTO rejections (seq, document, content, reviewer, rejected_at, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![seq, document, content, reviewer, rejected_at, reason])?;
            Ok(true)
        })
    }

    /// `time` (RFC 3339) as the journal writes times: UTC, to the second.
    fn time(&self, time: &str) -> Result<String, Error> {
        match crate::clock::unix_seconds(time) {
            Some(seconds) => Ok(crate::clock::rfc3339(seconds)),
            None => Err(Error::config(format!(
                "journal {}: {} is not an RFC 3339 time",
                self.path.display(),
                crate::quote_prefix(time)
            ))),
        }
    }

    /// Runs `work` in an immediate transaction (the write lock taken first,
    /// so what it checks cannot change before it writes), with the next
    /// `seq` read inside it: a run writing the journal meanwhile cannot take
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
            let seq = next_seq(&transaction)?;
            let result = work(&transaction, seq)?;
            transaction.commit()?;
            Ok(result)
        })();
        done.map_err(|e| db(&self.path, what, e))
    }

    /// Every review and rejection of the run's documents as they are now,
    /// oldest first.
    pub fn reviews(&self) -> Result<Vec<StoredReview>, Error> {
        self.reading("cannot read its reviews", |c| {
            c.prepare_cached(
                "SELECT r.seq, r.document, r.reviewer, r.reviewed_at, r.fix, r.fields_before, r.fields_after,
                        r.overrode, NULL
                 FROM reviews r JOIN documents d ON d.id = r.document AND d.content = r.content
                 UNION ALL
                 SELECT j.seq, j.document, j.reviewer, j.rejected_at, NULL, NULL, NULL, NULL, j.reason
                 FROM rejections j JOIN documents d ON d.id = j.document AND d.content = j.content
                 ORDER BY 1",
            )?
            .query_map([], |row| StoredReview::read(row))?
            .collect()
        })
    }
}

/// A desk review as the journal stores it (JSON texts).
pub(crate) struct DeskReview<'a> {
    pub document: &'a str,
    pub content: &'a str,
    pub fix: &'a str,
    pub reviewer: &'a str,
    /// RFC 3339.
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
    t.prepare_cached(
        "INSERT INTO outcomes (document, content, state, packet, attempts, usage, facts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (document) DO UPDATE SET content = excluded.content, state = excluded.state,
             packet = excluded.packet, attempts = excluded.attempts, usage = excluded.usage,
             facts = excluded.facts, reviewed = 0",
    )?
    .execute(params![
        document,
        outcome.content,
        outcome.state,
        outcome.packet,
        outcome.attempts,
        outcome.usage,
        outcome.facts
    ])?;
    t.prepare_cached("UPDATE documents SET state = ?2 WHERE id = ?1")?
        .execute(params![document, outcome.state])?;
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

/// A new journal: its header and every migration in one transaction, before
/// WAL mode (so that the database's first page already says whose it is).
fn create(connection: &Connection, path: &Path, header: &Header<'_>) -> Result<(), Error> {
    let made = (|| {
        let transaction = connection.unchecked_transaction()?;
        transaction.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))?;
        for migration in migrations::SQLITE {
            transaction.execute_batch(migration.sql)?;
        }
        transaction.execute_batch(&format!("PRAGMA user_version = {FORMAT}"))?;
        transaction.execute(
            "INSERT INTO run (key, value) VALUES ('tool', ?1), ('schema', ?2), ('format', ?3)",
            params![header.tool, header.schema, FORMAT.to_string()],
        )?;
        transaction.commit()
    })();
    made.map_err(|e| db(path, "cannot create it", e))
}

/// Brings a journal of an older format (checked ours, not newer) up to
/// [`FORMAT`] with the migrations it lacks, in one immediate transaction:
/// two openers at once migrate it once, the second finding it done.
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
        let found = version(&transaction)?.max(0) as u32;
        for migration in migrations::after(migrations::SQLITE, found) {
            tracing::info!(target: "extract", journal = %path.display(), migration = migration.name, "migrating the journal");
            transaction.execute_batch(migration.sql)?;
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

fn next_seq(connection: &Connection) -> rusqlite::Result<i64> {
    connection.prepare_cached("SELECT 1 + coalesce(max(seq), 0) FROM (SELECT seq FROM replies UNION ALL SELECT seq FROM failures
        UNION ALL SELECT seq FROM resends UNION ALL SELECT seq FROM reviews UNION ALL SELECT seq FROM rejections)")?
        .query_row([], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_of_format_1_is_brought_to_the_newest_format_by_its_first_writer_and_keeps_its_rows() {
        let dir = std::env::temp_dir().join(format!("extract-journal-migrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.db");
        let _ = std::fs::remove_file(&path);
        {
            // A journal as format 1 wrote it, with one review.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1; {}",
                migrations::SQLITE[0].sql
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
        assert_eq!((version, format), (FORMAT, FORMAT.to_string()));
        // A read-only reader of the migrated journal sees the new tables.
        let reader = Sqlite::open_read_only(&path, &header).unwrap();
        assert_eq!(reader.waiting().unwrap().0.len(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
