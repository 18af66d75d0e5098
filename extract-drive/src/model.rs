//! The one trait a model backend implements: [`Model`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::queued::{Queue, queued_stream};
use crate::{Error, Prompt, Reply};

/// The future a [`Model`] call returns. It is `Send`, so extractions can be spawned.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, Error>> + Send + 'a>>;

/// The stream a [`Model::stream`] call returns: [`Chunk`]s in the order
/// they arrive, the last one [`Chunk::Done`]. `Send`, like [`ModelFuture`];
/// dropping it cancels the call (a backend drops its connection).
pub type ChunkStream<'a> = Pin<Box<dyn futures_core::Stream<Item = Result<Chunk, Error>> + Send + 'a>>;

/// The [`ChunkStream`] of a call that hands its output on as it arrives:
/// `call` is given the queue the output's [`Chunk`]s go to and answers the
/// whole reply, which ends the stream as [`Chunk::Done`]. Dropping the
/// stream drops the call. What a backend's [`Model::stream`] returns.
/// Push from within `call`'s future only: the stream looks at the queue
/// when it polls that future (see [`Queue::push`]).
pub fn chunk_stream<'a, F>(call: impl FnOnce(Queue<Chunk>) -> F) -> ChunkStream<'a>
where
    F: Future<Output = Result<Reply, Error>> + Send + 'a,
{
    let chunks = Queue::default();
    let answered = call(chunks.clone());
    queued_stream(async move { answered.await.map(Chunk::Done) }, chunks)
}

/// One piece of a streamed reply.
///
/// A stream is `Output` pieces (none at all when the backend cannot
/// stream), with a `Restart` wherever the transport lost the stream and
/// sent the request again, then one `Done` with the whole [`Reply`]: what
/// a non-streaming [`Model::call`] would have answered. An `Err` ends the
/// stream as it ends a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Chunk {
    /// More of the output's JSON text, in order: the tool call's input (or,
    /// in a JSON-schema mode, the message's content). A chunk may end
    /// anywhere, inside a string or a number, never inside a character.
    Output(String),
    /// The stream was cut and the request sent again: the output starts
    /// over, and what came before this chunk is void.
    Restart,
    /// The whole reply; nothing follows it.
    Done(Reply),
}

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

    /// Sends one prompt and streams the reply as it is written (see
    /// [`Chunk`]). By default the whole reply of [`call`](Model::call) as
    /// one [`Chunk::Done`], so a backend that cannot stream streams
    /// unchanged; a backend that can overrides it.
    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        Box::pin(futures_util::stream::once(async move { self.call(prompt).await.map(Chunk::Done) }))
    }

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
// a wrapper never hides a backend's own answer (its name, its stream).

impl<M: Model + ?Sized> Model for Box<M> {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        (**self).call(prompt)
    }

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        (**self).stream(prompt)
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

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        (**self).stream(prompt)
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

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        (**self).stream(prompt)
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

    /// A backend that answers and does not stream.
    struct Whole;

    impl Model for Whole {
        fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
            Box::pin(async { Ok(Reply::tool_call(serde_json::json!({"n": 1}))) })
        }
    }

    #[test]
    fn a_backend_that_cannot_stream_streams_its_whole_reply_as_one_chunk() {
        let prompt = Prompt::new(
            crate::Tool {
                name: "t".into(),
                description: String::new(),
                input_schema: serde_json::json!({}),
                strict: false,
            },
            "d",
        );
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for model in [Box::new(Whole) as Box<dyn Model>, Box::new(Arc::new(Whole)), Box::new(&Whole)] {
            let chunks: Vec<Result<Chunk, Error>> =
                rt.block_on(futures_util::StreamExt::collect(model.stream(&prompt)));
            let chunks: Vec<Chunk> = chunks.into_iter().map(Result::unwrap).collect();
            assert_eq!(chunks, vec![Chunk::Done(Reply::tool_call(serde_json::json!({"n": 1})))]);
        }
    }
}
