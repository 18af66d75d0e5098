//! The one trait a model backend implements: [`Model`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Error, Prompt, Reply};

/// The future a [`Model`] call returns. It is `Send`, so extractions can be spawned.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, Error>> + Send + 'a>>;

/// A model backend: one async call from a [`Prompt`] to a [`Reply`].
///
/// Usable as `Box<dyn Model>` or `Arc<dyn Model>`, so a program can pick an
/// offline or live model at run time.
///
/// ```
/// use extract::model::{Model, ModelFuture, Prompt, Reply};
///
/// /// Always answers with an empty object.
/// struct Empty;
///
/// impl Model for Empty {
///     fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
///         Box::pin(async { Ok(Reply::tool_call(serde_json::json!({}))) })
///     }
/// }
///
/// let model: Box<dyn Model> = Box::new(Empty);
/// # let _ = model;
/// ```
pub trait Model: Send + Sync {
    /// Sends one prompt and returns the model's reply. `Err` only for
    /// transport and configuration failures (or the backend's own, kept
    /// whole with [`Error::other`](crate::Error::other)); a bad answer is
    /// still a `Reply`.
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a>;
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}

impl<M: Model + ?Sized> Model for &M {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }
}
