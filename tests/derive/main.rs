//! The derive and the check language, through `extract::validate` and
//! `T::tool()`: what a derived type shows the model (its tool, plain and
//! strict, snapshotted and held to the 2020-12 metaschema), what its checks
//! mean (absence, numbers, aggregates, dates, decimals, quotes), and how far
//! the semantic walk reaches (every container the derive can see).
//! Compile errors of the derive are `tests/ui.rs`'s.

mod bounds;
mod check_language;
mod corner_cases;
mod dates_decimals_quotes;
mod enums;
mod field_reads;
mod generics;
mod metaschema;
mod nested_containers;
mod newtypes;
mod per_window;
mod seed_checks;
mod tool_snapshots;
mod type_aliases;
