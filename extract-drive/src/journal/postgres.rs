//! The journal in a PostgreSQL database, shared by many worker processes:
//! every statement of its SQL is here, the migrations first.
//!
//! Many runs live in one database, each a row of `extract_runs` by name,
//! and every other table is keyed by the run. The schema is created and
//! migrated on first use by [`migrations::POSTGRES`], applied in one transaction
//! under an advisory lock (several workers start at once); a database whose
//! schema is newer than this build's is refused.
//!
//! Workers share a run's documents through leases: a worker claims a
//! pending document whose lease is free or expired (`FOR UPDATE SKIP
//! LOCKED`, so two claims never wait on each other), renews its leases
//! while it works, and records a reply only while it still holds the
//! document's lease, in the transaction that renews it. The pause a 429 or
//! 529 sets is a time in the run's row, reckoned on the database's clock,
//! so machines with skewed clocks pause together. One worker at a time
//! coordinates a run's message batches under a lease on the run.
//!
//! A connection that fails is retried with backoff (a new one from the
//! pool) for [`Settings::reconnect`]; every write is idempotent, so a commit
//! whose answer was lost can be sent again. Every statement is prepared
//! once per connection (`prepare_cached`): a call pays no Parse round trip
//! after the connection's first.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

use super::credentials::mask;
use super::migrations;
use super::rows::{Columns, Event, Exported, OpenBatch, StoredReview};
use super::{JournalProblem, OutcomeRow, Recorded, ReplyRecord};
use crate::Error;

/// The advisory lock key under which migrations run ("EXTRACT" in ASCII).
const MIGRATION_LOCK: i64 = 0x0045_5854_5241_4354;

/// How a PostgreSQL journal is reached and how its workers share it.
#[derive(Clone, PartialEq, Eq)]
pub struct Settings {
    /// The connection URL, password included: shown only through [`mask`].
    pub url: String,
    /// The run's name.
    pub run: String,
    /// How long a claimed document stays a worker's without a renewal.
    pub lease: Duration,
    /// How often a worker renews its leases.
    pub renew_every: Duration,
    /// How long a lost connection is retried before the worker ends with `Err`.
    pub reconnect: Duration,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("url", &mask(&self.url))
            .field("run", &self.run)
            .field("lease", &self.lease)
            .field("renew_every", &self.renew_every)
            .field("reconnect", &self.reconnect)
            .finish()
    }
}

/// The header values a run is for: its tool, the digest of the tool's schema.
pub struct Header<'a> {
    pub tool: &'a str,
    pub schema: &'a str,
}

/// A journal open on a PostgreSQL database, for one run, as one worker.
pub struct Postgres {
    pool: Pool,
    settings: Settings,
    /// The masked URL and the run, for messages: `postgres://extract:***@db/x run march`.
    shown: String,
    /// This worker's name in leases: host, process and a random part.
    worker: String,
}

/// One failure of a statement or of getting a connection.
pub(crate) enum Failure {
    Db(tokio_postgres::Error),
    Pool(deadpool_postgres::PoolError),
    /// A row that does not read as the journal wrote it.
    Malformed(String),
}

impl Failure {
    /// Whether trying again may help: a lost or refused connection, a
    /// server restarting, a serialization conflict.
    fn transient(&self) -> bool {
        let db = match self {
            Failure::Db(e) => e,
            Failure::Pool(deadpool_postgres::PoolError::Backend(e)) => e,
            Failure::Pool(deadpool_postgres::PoolError::Timeout(_)) => return true,
            Failure::Pool(_) | Failure::Malformed(_) => return false,
        };
        match db.code() {
            None => true, // no answer from the server: the connection failed
            Some(code) => {
                code.code().starts_with("08")
                    || [
                        SqlState::ADMIN_SHUTDOWN,
                        SqlState::CRASH_SHUTDOWN,
                        SqlState::CANNOT_CONNECT_NOW,
                        SqlState::T_R_SERIALIZATION_FAILURE,
                        SqlState::T_R_DEADLOCK_DETECTED,
                    ]
                    .contains(code)
            }
        }
    }

    /// The failure's text, the server's message and hint included.
    fn text(&self) -> String {
        let db = match self {
            Failure::Db(e) => e,
            Failure::Pool(deadpool_postgres::PoolError::Backend(e)) => e,
            Failure::Pool(other) => return other.to_string(),
            Failure::Malformed(what) => return what.clone(),
        };
        match db.as_db_error() {
            Some(e) => format!(
                "{} ({}){}",
                e.message(),
                e.code().code(),
                e.hint().map(|h| format!("; {h}")).unwrap_or_default()
            ),
            None => {
                let mut text = db.to_string();
                let mut source = std::error::Error::source(db);
                while let Some(cause) = source {
                    text.push_str(&format!(": {cause}"));
                    source = cause.source();
                }
                text
            }
        }
    }

