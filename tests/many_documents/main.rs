//! Many documents: `Bulk` (bounded concurrency, a journal, resuming after a
//! real child process is killed mid-run) and `Batches` against a stand-in of
//! the Message Batches API on 127.0.0.1 (rounds, resends, re-attaching a batch
//! after a kill). The kill tests re-run this binary as the child, filtered to
//! one test by its full name (`bulk::child_process_bulk_run`); the journal's
//! tests refuse what is not a journal without touching it, and fill a real
//! (tmpfs) filesystem under a run; the lock's hold a journal through every
//! spelling of its path, from this process and from a child.

#[path = "../support/mod.rs"]
mod support;

mod batches;
mod bulk;
mod journal;
mod lock;
mod migrations;
#[cfg(feature = "anthropic")]
mod pacing;
mod reviews;
mod windows;
