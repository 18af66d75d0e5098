//! What the model is shown: the [`Tool`] a model fills in, its strict copy,
//! and what the derive knows about a type ([`TypeInfo`], [`FieldInfo`],
//! [`CheckMeta`]), from which the tool's description lists the checks.
//! Also the keyword tables every walk over a schema shares.

mod derived;
mod describe;
pub mod keywords;
mod lean;
mod strict;
mod tool;

pub use derived::tool_of;
pub use describe::{CheckMeta, FieldInfo, Shape, Tagging, TypeInfo, Variant, VariantContent};
pub use strict::bounds_in_words;
pub use tool::{StrictError, Tool};