    fn kind(&self) -> std::io::ErrorKind {
        let db = match self {
            Failure::Db(e) => e,
            Failure::Pool(deadpool_postgres::PoolError::Backend(e)) => e,
            Failure::Pool(deadpool_postgres::PoolError::Timeout(_)) => return std::io::ErrorKind::TimedOut,
            Failure::Pool(_) => return std::io::ErrorKind::Other,
            Failure::Malformed(_) => return std::io::ErrorKind::InvalidData,
        };
        match db.code() {
            Some(code)
                if *code == SqlState::INVALID_PASSWORD
                    || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
            {
                std::io::ErrorKind::PermissionDenied
            }
            Some(code) if *code == SqlState::INVALID_CATALOG_NAME => std::io::ErrorKind::NotFound,
            Some(_) => std::io::ErrorKind::Other,
            None => std::io::ErrorKind::ConnectionRefused,
        }
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Failure {
        Failure::Db(e)
    }
}

/// What recording a reply found.
pub enum Recording {
    Recorded,
    /// Another worker holds the document now (this one's lease expired):
    /// nothing was recorded, and this worker leaves the document.
    LeaseLost,
}

/// The run's documents, counted by state, for progress over the whole run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Documents in the run.
    pub total: usize,
    /// Of them, valid.
    pub valid: usize,
    /// Escalated.
    pub escalated: usize,
    /// Failed (transport or configuration).
    pub failed: usize,
}

/// A worker name: host, process id and a part that differs between two
/// processes of one id (a restarted container).
fn worker_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "host".to_string());
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    let random = super::digest(format!("{host}{}{nanos}", std::process::id()).as_bytes());
    format!("{host}/{}/{}", std::process::id(), &random[..8])
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

