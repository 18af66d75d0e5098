#![warn(missing_docs)]
//! Runtime of `extract`. Use it through the facade crate `extract`, which
//! re-exports everything here together with `#[derive(Extractable)]`.
//!
//! The crate is built in layers, each a module whose imports point only
//! downward (ARCHITECTURE.md has a section per layer):
//!
//! - `vocabulary`: violations and paths, replies, usage, text helpers;
//! - `schema`: what the model is shown (the tool, its strict copy, type descriptions);
//! - `validate`: the syntax, structure and semantic layers, `Sourced`, `Extractable`;
//! - `run`: the sans-IO retry policy and everything it produces;
//! - `drive`: the `Model` trait, `Extractor`, `testing`, `Error`;
//! - `inspect`: reading a finished run: the HTML `Report`;
//! - `anthropic`: the Claude backend (feature `anthropic`);
//! - `openai`: the Chat Completions backend (feature `openai`).

mod drive;
mod inspect;
mod run;
mod schema;
mod validate;
mod vocabulary;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "openai")]
pub mod openai;

pub use drive::testing;
pub use drive::{Bulk, BulkReport, Error, Extractor, Model, ModelFuture, Progress};
pub use inspect::Report;
pub use run::{
    Block, BlockKind, Correction, Dominant, Escalation, FEEDBACK_PER_FINGERPRINT, FailedAttempt, Next,
    Outcome, Partial, Prompt, Reason, Retries, RetriesError, Run, Stats, Validated, review,
    system_instructions,
};
pub use schema::{FieldInfo, NestedInfo, Shape, StrictError, Tool, TypeInfo};
pub use validate::{Extractable, Sourced, structure, syntax, validate};
pub use vocabulary::{
    Code, Content, Document, FieldPath, Fingerprint, Layer, Reply, ReplyContent, Segment, Source, Truncation,
    Usage, Violation, Violations, quote_prefix,
};

/// Items the derive's generated code reaches through `::extract::__private`. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__derived_items as derived_items;
    pub use crate::schema::{
        CHECK_MARK, CheckMeta, FieldInfo, ITEM_MARK, PART_MARK, PATH_MARK, Shape, TypeInfo,
    };
    pub use crate::validate::check::*;
    pub use crate::validate::{Extractable, require_extractable};
    pub use crate::vocabulary::Segment;
    pub use schemars;
    pub use serde;
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{self, Err, Ok};
}
