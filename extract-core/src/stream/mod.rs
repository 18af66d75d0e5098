//! Streaming: what can be known of an output while it arrives. The
//! [`reader::PartialJson`] reads a model's JSON chunk by chunk and says
//! which values are finished.

pub mod reader;

pub use reader::{PartialJson, ReadError};
