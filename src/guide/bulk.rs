//! Many documents: [`Bulk`](crate::Bulk), journals, PostgreSQL workers,
//! pacing, and Message Batches.
//!
//! # A bulk run
//!
//! [`Bulk`](crate::Bulk) runs many documents through one
//! [`Extractor`](crate::Extractor) (its model and settings), a bounded
//! number at a time, and ends with a [`BulkReport`](crate::BulkReport):
//! every document's outcome and every failure by document id, and
//! [`Stats`](crate::Stats) over the run. `run(documents).await` takes any
//! `impl IntoIterator<Item = Document>`; `run_blocking` builds a runtime
//! of its own. The run is `Err` only for the journal's I/O and for
//! configuration (two documents with one id, say): a document whose model
//! call failed (transport) is in `report.failed`, and the others go on.
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # #[check(total > 0)]
//! # struct Invoice { total: f64 }
//! use extract::{Bulk, BulkReport, Document, Extractor, Retries, testing::Scripted};
//! use serde_json::json;
//!
//! let journal = std::env::temp_dir().join(format!("extract-guide-bulk-{}.db", std::process::id()));
//! # let _ = std::fs::remove_file(&journal);
//! let documents = || [Document::text("Total 12.50").with_id("inv-1"), Document::text("Total 8.00").with_id("inv-2")];
//!
//! // The model has one answer: the second document fails (the script runs dry).
//! let model = Scripted::new([json!({"total": 12.5})]);
//! let bulk = Bulk::new(Extractor::new(model).retries(Retries::new(2)?))
//!     .concurrency(1)          // documents in flight at once (default 8)
//!     .journal(journal.as_path())? // an SQLite database; the same journal again resumes
//!     .on_progress(|p| eprintln!("{}/{}", p.done, p.total));
//! let report: BulkReport<Invoice> = bulk.run_blocking(documents())?;
//! assert!(report.outcomes["inv-1"].is_valid());
//! assert!(report.failed.contains_key("inv-2"));
//!
//! // Again, on the same journal: inv-1 is replayed from it, only inv-2 is asked.
//! let model = Scripted::new([json!({"total": 8.0})]);
//! let report: BulkReport<Invoice> =
//!     Bulk::new(Extractor::new(model.clone())).journal(journal.as_path())?.run_blocking(documents())?;
//! assert_eq!((report.stats.valid(), report.failed.len(), model.calls()), (2, 0, 1));
//!
//! // The journal read back, with no model and no type.
//! let summary = extract::Journal::sqlite(&journal).summary()?;
//! assert_eq!(summary.stats.valid(), 2);
//! # std::fs::remove_file(&journal)?;
//! # let _ = std::fs::remove_file(journal.with_extension("db.lock"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In async code, `bulk.run::<Invoice>(documents).await?`; a runtime of
//! your own needs its I/O and timer drivers (`enable_all`) for a real
//! client.
//!
//! # The journal
//!
//! A [`Journal`](crate::Journal) makes a run durable and resumable. A path
//! given to [`Bulk::journal`](crate::Bulk::journal) is an SQLite database
//! (bundled, no server; feature `sqlite`, on by default), created if
//! absent. Every reply and outcome is committed durably before the run
//! counts it: a killed run loses only the calls in flight, and the same
//! journal again replays what was recorded (each outcome is built again by
//! the validators, never read from disk) and asks only for the rest. A document
//! whose content changed since, or a run whose tool or instructions
//! changed, is asked again (`report.asked_again` counts them). A file that
//! is not a journal is refused untouched. One run holds an SQLite journal
//! at a time.
//!
//! `cargo run --example bulk` kills a run half way and resumes it.
//! [`Journal::summary`](crate::Journal::summary) reads a journal back
//! (statistics, escalations, failures, reviews) for the HTML report, and
//! [`Journal::export_jsonl`](crate::Journal::export_jsonl) writes one JSON
//! line per document for `jq` and spreadsheets; neither takes the run's
//! lock, so both can read a journal a run has open.
//!
//! # Pacing by the provider's rate limits
//!
//! A bulk run paces its requests by the provider's rate limits before they
//! bite: each request waits until the limits the last reply's headers
//! stated (`anthropic-ratelimit-*`, `x-ratelimit-*`) can take it, counting
//! the requests in flight. A tight limit slows a run instead of failing
//! documents with 429s, and since the headers count every process of the
//! organisation, separate runs pace each other. A 429 still pauses every
//! task of the run. For a server that states no limits (vLLM, Ollama, a
//! proxy), give them; a limit the headers state wins:
//!
//! ```
//! # use extract::testing::Scripted;
//! # let local_model = Scripted::new(Vec::<serde_json::Value>::new());
//! use extract::{Bulk, Extractor, bulk::Limits};
//!
//! let bulk = Bulk::new(Extractor::new(local_model))
//!     .limits(Limits::per_minute().requests(50).tokens(40_000)); // .pace(false) turns pacing off
//! ```
//!
//! # Many workers on PostgreSQL
//!
//! With the feature `postgres`,
//! [`Journal::postgres(url, run)`](crate::Journal::postgres) shares one run among
//! worker processes on any number of machines. Each worker runs the same
//! documents on the same run name: it claims a document under a lease (30 s,
//! renewed every 10 s: `Journal::leases`), records each reply before it
//! counts, and takes over the documents of a worker that died once their
//! lease runs out. A 429 one worker sees pauses them all. Every worker's
//! report holds the whole run. Many runs share one database, each by its
//! name; the first worker creates or migrates the schema. The password is
//! in no `Debug`, error or trace.
//!
//! ```no_run
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Invoice { total: f64 }
//! # #[cfg(all(feature = "postgres", feature = "anthropic"))]
//! # async fn worker(documents: Vec<extract::Document>) -> Result<(), Box<dyn std::error::Error>> {
//! use extract::{Bulk, Extractor, Journal};
//!
//! // The same program on every machine, with the same documents.
//! let journal = Journal::postgres("postgres://extract:PASSWORD@db/extract", "march-2026");
//! let client = extract::anthropic::Client::from_env()?;
//! let report = Bulk::new(Extractor::new(client)).journal(journal)?.run::<Invoice>(documents).await?;
//! println!("{}", report.stats); // the whole run, whichever worker finished last
//! # Ok(()) }
//! ```
//!
//! # Message Batches
//!
//! [`anthropic::Batches`](crate::anthropic::Batches) runs the same on
//! Anthropic's Message Batches API, at half the price, with the same retry
//! policy, the same journal and the same `BulkReport`. A killed run
//! re-attaches its batches by their ids instead of creating them again. A
//! result that errored transiently or expired is sent again in the next
//! batch without spending a validation attempt. Batches refuse a ladder of
//! models.
//!
//! ```no_run
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Invoice { total: f64 }
//! # #[cfg(feature = "anthropic")]
//! # async fn batches(documents: Vec<extract::Document>) -> Result<(), Box<dyn std::error::Error>> {
//! use extract::anthropic::{Batches, Client};
//! use extract::Retries;
//!
//! let report = Batches::new(Client::from_env()?)
//!     .retries(Retries::new(2)?)
//!     .journal("runs/march-batch.db")?
//!     .run::<Invoice>(documents)
//!     .await?;
//! println!("{} valid of {}", report.stats.valid(), report.outcomes.len());
//! # Ok(()) }
//! ```