impl Postgres {
    /// Connects, migrates the schema if needed, and checks the run's header
    /// against `header` (a run creates it if the run is new: `for_run`; a
    /// reader finds it or fails): every failure here comes before any
    /// model call.
    pub async fn open(
        settings: &Settings,
        header: Option<&Header<'_>>,
        for_run: bool,
    ) -> Result<Postgres, Error> {
        let shown = format!("{} run {}", mask(&settings.url), crate::quote_prefix(&settings.run));
        let mut config: tokio_postgres::Config =
            settings.url.parse().map_err(|e: tokio_postgres::Error| {
                Error::config(format!(
                    "journal {}: the URL is not a PostgreSQL connection string ({}); write it as \
                 postgres://USER:PASSWORD@HOST:PORT/DATABASE",
                    mask(&settings.url),
                    mask(&e.to_string())
                ))
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("extract");
        }
        let manager =
            Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(8)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(15)))
            .build()
            .map_err(|e| Error::config(format!("journal {shown}: cannot make its connection pool: {e}")))?;
        let postgres = Postgres { pool, settings: settings.clone(), shown, worker: worker_name() };
        // The first connection is not retried: an unreachable database or
        // wrong credentials are the caller's to fix, and said at once.
        let client = postgres
            .pool
            .get()
            .await
            .map_err(|e| postgres.error("cannot connect to it", Failure::Pool(e)))?;
        drop(client);
        postgres.migrate().await?;
        match header {
            Some(header) => postgres.check_run(header, for_run).await?,
            None => postgres.check_exists().await?,
        }
        Ok(postgres)
    }

    /// How often this worker renews its leases.
    pub fn renew_every(&self) -> Duration {
        self.settings.renew_every
    }

    /// How often a worker with nothing to claim looks again (for a lease
    /// that ran out, or the run's end).
    pub fn poll_every(&self) -> Duration {
        (self.settings.lease / 20).clamp(Duration::from_millis(20), Duration::from_secs(1))
    }

    /// This worker's name, as its leases and replies carry it.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// `journal <url> run <name>: <what>: <failure>`, an I/O error.
    fn error(&self, what: &str, failure: Failure) -> Error {
        let text = mask(&failure.text()).replace(&self.settings.url, &mask(&self.settings.url));
        Error::io(format!("journal {}: {what}", self.shown), std::io::Error::new(failure.kind(), text))
    }

    /// Runs `work` on a connection of the pool; a lost connection (or a
    /// conflict) is retried on a new one with backoff for `reconnect`,
    /// then is the worker's `Err`. Every `work` is idempotent.
    async fn retrying<R, Fut>(&self, what: &str, work: impl Fn(Object) -> Fut) -> Result<R, Error>
    where
        Fut: Future<Output = Result<R, Failure>>,
    {
        let started = Instant::now();
        let mut wait = Duration::from_millis(50);
        loop {
            let failure = match self.pool.get().await {
                Ok(client) => match work(client).await {
                    Ok(result) => return Ok(result),
                    Err(failure) => failure,
                },
                Err(e) => Failure::Pool(e),
            };
            if !failure.transient() || started.elapsed() + wait > self.settings.reconnect {
                return Err(self.error(what, failure));
            }
            tracing::warn!(
                target: "extract",
                journal = %self.shown,
                wait_ms = wait.as_millis() as u64,
                reason = %mask(&failure.text()),
                "the journal's database connection failed; trying again"
            );
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    }

    /// Creates or migrates the schema, one transaction under an advisory
    /// lock; refuses a schema newer than this build's.
    async fn migrate(&self) -> Result<(), Error> {
        let newest = migrations::newest(migrations::POSTGRES) as i32;
        let found = self
            .retrying("cannot create or migrate its schema", |mut client| async move {
                let t = client.transaction().await?;
                t.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
                t.batch_execute(
                    "CREATE TABLE IF NOT EXISTS extract_schema (
                         version INTEGER PRIMARY KEY,
                         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                     )",
                )
                .await?;
                let row = t.query_one("SELECT coalesce(max(version), 0) FROM extract_schema", &[]).await?;
                let found: i32 = row.get(0);
                if found > newest {
                    return Ok(found);
                }
                for migration in migrations::after(migrations::POSTGRES, found.max(0) as u32) {
                    tracing::info!(target: "extract", migration = migration.name, "migrating the journal's schema");
                    t.batch_execute(migration.sql).await?;
                    let number = migration.number as i32;
                    t.execute("INSERT INTO extract_schema (version) VALUES ($1)", &[&number]).await?;
                }
                t.commit().await?;
                Ok(found)
            })
            .await?;
        if found > newest {
            return Err(
                self.refused(JournalProblem::NewerFormat { found: found as u32, supported: newest as u32 })
            );
        }
        Ok(())
    }

    /// Creates the run's header, or checks it is for `header`'s tool and schema.
    async fn check_run(&self, header: &Header<'_>, create: bool) -> Result<(), Error> {
        let run = &self.settings.run;
        let found: Option<(String, String)> = self
            .retrying("cannot read the run's header", |client| async move {
                if create {
                    client
                        .execute(
                            &client
                                .prepare_cached(
                                    "INSERT INTO extract_runs (name, tool, schema) VALUES ($1, $2, $3)
                             ON CONFLICT (name) DO NOTHING",
                                )
                                .await?,
                            &[run, &header.tool, &header.schema],
                        )
                        .await?;
                }
                let row = client
                    .query_opt(
                        &client
                            .prepare_cached("SELECT tool, schema FROM extract_runs WHERE name = $1")
                            .await?,
                        &[run],
                    )
                    .await?;
                Ok(row.map(|r| (r.get(0), r.get(1))))
            })
            .await?;
        match found {
            None => Err(self.no_run()),
            Some((tool, schema)) if tool != header.tool || schema != header.schema => {
                let (expected_tool, expected_schema) = (header.tool.to_string(), header.schema.to_string());
                Err(self.refused(JournalProblem::OtherTool { tool, schema, expected_tool, expected_schema }))
            }
            Some(_) => Ok(()),
        }
    }

    async fn check_exists(&self) -> Result<(), Error> {
        let run = &self.settings.run;
        let found = self
            .retrying("cannot read the run's header", |client| async move {
                Ok(client
                    .query_opt(
                        &client.prepare_cached("SELECT 1 FROM extract_runs WHERE name = $1").await?,
                        &[run],
                    )
                    .await?
                    .is_some())
            })
            .await?;
        if found { Ok(()) } else { Err(self.no_run()) }
    }

    /// This journal refused for `problem`.
    pub(crate) fn refused(&self, problem: JournalProblem) -> Error {
        Error::Journal { journal: self.shown.clone(), problem }
    }

    fn no_run(&self) -> Error {
        Error::io(
            format!("journal {}: there is no such run in the database", self.shown),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    }

    /// Records the run's documents with their content digests and places
    /// (new ones pending; a changed one pending again), and makes the
    /// documents that failed pending again: a worker that joins retries them.
    pub async fn documents(&self, documents: &[(String, String)]) -> Result<(), Error> {
        let ids: Vec<&str> = documents.iter().map(|(id, _)| id.as_str()).collect();
        let contents: Vec<&str> = documents.iter().map(|(_, c)| c.as_str()).collect();
        let positions: Vec<i64> = (0..documents.len() as i64).collect();
        let run = &self.settings.run;
        let (ids, contents, positions) = (&ids, &contents, &positions);
        self.retrying("cannot record the run's documents", |mut client| async move {
            let t = client.transaction().await?;
            t.execute(
                &t.prepare_cached(
                    "INSERT INTO extract_documents (run, id, position, content, state)
                 SELECT $1, d.id, d.position, d.content, 'pending'
                 FROM unnest($2::text[], $3::bigint[], $4::text[]) AS d (id, position, content)
                 ON CONFLICT (run, id) DO UPDATE
                     SET content = excluded.content, state = 'pending', lease_owner = NULL, lease_until = NULL
                     WHERE extract_documents.content <> excluded.content",
                )
                .await?,
                &[run, ids, positions, contents],
            )
            .await?;
            t.execute(
                &t.prepare_cached(
                    "UPDATE extract_documents d SET state = 'pending' WHERE d.run = $1 AND d.state = 'failed'
                   AND NOT EXISTS (SELECT 1 FROM extract_outcomes o
                                   WHERE o.run = d.run AND o.document = d.id AND o.content = d.content)",
                )
                .await?,
                &[run],
            )
            .await?;
            t.commit().await?;
            Ok(())
        })
        .await
    }

    /// Claims the next pending document whose lease is free or expired
    /// (skipping `not_mine`); `None` when there is none to claim now.
    pub async fn claim(&self, not_mine: &[String]) -> Result<Option<String>, Error> {
        let (run, worker, lease) = (&self.settings.run, &self.worker, millis(self.settings.lease));
        self.retrying("cannot claim a document", |client| async move {
            let row = client
                .query_opt(
                    &client
                        .prepare_cached(
                            "UPDATE extract_documents d
                     SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond'
                     WHERE d.run = $1 AND d.id = (
                         SELECT id FROM extract_documents
                         WHERE run = $1 AND state = 'pending'
                           AND (lease_owner IS NULL OR lease_until < now())
                           AND NOT (id = ANY($4))
                         ORDER BY position
                         LIMIT 1
                         FOR UPDATE SKIP LOCKED)
                     RETURNING d.id",
                        )
                        .await?,
                    &[run, worker, &lease, &not_mine],
                )
                .await?;
            Ok(row.map(|r| r.get(0)))
        })
        .await
    }

    /// Lets go of a claimed document (one this worker was not given).
    pub async fn release(&self, document: &str) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        self.retrying("cannot let go of a document", |client| async move {
            client
                .execute(
                    &client
                        .prepare_cached(
                            "UPDATE extract_documents SET lease_owner = NULL, lease_until = NULL
                     WHERE run = $1 AND id = $2 AND lease_owner = $3",
                        )
                        .await?,
                    &[run, &document, worker],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// Renews every lease this worker holds.
    pub async fn renew(&self) -> Result<(), Error> {
        let (run, worker, lease) = (&self.settings.run, &self.worker, millis(self.settings.lease));
        self.retrying("cannot renew its leases", |client| async move {
            client.execute(&client.prepare_cached("UPDATE extract_documents SET lease_until = now() + $3 * interval '1 millisecond'
                     WHERE run = $1 AND lease_owner = $2 AND state = 'pending'").await?,
                    &[run, worker, &lease],
                )
                .await?;
            client.execute(&client.prepare_cached("UPDATE extract_runs SET coordinator_until = now() + $3 * interval '1 millisecond'
                     WHERE name = $1 AND coordinator = $2").await?,
                    &[run, worker, &lease],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// The ids of the run's documents still pending.
    pub async fn pending(&self) -> Result<BTreeSet<String>, Error> {
        let run = &self.settings.run;
        self.retrying("cannot read the run's documents", |client| async move {
            let rows = client
                .query(
                    &client
                        .prepare_cached(
                            "SELECT id FROM extract_documents WHERE run = $1 AND state = 'pending'",
                        )
                        .await?,
                    &[run],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
        .await
    }

    /// The run's documents counted by state.
    pub async fn counts(&self) -> Result<Counts, Error> {
        let run = &self.settings.run;
        self.retrying("cannot count the run's documents", |client| async move {
            let rows = client
                .query(
                    &client
                        .prepare_cached(
                            "SELECT state, count(*) FROM extract_documents WHERE run = $1 GROUP BY state",
                        )
                        .await?,
                    &[run],
                )
                .await?;
            let mut counts = Counts::default();
            for row in rows {
                let (state, n): (String, i64) = (row.get(0), row.get(1));
                counts.total += n as usize;
                match state.as_str() {
                    "valid" => counts.valid += n as usize,
                    "escalated" => counts.escalated += n as usize,
                    "failed" => counts.failed += n as usize,
                    _ => {}
                }
            }
            Ok(counts)
        })
        .await
    }

    /// A reply, and the outcome it ended the run with, in one transaction
    /// that also renews the document's lease; nothing is recorded when
    /// another worker holds the document now.
    pub async fn reply(
        &self,
        record: &ReplyRecord,
        outcome: Option<&OutcomeRow>,
    ) -> Result<Recording, Error> {
        let (run, worker, lease) = (&self.settings.run, &self.worker, millis(self.settings.lease));
        let (part, rung, attempt) = record.key.stored();
        let (part, rung, attempt) = (&(part as i32), &(rung as i32), &(attempt as i32));
        self.retrying("cannot record a reply", |mut client| async move {
            let t = client.transaction().await?;
            // This very reply, committed by a try whose answer was lost, is
            // recorded; another worker's answer to the same call is not ours.
            let stored = t
                .query_opt(
                    &t.prepare_cached(
                        "SELECT reply, worker FROM extract_replies
                         WHERE run = $1 AND document = $2 AND content = $3 AND part = $4 AND rung = $5 AND attempt = $6",
                    )
                    .await?,
                    &[run, &record.document, &record.content, part, rung, attempt],
                )
                .await?;
            if let Some(stored) = stored {
                let (reply, by): (String, String) = (stored.get(0), stored.get(1));
                let ours = reply == record.reply && &by == worker;
                return Ok(if ours { Recording::Recorded } else { Recording::LeaseLost });
            }
            // Only while the document is pending, for this content, and not
            // another worker's: a worker paused past its lease, or still
            // holding old text, records nothing (the row lock taken here
            // orders it with the others' writes).
            let held = t
                .execute(
                    &t.prepare_cached(HOLD).await?,
                    &[run, &record.document, &record.content, worker, &lease],
                )
                .await?;
            if held == 0 {
                return Ok(Recording::LeaseLost);
            }
            let inserted = t.execute(&t.prepare_cached("INSERT INTO extract_replies
                         (run, document, content, part, rung, attempt, prompt, batch, reply, cancelled, done, worker)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                     ON CONFLICT (run, document, content, part, rung, attempt) DO NOTHING").await?,
                    &[
                        run,
                        &record.document,
                        &record.content,
                        part,
                        rung,
                        attempt,
                        &record.prompt,
                        &record.batch,
                        &record.reply,
                        &record.cancelled,
                        &outcome.is_some(),
                        worker,
                    ],
                )
                .await?;
            if inserted == 0 {
                return Ok(Recording::LeaseLost);
            }
            if let Some(outcome) = outcome {
                write_outcome(&t, run, &record.document, outcome).await?;
            }
            t.commit().await?;
            Ok(Recording::Recorded)
        })
        .await
    }

    /// A transport failure of `document` (of a result of `batch`, if any),
    /// recorded only while the document is pending for `content` and not
    /// another worker's (as a reply is): `LeaseLost` records nothing.
    pub async fn failed(
        &self,
        document: &str,
        content: &str,
        error: &str,
        batch: Option<&str>,
    ) -> Result<Recording, Error> {
        let (run, worker, lease) = (&self.settings.run, &self.worker, millis(self.settings.lease));
        self.retrying("cannot record a failure", |mut client| async move {
            let t = client.transaction().await?;
            let held = t.execute(&t.prepare_cached(HOLD).await?, &[run, &document, &content, worker, &lease]).await?;
            if held == 0 {
                return Ok(Recording::LeaseLost);
            }
            t.execute(
                &t.prepare_cached(
                    "INSERT INTO extract_failures (run, document, content, batch, error) VALUES ($1, $2, $3, $4, $5)",
                )
                .await?,
                &[run, &document, &content, &batch, &error],
            )
            .await?;
            t.execute(
                &t.prepare_cached(
                    "UPDATE extract_documents SET state = 'failed', lease_owner = NULL, lease_until = NULL
                     WHERE run = $1 AND id = $2",
                )
                .await?,
                &[run, &document],
            )
            .await?;
            t.commit().await?;
            Ok(Recording::Recorded)
        })
        .await
    }

    /// A document whose recorded replies ended its run when this worker
    /// replayed them (no write was left to make): its state follows its
    /// outcome, and its lease is let go. Only while this worker holds it
    /// for `content`.
    pub async fn settle(&self, document: &str, content: &str, state: &str) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        self.retrying("cannot record that a document is finished", |client| async move {
            let settle = client
                .prepare_cached(
                    "UPDATE extract_documents SET state = $5, lease_owner = NULL, lease_until = NULL
                     WHERE run = $1 AND id = $2 AND content = $3 AND lease_owner = $4 AND state = 'pending'",
                )
                .await?;
            client.execute(&settle, &[run, &document, &content, worker, &state]).await?;
            Ok(())
        })
        .await
    }

    /// Takes (or keeps) the coordination of the run's message batches;
    /// `false` while another live worker holds it.
    // Message batches are the Claude backend's.
    pub async fn coordinate(&self) -> Result<bool, Error> {
        let (run, worker, lease) = (&self.settings.run, &self.worker, millis(self.settings.lease));
        self.retrying("cannot take the coordination of the run's batches", |client| async move {
            let taken = client.execute(&client.prepare_cached("UPDATE extract_runs SET coordinator = $2, coordinator_until = now() + $3 * interval '1 millisecond'
                     WHERE name = $1 AND (coordinator IS NULL OR coordinator = $2 OR coordinator_until < now())").await?,
                    &[run, worker, &lease],
                )
                .await?;
            Ok(taken == 1)
        })
        .await
    }

    /// Lets go of the coordination of the run's batches.
    // Message batches are the Claude backend's.
    pub async fn stop_coordinating(&self) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        self.retrying("cannot let go of the coordination of the run's batches", |client| async move {
            client
                .execute(
                    &client
                        .prepare_cached(
                            "UPDATE extract_runs SET coordinator = NULL, coordinator_until = NULL
                     WHERE name = $1 AND coordinator = $2",
                        )
                        .await?,
                    &[run, worker],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// The intent to create a batch of `documents` ([id, attempt, content]),
    /// committed before the create call, only while this worker coordinates
    /// the run; its number.
    // Message batches are the Claude backend's.
    pub async fn intent(
        &self,
        token: &str,
        created_at: i64,
        documents: &[(String, u32, String)],
    ) -> Result<i64, Error> {
        let listed = serde_json::to_string(documents).unwrap_or_default();
        let (run, worker, listed) = (&self.settings.run, &self.worker, &listed);
        let requests = documents.len() as i64;
        let created_at = &crate::clock::from_unix_seconds(created_at);
        let number = self
            .retrying("cannot record the intent to create a message batch", |mut client| async move {
                let t = client.transaction().await?;
                let coordinating = t.query_opt(&t.prepare_cached("SELECT 1 FROM extract_runs WHERE name = $1 AND coordinator = $2 AND coordinator_until > now()
                         FOR UPDATE").await?,
                        &[run, worker],
                    )
                    .await?;
                if coordinating.is_none() {
                    return Ok(None);
                }
                let row = t.query_one(&t.prepare_cached("INSERT INTO extract_batches (run, token, created_at, requests, documents)
                         VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (token) DO UPDATE SET token = excluded.token
                         RETURNING intent").await?,
                        &[run, &token, created_at, &requests, listed],
                    )
                    .await?;
                t.commit().await?;
                Ok(Some(row.get::<_, i64>(0)))
            })
            .await?;
        number.ok_or_else(|| self.refused(JournalProblem::CoordinationLost))
    }

    /// The API's id of the batch of `intent`, only while this worker
    /// coordinates the run (else `CoordinationLost`, and nothing recorded).
    // Message batches are the Claude backend's.
    pub async fn batch_created(&self, intent: i64, id: &str) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        let recorded = self
            .retrying("cannot record a message batch's id", |client| async move {
                let update = client
                    .prepare_cached(
                        "UPDATE extract_batches SET id = $2
                         WHERE intent = $1 AND run = $3 AND EXISTS (SELECT 1 FROM extract_runs
                             WHERE name = $3 AND coordinator = $4 AND coordinator_until > now())",
                    )
                    .await?;
                Ok(client.execute(&update, &[&intent, &id, run, worker]).await?)
            })
            .await?;
        self.coordinated(recorded)
    }

    /// `Ok` when a coordinator's write took (`rows` > 0), else `CoordinationLost`.
    fn coordinated(&self, rows: u64) -> Result<(), Error> {
        if rows == 0 { Err(self.refused(JournalProblem::CoordinationLost)) } else { Ok(()) }
    }

    /// The batch of `intent` was never created, or is to be forgotten.
    // Message batches are the Claude backend's.
    pub async fn abandon(&self, intent: i64) -> Result<(), Error> {
        self.retrying("cannot record that a batch intent is abandoned", |client| async move {
            client
                .execute(
                    &client
                        .prepare_cached("UPDATE extract_batches SET abandoned = true WHERE intent = $1")
                        .await?,
                    &[&intent],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// Records a resend (message batches are the Claude backend's).
    pub async fn resent(
        &self,
        document: &str,
        batch: &str,
        reason: &str,
        counted: bool,
    ) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        let recorded = self
            .retrying("cannot record a resend", |client| async move {
                let insert = client
                    .prepare_cached(
                        "INSERT INTO extract_resends (run, document, batch, reason, counted)
                         SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM extract_runs
                             WHERE name = $1 AND coordinator = $6 AND coordinator_until > now())",
                    )
                    .await?;
                Ok(client.execute(&insert, &[run, &document, &batch, &reason, &counted, worker]).await?)
            })
            .await?;
        self.coordinated(recorded)
    }

    /// Records a collected batch (message batches are the Claude backend's).
    pub async fn collected(&self, batch: &str) -> Result<(), Error> {
        let (run, worker) = (&self.settings.run, &self.worker);
        let recorded = self
            .retrying("cannot record that a message batch was collected", |client| async move {
                let update = client
                    .prepare_cached(
                        "UPDATE extract_batches SET collected = true
                         WHERE run = $1 AND id = $2 AND EXISTS (SELECT 1 FROM extract_runs
                             WHERE name = $1 AND coordinator = $3 AND coordinator_until > now())",
                    )
                    .await?;
                Ok(client.execute(&update, &[run, &batch, worker]).await?)
            })
            .await?;
        self.coordinated(recorded)
    }

    /// A reviewer's fix (already validated), and the reviewed outcome.
    pub async fn reviewed(
        &self,
        document: &str,
        content: &str,
        fix: &str,
        outcome: &OutcomeRow,
    ) -> Result<(), Error> {
        let run = &self.settings.run;
        self.retrying("cannot record a review", |mut client| async move {
            let t = client.transaction().await?;
            t.execute(
                &t.prepare_cached(
                    "INSERT INTO extract_reviews (run, document, content, fix) VALUES ($1, $2, $3, $4)",
                )
                .await?,
                &[run, &document, &content, &fix],
            )
            .await?;
            write_outcome(&t, run, document, outcome).await?;
            t.execute(
                &t.prepare_cached(
                    "UPDATE extract_outcomes SET reviewed = true WHERE run = $1 AND document = $2",
                )
                .await?,
                &[run, &document],
            )
            .await?;
            t.commit().await?;
            Ok(())
        })
        .await
    }

    /// How long from now the run is paused (a 429 or 529 one worker saw),
    /// reckoned on the database's clock.
    pub async fn paused_for(&self) -> Result<Duration, Error> {
        let run = &self.settings.run;
        let ms: f64 = self
            .retrying("cannot read the run's pause", |client| async move {
                let row = client.query_one(&client.prepare_cached("SELECT coalesce(extract(epoch FROM (paused_until - now())) * 1000, 0)::float8
                         FROM extract_runs WHERE name = $1").await?,
                        &[run],
                    )
                    .await?;
                Ok(row.get(0))
            })
            .await?;
        Ok(Duration::from_secs_f64(
            (ms.max(0.0) / 1000.0).min(crate::run_pause::MAX_SHARED_PAUSE.as_secs_f64()),
        ))
    }

    /// Pauses every worker of the run for `wait` from now (extending, never
    /// shortening, a pause already set).
    pub async fn pause(&self, wait: Duration) -> Result<(), Error> {
        let (run, wait) = (&self.settings.run, millis(wait));
        self.retrying("cannot record the run's pause", |client| async move {
            client.execute(&client.prepare_cached("UPDATE extract_runs
                     SET paused_until = greatest(coalesce(paused_until, now()), now() + $2 * interval '1 millisecond')
                     WHERE name = $1").await?,
                    &[run, &wait],
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// What was recorded of the documents whose content digests are
    /// `contents` (by id); all the run's documents when `only` is `None`,
    /// else the one named.
    pub async fn recorded(
        &self,
        contents: &BTreeMap<String, String>,
        only: Option<&str>,
    ) -> Result<Recorded, Error> {
        let run = &self.settings.run;
        let (events, batches) = self
            .retrying("cannot read it", |client| async move {
                // One round trip for a document's events, in the order they happened.
                let events = client
                    .query(&client.prepare_cached(EVENTS).await?, &[run, &only])
                    .await?
                    .iter()
                    .map(Event::read)
                    .collect::<Result<Vec<_>, _>>()?;
                if only.is_some() {
                    // One document's records, for a worker that claimed it: batches are the coordinator's.
                    return Ok((events, Vec::new()));
                }
                let select = client
                    .prepare_cached(
                        "SELECT intent, created_at, requests, documents, id FROM extract_batches
                         WHERE run = $1 AND NOT collected AND NOT abandoned ORDER BY intent",
                    )
                    .await?;
                let batches = client
                    .query(&select, &[run])
                    .await?
                    .iter()
                    .map(OpenBatch::read)
                    .collect::<Result<_, _>>()?;
                Ok((events, batches))
            })
            .await?;
        Recorded::from_events(events, batches, contents).map_err(|e| {
            self.refused(JournalProblem::Unreadable(format!("a recorded reply does not read back: {e}")))
        })
    }

    /// Every document of the run, in id order, with its outcome for its
    /// current content, if any, and its last failure.
    pub(crate) async fn documents_with_outcomes(&self) -> Result<Vec<Exported>, Error> {
        let run = &self.settings.run;
        self.retrying("cannot read its outcomes", |client| async move {
            let select = client
                .prepare_cached(
                    "SELECT d.id, o.packet, o.attempts, o.usage, o.reviewed, o.facts,
                            (SELECT error FROM extract_failures f
                             WHERE f.run = d.run AND f.document = d.id AND f.content = d.content
                             ORDER BY seq DESC LIMIT 1),
                        d.content
                     FROM extract_documents d
                     LEFT JOIN extract_outcomes o ON o.run = d.run AND o.document = d.id AND o.content = d.content
                     WHERE d.run = $1
                     ORDER BY d.id",
                )
                .await?;
            client.query(&select, &[run]).await?.iter().map(Exported::read).collect()
        })
        .await
    }

    /// Every review and rejection of the run's documents as they are now, oldest first.
    pub(crate) async fn reviews(&self) -> Result<Vec<StoredReview>, Error> {
        let run = &self.settings.run;
        self.retrying("cannot read its reviews", |client| async move {
            let select = client
                .prepare_cached(
                    "SELECT r.seq, r.document, r.reviewer, r.reviewed_at, r.fix, r.fields_before, r.fields_after,
                            r.overrode, NULL
                     FROM extract_reviews r
                     JOIN extract_documents d ON d.run = r.run AND d.id = r.document AND d.content = r.content
                     WHERE r.run = $1
                     UNION ALL
                     SELECT j.seq, j.document, j.reviewer, j.rejected_at, NULL, NULL, NULL, NULL, j.reason
                     FROM extract_rejections j
                     JOIN extract_documents d ON d.run = j.run AND d.id = j.document AND d.content = j.content
                     WHERE j.run = $1
                     ORDER BY 1",
                )
                .await?;
            client.query(&select, &[run]).await?.iter().map(StoredReview::read).collect()
        })
        .await
    }

    /// The masked URL and run, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

async fn write_outcome(
    t: &deadpool_postgres::Transaction<'_>,
    run: &str,
    document: &str,
    outcome: &OutcomeRow,
) -> Result<(), Failure> {
    t.execute(
        &t.prepare_cached(
            "INSERT INTO extract_outcomes (run, document, content, state, packet, attempts, usage, facts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (run, document) DO UPDATE SET content = excluded.content, state = excluded.state,
             packet = excluded.packet, attempts = excluded.attempts, usage = excluded.usage,
             facts = excluded.facts, reviewed = false",
        )
        .await?,
        &[
            &run,
            &document,
            &outcome.content,
            &outcome.state,
            &outcome.packet,
            &(outcome.attempts as i32),
            &outcome.usage,
            &outcome.facts,
        ],
    )
    .await?;
    t.execute(&t.prepare_cached("UPDATE extract_documents SET state = $3, lease_owner = NULL, lease_until = NULL WHERE run = $1 AND id = $2").await?,
        &[&run, &document, &outcome.state],
    )
    .await?;
    Ok(())
}

/// Holds document `$2` of run `$1` for a write by worker `$4`: only while
/// it is pending for content `$3` and no other worker holds it (a batch's
/// documents are held by none); renews the lease of a document the worker
/// holds. Updates one row, or none: then the write is refused.
const HOLD: &str = "
    UPDATE extract_documents
    SET lease_until = CASE WHEN lease_owner IS NULL THEN NULL ELSE now() + $5 * interval '1 millisecond' END
    WHERE run = $1 AND id = $2 AND content = $3 AND state = 'pending' AND (lease_owner IS NULL OR lease_owner = $4)";

/// Every event of the run's documents (of one when `$2` names it), in the
/// order of [`Event::read`]'s columns.
const EVENTS: &str = "
    SELECT 'reply', seq, document, content, part, rung, attempt, batch, reply, cancelled FROM extract_replies
        WHERE run = $1 AND ($2::text IS NULL OR document = $2)
    UNION ALL SELECT 'failed', seq, document, content, NULL, NULL, NULL, batch, NULL, false FROM extract_failures
        WHERE run = $1 AND ($2::text IS NULL OR document = $2)
    UNION ALL SELECT 'resent', seq, document, NULL, NULL, NULL, NULL, batch, reason, counted FROM extract_resends
        WHERE run = $1 AND ($2::text IS NULL OR document = $2)
    UNION ALL SELECT 'reviewed', seq, document, content, NULL, NULL, NULL, NULL, fix, false FROM extract_reviews
        WHERE run = $1 AND ($2::text IS NULL OR document = $2)
    UNION ALL SELECT 'rejected', seq, document, content, NULL, NULL, NULL, NULL, reason, false FROM extract_rejections
        WHERE run = $1 AND ($2::text IS NULL OR document = $2)
    ORDER BY 2";

impl Columns for tokio_postgres::Row {
    type Error = Failure;
    fn text(&self, i: usize) -> Result<Option<String>, Failure> {
        Ok(self.try_get(i)?)
    }
    /// `BIGINT` or `INTEGER`.
    fn number(&self, i: usize) -> Result<Option<i64>, Failure> {
        match self.try_get::<_, Option<i64>>(i) {
            Ok(number) => Ok(number),
            Err(_) => Ok(self.try_get::<_, Option<i32>>(i)?.map(i64::from)),
        }
    }
    fn flag(&self, i: usize) -> Result<Option<bool>, Failure> {
        Ok(self.try_get(i)?)
    }
    /// PostgreSQL keeps times as `TIMESTAMPTZ`.
    fn time(&self, i: usize) -> Result<Option<i64>, Failure> {
        Ok(self.try_get::<_, Option<std::time::SystemTime>>(i)?.map(crate::clock::unix_seconds_of))
    }
    fn malformed(&self, i: usize, what: &str) -> Failure {
        Failure::Malformed(format!("column {i} does not read as {what}"))
    }
}
