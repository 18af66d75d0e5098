#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! The sans-IO core of `extract`. Use it through the facade crate
//! `extractable` (library `extract`), which re-exports what users name.
//!
//! Nothing here awaits, spawns, or touches a file, a socket or a database:
//! the drivers (`extractable-drive`) and the backends sit above it. Its
//! modules are layers whose imports point only downward (ARCHITECTURE.md
//! has a section per layer):
//!
//! - [`vocabulary`]: violations and paths, replies, usage, text helpers;
//! - [`schema`]: what the model is shown (the tool, its strict copy, type descriptions);
//! - [`validate`](mod@validate): the syntax, structure and semantic layers, `Sourced`, `Extractable`;
//! - [`run`]: the sans-IO retry policy and everything it produces;
//! - [`cost`]: what calls cost, by model;
//! - [`telemetry`]: the names traces use (OpenTelemetry's GenAI conventions).

pub mod cost;
pub mod run;
pub mod schema;
pub mod stream;
pub mod telemetry;
pub mod validate;
pub mod vocabulary;

pub use run::{
    Block, BlockKind, Correction, Corrections, Dominant, Escalation, FEEDBACK_PER_FINGERPRINT, FailedAttempt,
    Next, Outcome, PATCH_TOOL, Partial, Prompt, Reason, Retries, RetriesError, Run, SYSTEM_INSTRUCTIONS,
    Stats, Validated, apply_patch, patch_tool, review,
};
pub use schema::{StrictError, Tool};
pub use validate::{Extractable, Sourced, structure, syntax, validate};
pub use vocabulary::{
    Code, Content, Document, FieldPath, Fingerprint, Layer, Reply, ReplyContent, Segment, Source, Truncation,
    Usage, Violation, Violations, quote_prefix,
};

/// Items the derive's generated code reaches through `::extract::__private_v2`:
/// hidden plumbing, not public API. Its name is the contract's version
/// (`extract_contract::HIDDEN_MODULE`, which the assertion below ties it
/// to), so a derive of another version fails to compile against this runtime.
#[doc(hidden)]
pub mod __private_v2 {
    pub use crate::__derived_items as derived_items;
    pub use crate::schema::{CheckMeta, FieldInfo, Shape, Tagging, TypeInfo, Variant, VariantContent};
    pub use crate::validate::check::*;
    pub use crate::validate::{
        Anchored, Extractable, ObjectContent, ObjectRoot, generic_info, require_anchored,
        require_extractable, require_nested, require_object_content,
    };
    pub use crate::vocabulary::Segment;
    pub use crate::{
        __probe_leaf as probe_leaf, __probe_leaf_each as probe_leaf_each, __probe_show as probe_show,
        __probe_step as probe_step,
    };
    pub use schemars;
    pub use serde;
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{self, Err, Ok};
}

const _: () = assert!(
    extract_contract::same_text(extract_contract::HIDDEN_MODULE, "__private_v2"),
    "the hidden module's name is the contract's version: rename `__private_v2` with it"
);
