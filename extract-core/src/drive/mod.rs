//! What drives a [`Run`](crate::Run) against a model: the [`Model`] trait a
//! backend implements, the async and blocking [`Extractor`], the scripted
//! model of [`testing`], and the transport and configuration [`Error`].

mod error;
mod extractor;
#[cfg(feature = "http")]
pub(crate) mod http;
mod model;
pub mod testing;

pub use error::Error;
pub use extractor::Extractor;
pub use model::{Model, ModelFuture};
