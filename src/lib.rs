#![doc = include_str!("../README.md")]

pub use extract_core::*;
pub use extract_derive::Extractable;
