//! Reading a finished run: what people look at once outcomes exist. The
//! HTML [`Report`] over [`Stats`](crate::Stats) and escalations is here;
//! the evaluation against gold answers and the review desk belong here too.
//! They read outcomes (and journals) and nothing below reaches them, so the
//! policy in `run` stays free of pages, and the drivers in `drive` of
//! anything a person reads. Like `run`, this layer touches no file or
//! socket: the report is a `String` the caller writes where it likes.

pub mod eval;
mod report;

pub use report::Report;
