#![warn(missing_docs)]
//! Runtime of `extract`. Use it through the facade crate `extract`, which
//! re-exports everything here together with `#[derive(Extractable)]`.

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[doc(hidden)]
pub mod check;
mod describe;
mod error;
mod extractable;
mod extractor;
mod hint;
mod model;
mod outcome;
mod policy;
mod prompt;
mod retries;
mod sourced;
mod stats;
mod strict;
pub mod structure;
pub mod syntax;
pub mod testing;
mod tool;
mod usage;
mod validate;
mod violation;

pub use describe::{FieldInfo, TypeInfo};
pub use error::Error;
pub use extractable::Extractable;
pub use extractor::Extractor;
pub use model::{Model, ModelFuture, Reply, ReplyContent, Truncation};
pub use outcome::{Escalation, FailedAttempt, Outcome, Reason, Validated};
pub use policy::{Next, Run};
pub use prompt::{Block, BlockKind, Correction, Prompt, system_instructions};
pub use retries::{Retries, RetriesError};
pub use sourced::Sourced;
pub use stats::{Dominant, Stats};
pub use tool::{StrictError, Tool};
pub use usage::Usage;
pub use validate::validate;
pub use violation::{Code, FieldPath, Fingerprint, Layer, Segment, Violation, Violations, quote_prefix};

/// Items the derive's generated code reaches through `::extract::__private`. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::check::*;
    pub use crate::extractable::TypeCache;
    pub use crate::{FieldInfo, TypeInfo};
    pub use schemars;
    pub use serde;
    pub use std::cell::Cell;
    pub use std::marker::PhantomData;
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{self, Err, Ok};
    pub use std::sync::OnceLock;
}
