//! The repository's documents hold: the README's code and output are what
//! the code derives and prints, and ARCHITECTURE.md's layer graph of
//! `extract-core/src` is the one the code imports.

#[path = "../support/mod.rs"]
mod support;

mod architecture;
mod corpus;
mod crates;
mod first_program;
mod long_corpus;
mod long_stand_in;
mod readme;
mod surface;
