//! Streamed replies of `POST {base}/chat/completions` (`"stream": true`):
//! the server-sent events read as they arrive, the requested tool's
//! `arguments` pieces (or, in [`Mode::JsonSchema`], the `content` pieces)
//! handed on as [`Chunk::Output`], and the deltas assembled into the
//! [`Completion`] a response body holds, so a streamed reply is read by
//! the same rules as a whole one.
//!
//! Events: `data:` lines of `chat.completion.chunk` objects, whose
//! `choices[0].delta` holds pieces of `content`, `refusal` and
//! `tool_calls` (by `index`: the name in a call's first delta, then its
//! `arguments` as text pieces), and whose last choice chunk states the
//! `finish_reason`; a chunk with `choices: []` and the `usage`
//! (`stream_options.include_usage`); then `data: [DONE]`, the end. An
//! `{"error": {...}}` mid-stream is an API error, which the transport
//! retries like a body cut short; so is a body that ends before `[DONE]`.

use serde::Deserialize;
use serde_json::Value;

use super::builder::Mode;
use super::response::{Choice, Completion, FunctionCall, Message, ToolCall, WireUsage, api_error};
use extract_drive::http::sse::{self, Output, SseEvent};
use extract_drive::http::transport::Failure;

/// One streamed reply being assembled.
#[derive(Clone)]
pub(crate) struct Assembly {
    /// The requested tool, whose arguments are the output shown as they arrive.
    tool: String,
    mode: Mode,
    id: Option<String>,
    model: Option<String>,
    /// Whether any choice arrived (a completion without one is no reply).
    chosen: bool,
    content: String,
    refusal: Option<String>,
    /// The tool calls so far, with their `index`, in the order they came.
    calls: Vec<(usize, Call)>,
    /// The index of the call shown as the output: the first named like the tool.
    shown_call: Option<usize>,
    finish_reason: Option<String>,
    usage: Option<WireUsage>,
    ended: bool,
}

#[derive(Default, Clone)]
struct Call {
    name: Option<String>,
    arguments: String,
}

/// A `chat.completion.chunk`, or an error in its place.
#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Option<Vec<ChoiceDelta>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
    /// `"error"` for an older vLLM's error, which has no `error` field.
    #[serde(default)]
    object: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    /// A string piece, or (from some servers) a list of text parts.
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    /// Absent from servers that send each call whole: then its place in the delta.
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A text piece per the API; some servers send the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

impl Assembly {
    pub(crate) fn new(tool: &str, mode: Mode) -> Assembly {
        Assembly {
            tool: tool.to_string(),
            mode,
            id: None,
            model: None,
            chosen: false,
            content: String::new(),
            refusal: None,
            calls: Vec::new(),
            shown_call: None,
            finish_reason: None,
            usage: None,
            ended: false,
        }
    }

