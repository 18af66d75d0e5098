//! The journal's rows as Rust values: one mapping, written once, that both
//! databases' rows go through ([`Columns`] is how a row of either is read).
//! Each `SELECT` of `sqlite.rs` and `postgres.rs` that a mapping reads names
//! the columns in the order its doc comment gives.

use serde_json::Value;

use super::CallKey;

/// A row of either database, read by column index.
pub(crate) trait Columns {
    /// The database's error.
    type Error;
    fn text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    /// An integer of any width.
    fn number(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn flag(&self, i: usize) -> Result<Option<bool>, Self::Error>;
    /// A time, in unix seconds.
    fn time(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    /// The error for column `i`, whose value does not read as `what`.
    fn malformed(&self, i: usize, what: &str) -> Self::Error;

    fn required_text(&self, i: usize) -> Result<String, Self::Error> {
        self.text(i)?.ok_or_else(|| self.malformed(i, "a text"))
    }
    fn required_number(&self, i: usize) -> Result<i64, Self::Error> {
        self.number(i)?.ok_or_else(|| self.malformed(i, "a number"))
    }
    fn count(&self, i: usize) -> Result<u32, Self::Error> {
        u32::try_from(self.required_number(i)?).map_err(|_| self.malformed(i, "a count"))
    }
    fn json(&self, i: usize) -> Result<Option<Value>, Self::Error> {
        match self.text(i)? {
            Some(text) => serde_json::from_str(&text).map(Some).map_err(|_| self.malformed(i, "JSON")),
            None => Ok(None),
        }
    }
}

/// One event of a document, in the order it happened (`seq`). The events
/// query of both databases gives `kind, seq, document, content, part, rung,
/// attempt, batch, text, flag`: for a reply `text` is the reply and `flag`
/// whether it was cancelled; for a resend `flag` is whether it counted; for
/// a review `text` is the fix.
pub(crate) enum Event {
    Reply {
        document: String,
        content: String,
        key: CallKey,
        batch: Option<String>,
        reply: String,
        cancelled: bool,
    },
    Failed {
        document: String,
        content: String,
        batch: Option<String>,
    },
    Resent {
        document: String,
        batch: String,
        counted: bool,
    },
    Reviewed {
        document: String,
        content: String,
        fix: String,
    },
    Rejected {
        document: String,
        content: String,
    },
}

impl Event {
    pub(crate) fn read<R: Columns>(row: &R) -> Result<(i64, Event), R::Error> {
        let (kind, seq, document) = (row.required_text(0)?, row.required_number(1)?, row.required_text(2)?);
        let event = match kind.as_str() {
            "reply" => Event::Reply {
                document,
                content: row.required_text(3)?,
                key: CallKey::read(row.count(4)?, row.count(5)?, row.count(6)?),
                batch: row.text(7)?,
                reply: row.required_text(8)?,
                cancelled: row.flag(9)?.unwrap_or(false),
            },
            "failed" => Event::Failed { document, content: row.required_text(3)?, batch: row.text(7)? },
            "resent" => Event::Resent {
                document,
                batch: row.required_text(7)?,
                counted: row.flag(9)?.unwrap_or(false),
            },
            "reviewed" => {
                Event::Reviewed { document, content: row.required_text(3)?, fix: row.required_text(8)? }
            }
            "rejected" => Event::Rejected { document, content: row.required_text(3)? },
            _ => return Err(row.malformed(0, "a kind of event")),
        };
        Ok((seq, event))
    }
}

/// A batch intent not yet collected nor abandoned: `intent, created_at,
/// requests, documents, id`.
pub(crate) struct OpenBatch {
    pub intent: i64,
    /// Unix seconds.
    pub created_at: i64,
    pub requests: i64,
    /// `[[id, attempt, content], ...]` as JSON.
    pub documents: String,
    /// The API's id, once it answered.
    pub id: Option<String>,
}

impl OpenBatch {
    pub(crate) fn read<R: Columns>(row: &R) -> Result<OpenBatch, R::Error> {
        Ok(OpenBatch {
            intent: row.required_number(0)?,
            created_at: row.time(1)?.ok_or_else(|| row.malformed(1, "a time"))?,
            requests: row.required_number(2)?,
            documents: row.required_text(3)?,
            id: row.text(4)?,
        })
    }
}

/// A review or a rejection of a document as it is now: `seq, document,
/// reviewer, at, fix, fields_before, fields_after, overrode, reason` (a
/// rejection has a reason and no fix).
pub(crate) struct StoredReview {
    pub document: String,
    pub reviewer: Option<String>,
    /// RFC 3339.
    pub at: Option<String>,
    pub fix: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub overrode: Option<String>,
    pub rejected: Option<String>,
}

impl StoredReview {
    pub(crate) fn read<R: Columns>(row: &R) -> Result<StoredReview, R::Error> {
        Ok(StoredReview {
            document: row.required_text(1)?,
            reviewer: row.text(2)?,
            at: row.time(3)?.map(crate::clock::rfc3339),
            fix: row.text(4)?,
            before: row.text(5)?,
            after: row.text(6)?,
            overrode: row.text(7)?,
            rejected: row.text(8)?,
        })
    }
}

/// One document of a journal's run, as exported: `id, packet, attempts,
/// usage, reviewed, facts, failure, content` (the outcome's columns `NULL`
/// without one; the failure is the last one for its current content).
pub(crate) struct Exported {
    pub id: String,
    /// The digest of its current content (a shared run's workers compare it).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub content: String,
    /// Its outcome packet, attempts, usage, and whether a reviewer fixed it.
    pub outcome: Option<(Value, u32, Value, bool)>,
    /// What the statistics count of its outcome (`Null` without one).
    pub facts: Value,
    pub failure: Option<String>,
}

impl Exported {
    pub(crate) fn read<R: Columns>(row: &R) -> Result<Exported, R::Error> {
        let outcome = match row.json(1)? {
            Some(packet) => {
                Some((packet, row.count(2)?, row.json(3)?.unwrap_or_default(), row.flag(4)?.unwrap_or(false)))
            }
            None => None,
        };
        Ok(Exported {
            id: row.required_text(0)?,
            content: row.required_text(7)?,
            outcome,
            facts: row.json(5)?.unwrap_or_default(),
            failure: row.text(6)?,
        })
    }
}

/// A document waiting for a reviewer: `document, content, packet` (the view
/// `waiting`).
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) struct Waiting {
    pub id: String,
    pub content: String,
    pub packet: Value,
}

impl Waiting {
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) fn read<R: Columns>(row: &R) -> Result<Waiting, R::Error> {
        Ok(Waiting {
            id: row.required_text(0)?,
            content: row.required_text(1)?,
            packet: row.json(2)?.unwrap_or_default(),
        })
    }
}

#[cfg(feature = "sqlite")]
impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn number(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<Option<bool>> {
        self.get(i)
    }
    /// SQLite keeps times as RFC 3339 text.
    fn time(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        match self.get::<_, Option<String>>(i)? {
            Some(text) => {
                crate::clock::unix_seconds(&text).map(Some).ok_or_else(|| self.malformed(i, "a time"))
            }
            None => Ok(None),
        }
    }
    fn malformed(&self, i: usize, what: &str) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("column {i} does not read as {what}").into(),
        )
    }
}
