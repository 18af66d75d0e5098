//! Streamed replies of `POST /v1/messages` (`"stream": true`): the
//! server-sent events read as they arrive, the requested tool's
//! `input_json_delta` pieces (or, with JSON outputs, the text's
//! `text_delta` pieces) handed on as [`Chunk::Output`], and the message
//! assembled from the events into the [`Message`] a response body holds,
//! so a streamed reply is read by the same rules as a whole one.
//!
//! Events: `message_start` (id, model, input usage), `content_block_start`
//! / `_delta` / `_stop`, `message_delta` (stop reason, output usage),
//! `message_stop` (the end), `ping`, and `error` mid-stream (e.g.
//! `overloaded_error`): an API error, which the transport retries like a
//! body cut short. A body that ends before `message_stop` was cut short.
//! Unknown events are set aside, as the API's versioning asks.

use serde::Deserialize;
use serde_json::Value;

use super::builder::Mode;
use super::response::{Block, Message, WireUsage, api_error, status_of};
use extract_drive::http::sse::{self, Output, SseEvent};
use extract_drive::http::transport::{ApiError, Failure};

/// One streamed reply being assembled.
#[derive(Clone)]
pub(crate) struct Assembly {
    /// The requested tool, whose input is the output shown as it arrives.
    tool: String,
    mode: Mode,
    message: Message,
    /// The blocks' text so far (a tool call's input JSON), by index.
    texts: Vec<String>,
    usage: WireUsage,
    ended: bool,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: Start,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Start {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        name: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    stop_details: Option<Value>,
}

impl Assembly {
    pub(crate) fn new(tool: &str, mode: Mode) -> Assembly {
        Assembly {
            tool: tool.to_string(),
            mode,
            message: Message::default(),
            texts: Vec::new(),
            usage: WireUsage::default(),
            ended: false,
        }
    }

    /// Appends `text` to block `index`, handing it on when the block is
    /// the output: the requested tool's input, or the text of JSON outputs.
    fn append(&mut self, index: usize, text: &str, output: &mut Output<'_>) {
        let (Some(block), Some(held)) = (self.message.content.get(index), self.texts.get_mut(index)) else {
            return;
        };
        held.push_str(text);
        let shown = match block {
            Block::ToolUseText { name, .. } => self.mode == Mode::Tool && *name == self.tool,
            Block::Text { .. } => self.mode == Mode::JsonSchema,
            _ => false,
        };
        if shown {
            output.show(text);
        }
    }

    /// The message the events made: what a response body would have held.
    pub(crate) fn message(mut self) -> Message {
        for (block, text) in self.message.content.iter_mut().zip(self.texts) {
            *block = match std::mem::replace(block, Block::Other) {
                Block::Text { .. } => Block::Text { text },
                // An empty input is `{}`, as the API sends a call without arguments.
                Block::ToolUseText { name, .. } => {
                    match serde_json::from_str(if text.is_empty() { "{}" } else { &text }) {
                        Ok(input) => Block::ToolUse { name, input },
                        Err(_) => Block::ToolUseText { name, json: text },
                    }
                }
                other => other,
            };
        }
        self.message.usage = Some(self.usage);
        self.message
    }
}

impl sse::Assembly for Assembly {
    const CUT_SHORT: &'static str = "the Messages API's stream ended before its message_stop event";

    fn event(&mut self, sse: SseEvent, output: &mut Output<'_>) -> Result<(), Failure> {
        let event: Event = serde_json::from_str(&sse.data).map_err(|e| {
            Failure::Transport(format!(
                "the Messages API sent a `{}` event that is not JSON ({e})",
                sse.event
            ))
        })?;
        match event {
            Event::MessageStart { message } => {
                self.message.id = message.id;
                self.message.model = message.model;
                self.usage = message.usage.unwrap_or_default();
            }
            // A message has a few blocks: an index far past them is not one to make room for.
            Event::ContentBlockStart { index, .. } if index > self.message.content.len() + 64 => {}
            Event::ContentBlockStart { index, content_block } => {
                if self.message.content.len() <= index {
                    self.message.content.resize_with(index + 1, || Block::Other);
                    self.texts.resize_with(index + 1, String::new);
                }
                let (block, text) = match content_block {
                    StartBlock::Text { text } => (Block::Text { text: String::new() }, text),
                    StartBlock::ToolUse { name } => {
                        (Block::ToolUseText { name, json: String::new() }, String::new())
                    }
                    StartBlock::Other => (Block::Other, String::new()),
                };
                self.message.content[index] = block;
                self.texts[index] = String::new();
                self.append(index, &text, output);
            }
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => self.append(index, &text, output),
                BlockDelta::InputJsonDelta { partial_json } => self.append(index, &partial_json, output),
                BlockDelta::Other => {}
            },
            Event::MessageDelta { delta, usage } => {
                self.message.stop_reason = delta.stop_reason.or(self.message.stop_reason.take());
                self.message.stop_details = delta.stop_details.or(self.message.stop_details.take());
                if let Some(usage) = usage {
                    self.usage = self.usage.updated(usage);
                }
            }
            Event::MessageStop => self.ended = true,
            Event::Error => return Err(stream_error(&sse.data)),
            Event::Other => {}
        }
        Ok(())
    }

    fn ended(&self) -> bool {
        self.ended
    }
}

/// An `error` event: the API error it states, with the status the same
/// error has before a stream begins ([`status_of`]),
/// so the transport weighs it the same: `overloaded_error` (529) and
/// `rate_limit_error` (429) are sent again after a pause, an
/// `invalid_request_error` (400) is not.
fn stream_error(data: &str) -> Failure {
    let error: ApiError = api_error(500, data.as_bytes());
    let status = status_of(&error.error_type);
    Failure::Api { status, request_id: error.request_id.clone(), error: Box::new(error) }
}
