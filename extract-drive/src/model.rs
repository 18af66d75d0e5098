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

    /// The model's name, for outcomes, prices, pacing and telemetry: the
    /// model id a backend sends (`claude-sonnet-5-5`). By default the
    /// backend type's name.
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }

    /// Who serves the model, as OpenTelemetry's GenAI conventions name it
    /// (`gen_ai.provider.name`: `anthropic`, `openai`, ...). By default
    /// `unknown`.
    fn provider(&self) -> &str {
        "unknown"
    }
}

/// A boxed backend shows its name: `Extractor<Box<dyn Model>>` is `Debug`.
impl std::fmt::Debug for dyn Model + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("name", &self.name()).finish_non_exhaustive()
    }
}

// A `Model` behind a pointer is the model itself: every method forwards, so
// a wrapper never hides a backend's own answer (its name, say).

impl<M: Model + ?Sized> Model for Box<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn provider(&self) -> &str {
        (**self).provider()
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn provider(&self) -> &str {
        (**self).provider()
    }
}

impl<M: Model + ?Sized> Model for &M {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn provider(&self) -> &str {
        (**self).provider()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Scripted;

    /// A backend that names itself and answers nothing.
    struct Named;

    impl Model for Named {
        fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
            Box::pin(async { Err(Error::config("no answer")) })
        }

        fn name(&self) -> &str {
            "named-1"
        }
    }

    /// A backend that keeps the default name.
    struct Plain;

    impl Model for Plain {
        fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
            Box::pin(async { Err(Error::config("no answer")) })
        }
    }

    #[test]
    fn every_pointer_to_a_model_forwards_its_name() {
        let boxed: Box<dyn Model> = Box::new(Named);
        let shared: Arc<dyn Model> = Arc::new(Named);
        assert_eq!(boxed.name(), "named-1");
        assert_eq!(shared.name(), "named-1");
        assert_eq!(Model::name(&&Named), "named-1", "a reference forwards");
        assert_eq!(Box::new(Arc::new(Named)).name(), "named-1");
        assert_eq!(Scripted::new(Vec::<Reply>::new()).name(), "scripted");
        assert!(Plain.name().ends_with("Plain"), "the default is the type's name: {}", Plain.name());
    }
}