    /// Adds a delta of call `index`: its name, a piece of its arguments.
    fn call(&mut self, index: usize, function: Option<FunctionDelta>, output: &mut Output<'_>) {
        let Some(function) = function else { return };
        // Looked up, not indexed: an index is the server's to choose.
        let at = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.calls.push((index, Call::default()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at].1;
        // Some servers repeat the name in every delta: the first one counts.
        let named = match function.name.filter(|n| !n.is_empty()) {
            Some(name) if call.name.is_none() => {
                let requested = name == self.tool;
                call.name = Some(name);
                requested
            }
            _ => false,
        };
        let piece = match function.arguments {
            Some(Value::String(piece)) => piece,
            None | Some(Value::Null) => String::new(),
            Some(whole) => whole.to_string(),
        };
        call.arguments.push_str(&piece);
        if named && self.mode == Mode::Tool && self.shown_call.is_none() {
            self.shown_call = Some(index);
            // Arguments that came with (or before) the name.
            let so_far = call.arguments.clone();
            output.show(&so_far);
        } else if self.shown_call == Some(index) {
            output.show(&piece);
        }
    }

    /// The completion the deltas made: what a response body would have held.
    pub(crate) fn completion(self) -> Completion {
        let mut calls = self.calls;
        calls.sort_by_key(|(index, _)| *index);
        // The call shown first, so the reply reads the call whose output was shown.
        if let Some(at) = calls.iter().position(|(i, _)| Some(*i) == self.shown_call) {
            let shown = calls.remove(at);
            calls.insert(0, shown);
        }
        let tool_calls: Vec<ToolCall> = calls
            .into_iter()
            .map(|(_, call)| ToolCall {
                function: Some(FunctionCall {
                    name: call.name,
                    arguments: Some(Value::String(call.arguments)),
                }),
            })
            .collect();
        let message = Message {
            content: (!self.content.is_empty()).then_some(Value::String(self.content)),
            refusal: self.refusal,
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
        };
        let choice = Choice { message: Some(message), finish_reason: self.finish_reason };
        Completion {
            id: self.id,
            model: self.model,
            choices: self.chosen.then(|| vec![choice]),
            usage: self.usage,
        }
    }
}

impl sse::Assembly for Assembly {
    const CUT_SHORT: &'static str = "the Chat Completions API's stream ended before `data: [DONE]`";

    fn event(&mut self, sse: SseEvent, output: &mut Output<'_>) -> Result<(), Failure> {
        if self.ended {
            return Ok(());
        }
        if sse.data.trim() == "[DONE]" {
            self.ended = true;
            return Ok(());
        }
        if sse.event == "error" {
            return Err(stream_error(&sse.data));
        }
        let event: Event = serde_json::from_str(&sse.data).map_err(|e| {
            Failure::Transport(format!("the Chat Completions API sent an event that is not JSON ({e})"))
        })?;
        if event.error.as_ref().is_some_and(|e| !e.is_null()) || event.object.as_deref() == Some("error") {
            return Err(stream_error(&sse.data));
        }
        // Azure's first chunk (its prompt filters') has an empty id and model.
        let stated = |field: Option<String>| field.filter(|s| !s.is_empty());
        self.id = self.id.take().or(stated(event.id));
        self.model = self.model.take().or(stated(event.model));
        if event.usage.is_some() {
            self.usage = event.usage;
        }
        // `n` is never sent: every choice is the first.
        for choice in event.choices.unwrap_or_default().into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            self.chosen = true;
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(refusal) = delta.refusal {
                self.refusal.get_or_insert_default().push_str(&refusal);
            }
            let content = text_of(delta.content);
            if !content.is_empty() {
                self.content.push_str(&content);
                if self.mode == Mode::JsonSchema {
                    output.show(&content);
                }
            }
            for (place, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                self.call(call.index.unwrap_or(place), call.function, output);
            }
        }
        Ok(())
    }

    fn ended(&self) -> bool {
        self.ended
    }
}

/// The text of a `content` delta: a string, or its text parts run together.
fn text_of(content: Option<Value>) -> String {
    match content {
        Some(Value::String(text)) => text,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str).or_else(|| part.as_str()))
            .collect(),
        _ => String::new(),
    }
}

/// An error event: the API error it states, with the status it names (a
/// numeric `code` or `status` from 400 to 599, or 429 for a `rate_limit`
/// type), else 500: the transport weighs it as that status before the
/// stream (a 400 is not sent again; a 429 or a 5xx is).
fn stream_error(data: &str) -> Failure {
    let error = api_error(500, data.as_bytes());
    let status = stated_status(data).unwrap_or(500);
    Failure::Api { status, request_id: error.request_id.clone(), error: Box::new(error) }
}

