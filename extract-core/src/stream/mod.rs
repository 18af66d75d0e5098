//! Streaming: what can be known of an output while it arrives. The
//! [`reader::PartialJson`] reads a model's JSON chunk by chunk and says
//! which values are finished; [`judge::judge()`] says what a prefix already
//! decides (the violations no later output can change, the paths complete);
//! a [`Snapshot`] is what a driver shows of it.

pub mod judge;
pub mod reader;
pub mod snapshot;

pub use judge::{Judgement, judge, prefix_violations};
pub use reader::{PartialJson, ReadError};
pub use snapshot::{PathState, Snapshot};
