//! One run shared by many worker processes on a real PostgreSQL server
//! (started by `support::postgres` in a temporary directory): workers that
//! share the documents, one killed mid-run; a 429 that pauses every worker;
//! a worker that joins a finished run; faults that are clear errors before
//! any model call; the review queue and reports on the shared journal. The
//! workers are this binary run again as children, filtered to
//! `workers::child_worker` by its full name.

#[path = "../support/mod.rs"]
mod support;

mod batches;
mod faults;
mod migrations;
mod stalled;
mod stand_in;
mod workers;
