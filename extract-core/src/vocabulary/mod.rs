//! The words every layer speaks: what went wrong ([`Violation`]) and where
//! ([`FieldPath`]), what a model answered ([`Reply`]) and what it cost
//! ([`Usage`]), and the text helpers messages share. Depends on nothing else
//! in the crate.

mod path;
mod reply;
pub(crate) mod text;
mod usage;
mod violation;

pub use path::{FieldPath, Segment};
pub use reply::{Reply, ReplyContent, Truncation};
pub use text::quote_prefix;
pub use usage::Usage;
pub use violation::{Code, Fingerprint, Layer, Violation, Violations};
