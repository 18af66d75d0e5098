//! What a run's outcomes become for people: human review of an escalation
//! (what it holds, a reviewer's fix through all three layers) and the run
//! report (the HTML page and `Stats`' text), and both read from a journal.

#[path = "../support/mod.rs"]
mod support;

mod corpus;
mod errors;
mod eval;
mod journal;
mod report;
mod review;
