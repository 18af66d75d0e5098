//! Reading a finished run: what people look at once outcomes exist. The
//! HTML [`Report`] over [`Stats`](crate::Stats) and escalations, the
//! evaluation against labelled documents ([`eval`]) and the review desk
//! (`desk`, feature `desk`). They read outcomes (and journals) and nothing
//! below reaches them, so the policy in `run` stays free of pages, and the
//! drivers in `drive` of anything a person reads. The report is a `String`
//! the caller writes where it likes; `eval` reads files only to load a
//! corpus, and only the desk serves a socket.

#[cfg(feature = "desk")]
pub mod desk;
pub mod eval;
mod report;

pub use report::Report;
