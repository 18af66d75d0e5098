//! Testing extractions without a network: [`Scripted`].
//!
//! A [`Scripted`] model answers with replies written in advance and records
//! every prompt it is sent. It is the way to test your own extractions: script
//! the replies a model might give (a good answer, a wrong total, text instead
//! of a tool call, a refusal), run the extraction, and assert on the outcome
//! and on the prompts (for example that the correction quoted the exact
//! violation).
//!
//! ```
//! use extract::{Code, FieldPath, Layer, Extractor, Outcome, Reason, Retries, Tool, Violations, Violation};
//! use extract::model::Reply;
//! use extract::testing::Scripted;
//! use serde_json::{json, Value};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let tool = Tool {
//!     name: "record_total".into(),
//!     description: "Record the total.".into(),
//!     input_schema: json!({"type": "object"}),
//!     strict: false,
//! };
//! fn total(output: &Value, _document: &str) -> Result<f64, Violations> {
//!     // A validator rejects what it cannot read: a missing total is not 0.0.
//!     output["total"].as_f64().ok_or_else(|| {
//!         let at = FieldPath::root().key("total");
//!         Violations::one(Violation::new(Layer::Structure, Code::INVALID_TYPE, at, "expected a number"))
//!     })
//! }
//!
//! // First the model answers in text, then it calls the tool.
//! let model = Scripted::new([Reply::text("The total is 12.50."), Reply::tool_call(json!({"total": 12.5}))]);
//! let extractor = Extractor::new(model.clone()).retries(Retries::new(1)?);
//! let outcome = extractor.extract_with(tool, "Total: 12.50", total).await?;
//!
//! assert_eq!(outcome.attempts(), 2);
//! let prompts = model.prompts();
//! assert_eq!(prompts.len(), 2);
//! let correction = prompts[1].correction.as_ref().unwrap();
//! assert_eq!(correction.previous_output, "The total is 12.50.");
//! assert!(correction.violations.contains("calling the tool `record_total`"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::model::{Chunk, ChunkStream};
use crate::{Error, Model, ModelFuture, Prompt, Reply, ReplyContent};

/// A model that returns the given replies in order, returns
/// [`Error::Other`] holding [`ScriptExhausted`] once it runs dry, and
/// records every [`Prompt`] it is sent.
///
/// Clones share one queue of replies and one record, so a test keeps a clone
/// to read after the run. Any iterable whose items convert into [`Reply`]
/// builds one; a `serde_json::Value` converts into a call of the requested
/// tool with that input.
#[derive(Debug, Clone)]
pub struct Scripted {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<Reply>,
    prompts: Vec<Prompt>,
    /// The size of a streamed reply's chunks, in bytes; `None`: one chunk.
    chunk_bytes: Option<usize>,
}

impl Scripted {
    /// A model that answers with `replies`, in order.
    pub fn new<I>(replies: I) -> Scripted
    where
        I: IntoIterator,
        I::Item: Into<Reply>,
    {
        let replies = replies.into_iter().map(Into::into).collect();
        Scripted { state: Arc::new(Mutex::new(State { replies, prompts: Vec::new(), chunk_bytes: None })) }
    }

    /// The same model (and its clones), streaming each tool call's input in
    /// chunks of `bytes` bytes (a character is never split; at least one
    /// byte), before the whole reply, as a streaming backend would. Without
    /// it, [`Model::stream`] gives each reply as one [`Chunk::Done`].
    pub fn chunked(self, bytes: usize) -> Scripted {
        self.lock().chunk_bytes = Some(bytes.max(1));
        self
    }

    /// Queues one more reply after the others.
    pub fn push(&self, reply: impl Into<Reply>) {
        self.lock().replies.push_back(reply.into());
    }

    /// Every prompt sent so far, in order (including one that found the script empty).
    pub fn prompts(&self) -> Vec<Prompt> {
        self.lock().prompts.clone()
    }

    /// The number of calls made so far.
    pub fn calls(&self) -> usize {
        self.lock().prompts.len()
    }

    /// The number of replies not yet returned.
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while the lock was held cannot leave the queue half-updated.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Why a [`Scripted`] model failed: it was called more times than it has
/// replies. The [`source()`](std::error::Error::source) of the
/// [`Error`] the call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the scripted model has no reply left for call {call}")]
pub struct ScriptExhausted {
    /// The 1-based number of the call that found the script empty.
    pub call: usize,
}

impl Scripted {
    /// Records `prompt` and takes the next reply.
    fn answer(&self, prompt: &Prompt) -> Result<Reply, Error> {
        let mut state = self.lock();
        state.prompts.push(prompt.clone());
        let call = state.prompts.len();
        state.replies.pop_front().ok_or_else(|| Error::other(ScriptExhausted { call }))
    }
}

impl Model for Scripted {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(std::future::ready(self.answer(prompt)))
    }