fn stated_status(data: &str) -> Option<u16> {
    let root: Value = serde_json::from_str(data).ok()?;
    let error = root.get("error").filter(|e| e.is_object()).unwrap_or(&root);
    let retried = |status: u64| matches!(status, 400..=599).then_some(status as u16);
    ["code", "status", "type"].into_iter().filter_map(|key| error.get(key)).find_map(|said| match said {
        Value::Number(n) => n.as_u64().and_then(retried),
        Value::String(s) if s.contains("rate_limit") => Some(429),
        Value::String(s) => s.trim().parse().ok().and_then(retried),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use futures_util::{FutureExt, StreamExt};
    use serde_json::json;

    use super::*;
    use crate::Chunk;
    use crate::{Error, ReplyContent, Usage};
    use extract_drive::http::sse::StreamedReply;
    use extract_drive::http::transport::BodyLine;
    use extract_drive::queued::Queue;
    use extract_drive::queued::queued_stream;

    /// What `lines` made `assembly` hand on.
    fn read(assembly: &mut StreamedReply<Assembly>, lines: &[&str]) -> (Vec<Chunk>, Result<(), Failure>) {
        let queue = Queue::default();
        let mut ended = Ok(());
        for line in lines {
            let line = match *line {
                "<start>" => BodyLine::Start,
                "<end>" => BodyLine::End,
                line => BodyLine::Line(line.as_bytes()),
            };
            ended = assembly.line(line, &queue);
            if ended.is_err() {
                break;
            }
        }
        let mut drained = queued_stream(std::future::ready(Err(Error::transport("drained"))), queue);
        let mut chunks = Vec::new();
        while let Some(Some(Ok(chunk))) = drained.next().now_or_never() {
            chunks.push(chunk);
        }
        (chunks, ended)
    }

    fn data(chunk: Value) -> String {
        format!("data: {chunk}")
    }

    fn calls(calls: Value) -> String {
        data(json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": "m",
                    "choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": null}]}))
    }

    fn outputs(chunks: &[Chunk]) -> String {
        chunks
            .iter()
            .map(|c| match c {
                Chunk::Output(piece) => piece.as_str(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn interleaved_calls_are_kept_apart_and_only_the_requested_one_is_shown() {
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        let lines = [
            "<start>".to_string(),
            calls(json!([{"index": 0, "id": "a", "type": "function",
                          "function": {"name": "other", "arguments": ""}}])),
            String::new(),
            calls(json!([{"index": 1, "id": "b", "type": "function",
                          "function": {"name": "record", "arguments": "{\"a\""}}])),
            String::new(),
            calls(json!([{"index": 0, "function": {"arguments": "{\"x\": 1}"}}])),
            String::new(),
            calls(json!([{"index": 1, "function": {"arguments": ": [1, "}}])),
            String::new(),
            calls(json!([{"index": 1, "function": {"arguments": "2]}"}}])),
            String::new(),
            data(
                json!({"id": "chatcmpl-s", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ),
            String::new(),
            data(json!({"id": "chatcmpl-s", "choices": [],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 7,
                                  "prompt_tokens_details": {"cached_tokens": 10}}})),
            String::new(),
            "data: [DONE]".to_string(),
            String::new(),
            "<end>".to_string(),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (chunks, ended) = read(&mut assembly, &lines);
        ended.unwrap();
        assert_eq!(outputs(&chunks), "{\"a\": [1, 2]}");
        let reply = assembly.into_assembly().completion().reply("record", Mode::Tool).unwrap();
        assert_eq!(
            reply.content,
            ReplyContent::ToolCallText { name: Some("record".into()), json: "{\"a\": [1, 2]}".into() }
        );
        assert_eq!(reply.usage, Usage::new(40, 7).with_cache(10, 0));
    }

    #[test]
    fn json_schema_content_is_shown_and_done_ends_the_stream() {
        let content = |piece: &str| {
            data(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]}))
        };
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::JsonSchema));
        let lines = [content("{\"a\":"), String::new(), content(" 1}"), String::new()];
        let mut lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (chunks, ended) = read(&mut assembly, &[&lines[..], &["<end>"]].concat());
        assert_eq!(outputs(&chunks), "{\"a\": 1}");
        let Err(Failure::Transport(cut)) = ended else { panic!("{ended:?}") };
        assert!(cut.contains("[DONE]"), "{cut}");

        // With `[DONE]`, the end is the end; what follows it is set aside.
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::JsonSchema));
        lines.extend([
            "data: [DONE]",
            "",
            "data: {\"choices\": [{\"delta\": {\"content\": \"x\"}}]}",
            "",
            "<end>",
        ]);
        let (_, ended) = read(&mut assembly, &lines);
        ended.unwrap();
        let reply = assembly.into_assembly().completion().reply("record", Mode::JsonSchema).unwrap();
        assert_eq!(reply.content, ReplyContent::ToolCallText { name: None, json: "{\"a\": 1}".into() });
    }

    #[test]
    fn a_restart_after_output_says_so_and_starts_over() {
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        let call = calls(json!([{"index": 0, "function": {"name": "record", "arguments": "{\"a\""}}]));
        let (chunks, _) = read(&mut assembly, &["<start>", &call, "", "<start>", &call, ""]);
        assert_eq!(chunks, [Chunk::Output("{\"a\"".into()), Chunk::Restart, Chunk::Output("{\"a\"".into())]);
        // Nothing was shown yet: no restart.
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        let (chunks, _) = read(&mut assembly, &["<start>", ": keep-alive", "", "<start>"]);
        assert!(chunks.is_empty(), "{chunks:?}");
    }

    #[test]
    fn an_error_event_is_an_api_error_with_the_status_it_names() {
        let error = |lines: &[&str]| {
            let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
            match read(&mut assembly, &[&["<start>"], lines, &[""]].concat()).1 {
                Err(Failure::Api { status, error, .. }) => (status, error.error_type, error.message),
                other => panic!("{other:?}"),
            }
        };
        let openai = error(&[
            r#"data: {"error": {"message": "Slow down.", "type": "requests", "code": "rate_limit_exceeded"}}"#,
        ]);
        assert_eq!(openai, (429, "requests".into(), "Slow down.".into()));
        let llama = error(&[
            r#"data: {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}"#,
        ]);
        assert_eq!((llama.0, llama.1.as_str()), (503, "unavailable_error"));
        let vllm = error(&[
            r#"data: {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}"#,
        ]);
        assert_eq!(
            (vllm.0, vllm.1.as_str()),
            (400, "BadRequestError"),
            "a stated 400 stays one: not sent again"
        );
        let named = error(&["event: error", "data: upstream failed"]);
        assert_eq!((named.0, named.1.as_str()), (500, "http_error"));
    }

    #[test]
    fn refusals_and_cut_calls_read_as_a_whole_body_would() {
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        let refusal = |piece: &str| data(json!({"choices": [{"index": 0, "delta": {"refusal": piece}}]}));
        let lines = [refusal("I can"), String::new(), refusal("'t."), String::new()];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        read(&mut assembly, &lines).1.unwrap();
        let reply = assembly.into_assembly().completion().reply("record", Mode::Tool).unwrap();
        assert_eq!(reply.content, ReplyContent::Refusal { text: "I can't.".into(), details: None });

        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        let call = calls(json!([{"index": 0, "function": {"name": "record", "arguments": "{\"a\": \"par"}}]));
        let stop = data(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}));
        read(&mut assembly, &[&call, "", &stop, ""]).1.unwrap();
        let reply = assembly.into_assembly().completion().reply("record", Mode::Tool).unwrap();
        assert_eq!(
            reply.content,
            crate::ReplyContent::Truncated {
                limit: crate::Truncation::MaxTokens,
                partial: Some("{\"a\": \"par".into())
            }
        );

        // No choice at all: no reply, as for a body without choices.
        let mut assembly = StreamedReply::new(Assembly::new("record", Mode::Tool));
        read(&mut assembly, &["data: {\"choices\": []}", ""]).1.unwrap();
        assert!(assembly.into_assembly().completion().reply("record", Mode::Tool).is_none());
    }
}
