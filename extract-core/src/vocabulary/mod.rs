//! The words every layer speaks: what went wrong ([`Violation`]) and where
//! ([`FieldPath`]), what a model answered ([`Reply`]) and what it cost
//! ([`Usage`]), and the text helpers messages share. Depends on nothing else
//! in the crate.

mod document;
pub mod pages;
mod path;
mod reply;
mod source;
pub mod text;
pub mod usage;
mod violation;

pub use document::{Content, Document};
pub use path::{FieldPath, Segment};
pub use reply::{Reply, ReplyContent, Truncation};
pub use source::Source;
pub use text::quote_prefix;
pub use usage::Usage;
pub use violation::{Code, Fingerprint, Layer, Violation, Violations};