    fn stream<'a>(&'a self, prompt: &'a Prompt) -> ChunkStream<'a> {
        let chunk_bytes = self.lock().chunk_bytes;
        let chunks = match (self.answer(prompt), chunk_bytes) {
            (Err(error), _) => vec![Err(error)],
            (Ok(reply), None) => vec![Ok(Chunk::Done(reply))],
            (Ok(reply), Some(bytes)) => {
                let text = match &reply.content {
                    ReplyContent::ToolCall { input, .. } => Some(input.to_string()),
                    ReplyContent::ToolCallText { json, .. } => Some(json.clone()),
                    _ => None,
                };
                let mut chunks: Vec<_> = text
                    .iter()
                    .flat_map(|text| split(text, bytes))
                    .map(|c| Ok(Chunk::Output(c.into())))
                    .collect();
                chunks.push(Ok(Chunk::Done(reply)));
                chunks
            }
        };
        Box::pin(futures_util::stream::iter(chunks))
    }

    fn name(&self) -> &str {
        "scripted"
    }

    fn provider(&self) -> &str {
        "extract.scripted"
    }
}

/// `text` in pieces of about `bytes` bytes, each ended at a character boundary.
fn split(text: &str, bytes: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = bytes.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tool;
    use serde_json::json;

    fn prompt() -> Prompt {
        Prompt::new(
            Tool { name: "t".into(), description: String::new(), input_schema: json!({}), strict: false },
            "d",
        )
    }

    #[test]
    fn replies_in_order_then_dry_and_clones_share_state() {
        let model = Scripted::new([json!({"n": 1}), json!({"n": 2})]);
        let clone = model.clone();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let p = prompt();
        assert_eq!(rt.block_on(model.call(&p)).unwrap(), Reply::tool_call(json!({"n": 1})));
        assert_eq!(rt.block_on(clone.call(&p)).unwrap(), Reply::tool_call(json!({"n": 2})));
        let dry = rt.block_on(model.call(&p)).unwrap_err();
        let cause = std::error::Error::source(&dry).and_then(|e| e.downcast_ref::<ScriptExhausted>());
        assert_eq!(cause, Some(&ScriptExhausted { call: 3 }), "{dry}");
        assert_eq!(clone.prompts().len(), 3);
        assert_eq!(model.remaining(), 0);
        model.push(Reply::text("late"));
        assert_eq!(rt.block_on(clone.call(&p)).unwrap(), Reply::text("late"));
    }

    fn streamed(model: &dyn Model, prompt: &Prompt) -> Vec<Chunk> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let results: Vec<Result<Chunk, Error>> =
            rt.block_on(futures_util::StreamExt::collect(model.stream(prompt)));
        results.into_iter().map(|r| r.unwrap()).collect()
    }

    #[test]
    fn a_chunked_script_streams_the_input_text_in_pieces_then_the_whole_reply() {
        let input = json!({"name": "Café Zürich €", "amount": 1234.5, "items": [1, 2, 3]});
        let reply = Reply::tool_call(input.clone());
        let model = Scripted::new([reply.clone(), Reply::text("no tool")]).chunked(3);
        // Through a box, as a driver holds it: the stream is the script's own.
        let boxed: Box<dyn Model> = Box::new(model.clone());
        let chunks = streamed(&boxed, &prompt());
        let (last, outputs) = chunks.split_last().unwrap();
        assert_eq!(last, &Chunk::Done(reply));
        let mut text = String::new();
        for chunk in outputs {
            let Chunk::Output(piece) = chunk else { panic!("only output before the end: {chunk:?}") };
            // A piece is 3 bytes, or longer only to end at a character.
            assert!(piece.len() <= 3 + 3, "{piece:?}");
            text.push_str(piece);
        }
        assert_eq!(text, input.to_string());
        let mut reader = extract_core::stream::PartialJson::new();
        for chunk in outputs {
            let Chunk::Output(piece) = chunk else { unreachable!() };
            reader.push(piece).unwrap();
        }
        assert_eq!(reader.finish().unwrap(), input);
        // A reply without a tool call has no output to stream.
        assert_eq!(streamed(&model, &prompt()), vec![Chunk::Done(Reply::text("no tool"))]);
        assert_eq!(model.calls(), 2, "a stream is a call, recorded as one");
    }

    #[test]
    fn an_unchunked_script_streams_each_reply_whole_and_an_empty_one_fails() {
        let model = Scripted::new([json!({"n": 1})]);
        assert_eq!(streamed(&model, &prompt()), vec![Chunk::Done(Reply::tool_call(json!({"n": 1})))]);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let results: Vec<Result<Chunk, Error>> =
            rt.block_on(futures_util::StreamExt::collect(model.stream(&prompt())));
        assert_eq!(results.len(), 1);
        let dry = results[0].as_ref().unwrap_err();
        let cause = std::error::Error::source(dry).and_then(|e| e.downcast_ref::<ScriptExhausted>());
        assert_eq!(cause, Some(&ScriptExhausted { call: 2 }));
    }

    #[test]
    fn split_ends_every_piece_at_a_character() {
        assert_eq!(split("aé€b", 1), ["a", "é", "€", "b"]);
        assert_eq!(split("abcde", 2), ["ab", "cd", "e"]);
        assert!(split("", 4).is_empty());
    }
}
