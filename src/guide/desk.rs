//! Reviewing escalations in a browser: the desk (feature `desk`).
//!
//! [`Desk`](crate::desk::Desk) serves a run's journal to reviewers: a
//! queue of the escalated documents nobody has reviewed yet and, for each,
//! the document with every quote highlighted, the fields that held and
//! those that failed, and a form that follows the schema. A fix is held to
//! all three layers, exactly as [`review`](fn@crate::review) holds it; a
//! fix that passes is recorded in the journal (who, when, the fields
//! before and after) and counts as a reviewed outcome. A reviewer can also
//! reject a document whose source is unusable, with a reason. The desk
//! reads stored outcomes: it needs neither the model nor the run's
//! instructions.
//!
//! It takes the journal of a run of the same type (a path is an SQLite
//! journal) and the run's documents, matched to the journal by id (it shows
//! them and checks quotes against them). `cargo run --example desk
//! --features desk` opens one on a scripted run.
//!
//! ```
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # #[check(total > 0)]
//! # struct Invoice { total: f64 }
//! # #[cfg(feature = "desk")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use extract::{Bulk, Document, Extractor, desk::Desk, testing::Scripted};
//! use serde_json::json;
//!
//! // A run whose one document escalates (the same wrong total twice).
//! let journal = std::env::temp_dir().join(format!("extract-guide-desk-{}.db", std::process::id()));
//! # let _ = std::fs::remove_file(&journal);
//! let documents = vec![Document::text("Total 7.50").with_id("inv-1")];
//! let model = Scripted::new([json!({"total": -7.5}), json!({"total": -7.5})]);
//! let bulk = Bulk::new(Extractor::new(model)).journal(journal.as_path())?;
//! bulk.run::<Invoice>(documents.clone()).await?;
//!
//! let desk = Desk::<Invoice>::new(journal.as_path(), documents)?; // the journal, the run's documents
//! let serving = desk.bind("127.0.0.1:0").await?;                  // loopback; port 0 takes a free one
//! println!("review desk: {}", serving.url());
//! // serving.run().await? serves until the process ends.
//! # std::fs::remove_file(&journal)?;
//! # let _ = std::fs::remove_file(journal.with_extension("db.lock"));
//! # Ok(()) }
//! # #[cfg(not(feature = "desk"))]
//! # fn main() {}
//! ```
//!
//! [`Desk::serve`](crate::desk::Desk::serve) binds and serves in one call;
//! [`Desk::router`](crate::desk::Desk::router) gives the desk as an axum
//! router to nest in your own application, where every link, form and
//! redirect stays under its prefix:
//!
//! ```no_run
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
//! # struct Invoice { total: f64 }
//! # #[cfg(feature = "desk")]
//! # async fn serve(documents: Vec<extract::Document>) -> Result<(), Box<dyn std::error::Error>> {
//! use extract::desk::Desk;
//!
//! let desk = Desk::<Invoice>::new("runs/march.db", documents.clone())?;
//! desk.serve("127.0.0.1:8088").await?; // until the process ends
//!
//! // Or inside your application, with an access token.
//! let desk = Desk::<Invoice>::new("runs/march.db", documents)?.token("a-long-random-secret");
//! let app = axum::Router::new().nest("/review", desk.router()?);
//! axum::serve(tokio::net::TcpListener::bind("0.0.0.0:3000").await?, app).await?;
//! # Ok(()) }
//! ```
//!
//! # Safe by default
//!
//! - It binds loopback only, unless given an access token
//!   ([`Desk::token`](crate::desk::Desk::token), at least 16 characters,
//!   sent once as `?token=` or as `Authorization: Bearer`). Nested in an
//!   application without a token, it answers only requests whose `Host` is
//!   a loopback name.
//! - Every form carries a CSRF token.
//! - Every string from a model or a document is escaped.
//! - A Content-Security-Policy lets the pages load nothing from outside.
//! - Request bodies are capped ([`BODY_LIMIT`](crate::desk::BODY_LIMIT)).
//! - It works without JavaScript.
//!
//! # What reviewers did
//!
//! The journal keeps every decision.
//! [`Journal::reviews`](crate::Journal::reviews) reads them back (so does
//! [`Journal::summary`](crate::Journal::summary)), and
//! [`Report::reviews`](crate::report::Report::reviews) adds what reviewers
//! changed to the run's HTML report:
//!
//! ```no_run
//! let journal = extract::Journal::sqlite("runs/march.db");
//! let (summary, reviews) = (journal.summary()?, journal.reviews()?);
//! let page = extract::report::Report::new(&summary.stats).reviews(&reviews).html();
//! std::fs::write("runs/march.html", page)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
