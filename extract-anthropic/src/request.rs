//! The body of `POST /v1/messages`, mapped from a [`Prompt`]: its blocks
//! become content blocks, never one flattened string.
//!
//! - `tools`: the prompt's tool (a windowed extraction's call: every tool
//!   the extraction offers, [`Prompt::offered_tools`], the same on every
//!   call), the last with `cache_control: {"type": "ephemeral"}` where the
//!   prompt is long enough to be cached (tools render first, so the cache
//!   prefix starts with them).
//! - `tool_choice`: forced (`{"type": "any", "disable_parallel_tool_use": true}`:
//!   the request offers one tool, so any tool is that one; a windowed call
//!   offers several, and its task names the one to call) or, where forcing
//!   is refused, `{"type": "auto", "disable_parallel_tool_use": true}`
//!   with the strict copy of the tool and a system instruction to answer only
//!   through it (unless the system already says so, as the built-in one does).
//! - one user message: the document as a `document` block with a plain-text
//!   source (byte for byte; `cache_control` ephemeral where the tool is
//!   marked, so a correction attempt reads tools, system and document from
//!   the cache), alone on a first attempt, then the labelled blocks after
//!   it: a correction's, and a windowed call's task.
//!
//! - To a server other than Claude's API ([`DocumentAs::Text`]), the tool's
//!   numeric bounds are restated in words ([`bounds_in_words`]): such a
//!   server may decode under the schema's grammar, which would force a
//!   value a check exists to catch.
//!
//! - JSON outputs ([`Ask::Json`]): no `tools` and no `tool_choice`;
//!   `output_config: {"format": {"type": "json_schema", "schema"}}` with the
//!   tool's strict schema (a patch correction: the patch's), and a system
//!   note to answer with the input object as JSON.
//!
//! `temperature`, `top_p` and `top_k` are never sent: API version
//! `2026-10-21` answers any of them with a 400.

use serde_json::{Value, json};
use tracing::warn;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

#[cfg(test)]
use crate::run::answer_through_tool;
use crate::run::{PATCH_TOOL, answer_as_json, system_answering_through_tool};
use crate::schema::bounds_in_words;
use crate::{BlockKind, Content, Document, Error, Prompt, Tool};

/// How the request asks for the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolChoice {
    /// `{"type": "any", "disable_parallel_tool_use": true}`: the request
    /// offers one tool, so any tool is that one.
    Forced,
    /// `{"type": "auto", "disable_parallel_tool_use": true}` with the strict
    /// tool and an instruction to answer only through it.
    AutoStrict,
}

fn ephemeral() -> Value {
    json!({ "type": "ephemeral" })
}

/// Below this many bytes of tool, system and document, a prompt is under
/// every Claude model's minimum cacheable length (512 tokens at the least,
/// by model up to 4,096; text and JSON run at about 3 bytes a token or more),
/// so a cache marker would only add bytes: the API caches nothing shorter.
const CACHEABLE_BYTES: usize = 1_536;

/// Whether `prompt`'s prefix (tool, system, document) is long enough for the
/// API to cache it; a PDF always is.
fn worth_caching<'v>(prompt: &Prompt, tools: impl IntoIterator<Item = &'v Value>, system: &str) -> bool {
    let document = match prompt.document.content() {
        Content::Text(text) => text.len(),
        Content::Pdf { .. } => return true,
    };
    let tools: usize = tools.into_iter().map(|tool| tool.to_string().len()).sum();
    tools + system.len() + document >= CACHEABLE_BYTES
}

/// How the request carries the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocumentAs {
    /// A `document` block: a text source byte for byte, or a base64 PDF.
    Block,
    /// A labelled, fenced text block (a PDF's text layer), for servers that
    /// speak the Messages API but drop `document` blocks. Such a server is
    /// not Claude's API, and may decode under the tool's schema: its numeric
    /// bounds go in words.
    Text,
}

/// How a request asks for the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// Through the tool, asked for with this choice.
    Tool(ToolChoice),
    /// Through Claude's JSON outputs: `output_config.format`, no tool.
    Json,
}

/// The request body for `prompt`; `Err` (configuration) for a PDF without
/// a text layer when documents go as text, and for JSON outputs of a
/// schema over their limits (before anything is sent).
pub(crate) fn body(
    prompt: &Prompt,
    model: &str,
    max_tokens: u32,
    ask: Ask,
    document_as: DocumentAs,
) -> Result<Value, Error> {
    let tool_name = prompt.tool.name.as_str();
    let mut body = json!({ "model": model, "max_tokens": max_tokens });
    let (system, cache) = match ask {
        Ask::Tool(choice) => {
            let (tool_choice, system) = match choice {
                // The request offers one tool (or a windowed extraction's,
                // the same on every call, its task naming the one to call):
                // `any` forces a tool call as surely as naming it.
                ToolChoice::Forced => {
                    (json!({ "type": "any", "disable_parallel_tool_use": true }), prompt.system.clone())
                }
                ToolChoice::AutoStrict => (
                    json!({ "type": "auto", "disable_parallel_tool_use": true }),
                    system_answering_through_tool(&prompt.system, tool_name),
                ),
            };
            let mut tools: Vec<Value> = prompt
                .offered_tools()
                .iter()
                .map(|offered| {
                    // A patch's untyped `value` is not for strict tools: sent as it is.
                    let mut tool = if choice == ToolChoice::AutoStrict && offered.name != PATCH_TOOL {
                        strict_or_plain(offered)
                    } else {
                        offered.clone()
                    };
                    if document_as == DocumentAs::Text {
                        bounds_in_words(&mut tool.input_schema);
                    }
                    serde_json::to_value(&tool).unwrap_or_else(|_| json!({}))
                })
                .collect();
            let cache = worth_caching(prompt, &tools, &system);
            // The breakpoint after the last tool caches every tool before it.
            if cache && let Some(object) = tools.last_mut().and_then(Value::as_object_mut) {
                object.insert("cache_control".into(), ephemeral());
            }
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = tool_choice;
            (system, cache)
        }
        Ask::Json => {
            body["output_config"] =
                json!({ "format": { "type": "json_schema", "schema": json_schema(prompt)? } });
            let mut system = prompt.system.clone();
            if !system.trim().is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&answer_as_json(tool_name));
            let cache = worth_caching(prompt, [&body["output_config"]], &system);
            (system, cache)
        }
    };
    body["messages"] = json!([{ "role": "user", "content": content(prompt, document_as, cache)? }]);
    if !system.is_empty() {
        body["system"] = Value::String(system);
    }
    Ok(body)
}

/// Makes `body` a streamed request (`"stream": true`), its tool's input
/// streamed without buffering (`"eager_input_streaming": true`) where
/// documents go as blocks: to Claude's API, which takes the field.
pub(crate) fn streamed(body: &mut Value, document_as: DocumentAs) {
    body["stream"] = Value::Bool(true);
    if document_as == DocumentAs::Block
        && let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut)
    {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            tool.insert("eager_input_streaming".into(), Value::Bool(true));
        }
    }
}

/// The schema of Claude's JSON outputs: the tool's strict copy (the same
/// subset strict tools take), or a configuration error naming the limit
/// the schema is over. A patch correction's schema is the patch tool's,
/// closed as JSON outputs require, with its `value` left untyped.
fn json_schema(prompt: &Prompt) -> Result<Value, Error> {
    if prompt.asks_for_patch() {
        return Ok(prompt.tool.input_schema.clone());
    }
    prompt.tool.strict().map(|strict| strict.input_schema).map_err(|error| {
        Error::config(format!(
            "Claude's JSON outputs (anthropic::Mode::JsonSchema, ANTHROPIC_MODE=json_schema) take the schemas \
             strict tools take, and {error}; use Mode::Tool for this type"
        ))
    })
}

/// The strict copy of `tool`, or the tool as it is when it cannot be made strict.
fn strict_or_plain(tool: &Tool) -> Tool {
    match tool.strict() {
        Ok(strict) => strict,
        Err(error) => {
            warn!(tool = %tool.name, %error, "sending the tool without strict mode");
            tool.clone()
        }
    }
}

/// The content blocks of the one user message: the document, then the
/// blocks after it as one text ([`Prompt::text_after_document`]: a
/// correction's, a windowed call's task); the system and the tool go in
/// fields of their own.
///
/// A first attempt's message is the document alone: the forced tool, or the
/// system's instruction to answer only through it, already says what to do.
fn content(prompt: &Prompt, document_as: DocumentAs, cache: bool) -> Result<Vec<Value>, Error> {
    let mut blocks = vec![document(&prompt.document, document_as, cache)?];
    if let Some(after) = prompt.text_after_document() {
        blocks.push(text(after));
    }
    Ok(blocks)
}

/// The document's block, with `cache_control` where the prompt is
/// `cache`-worthy, so a correction reads it from the prompt cache. A
/// `document` block is labelled by its type; its title is the document's
/// own, where it has one. As text, it is fenced under the label the
/// instructions use.
fn document(document: &Document, document_as: DocumentAs, cache: bool) -> Result<Value, Error> {
    let title = document.title();
    let mut block = match (document_as, document.content()) {
        (DocumentAs::Block, Content::Text(text)) => json!({
            "type": "document",
            "source": { "type": "text", "media_type": "text/plain", "data": text },
        }),
        (DocumentAs::Block, Content::Pdf { bytes, .. }) => json!({
            "type": "document",
            "source": { "type": "base64", "media_type": "application/pdf", "data": BASE64.encode(bytes) },
        }),
        (DocumentAs::Text, _) => {
            let Some(text) = document.searchable_text() else {
                return Err(Error::config(format!(
                    "document {} is a PDF without a text layer, and the Anthropic client sends documents as text \
                     to this server (document blocks are off: not Anthropic's own API, or \
                     ClientBuilder::document_blocks(false)); give it a text layer with \
                     Document::with_text_layer, or turn document blocks on",
                    document.id()
                )));
            };
            let block = crate::Block { kind: BlockKind::Document, text: std::borrow::Cow::Borrowed(text) };
            let heading = match title {
                Some(own) => format!("{}: {own}", BlockKind::Document.label()),
                None => BlockKind::Document.label().to_string(),
            };
            json!({ "type": "text", "text": block.fenced(&heading) })
        }
    };
    if let Some(object) = block.as_object_mut() {
        if let (DocumentAs::Block, Some(own)) = (document_as, title) {
            object.insert("title".into(), own.into());
        }
        if cache {
            object.insert("cache_control".into(), ephemeral());
        }
    }
    Ok(block)
}

fn text(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Correction;

    fn prompt() -> Prompt {
        let tool = Tool {
            name: "record_note".into(),
            description: "Record one note.".into(),
            input_schema: json!({"type": "object", "properties": {}}),
            strict: false,
        };
        let mut prompt = Prompt::new(tool, "Invoice \"7\"\nTotal: 5 €");
        prompt.system = "Extract.".into();
        prompt
    }

    #[test]
    fn forced_body_has_exactly_the_documented_fields() {
        let body =
            body(&prompt(), "claude-haiku-5-5", 1024, Ask::Tool(ToolChoice::Forced), DocumentAs::Block)
                .unwrap();
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["max_tokens", "messages", "model", "system", "tool_choice", "tools"]);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true}),
            "one tool is offered, so any tool is that one"
        );
        // Far under any model's minimum cacheable length: no cache markers.
        assert!(body["tools"][0].get("cache_control").is_none());
        assert!(body["tools"][0].get("strict").is_none());
        assert_eq!(body["system"], "Extract.");
        let content = body["messages"][0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 1, "the first attempt's message is the document alone");
        assert_eq!(content[0]["source"]["data"], "Invoice \"7\"\nTotal: 5 €");
        assert!(content[0].get("cache_control").is_none() && content[0].get("title").is_none());
    }

    #[test]
    fn a_prompt_long_enough_to_cache_marks_the_tool_and_the_document() {
        let mut prompt = prompt();
        prompt.document = "Line item 1.00\n".repeat(CACHEABLE_BYTES / 15 + 1).into();
        let marked = body(&prompt, "m", 1, Ask::Tool(ToolChoice::Forced), DocumentAs::Block).unwrap();
        assert_eq!(marked["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(marked["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
        // One byte less than the threshold in all: no marker anywhere.
        let tool = serde_json::to_value(&prompt.tool).unwrap().to_string().len();
        prompt.document = "x".repeat(CACHEABLE_BYTES - 1 - tool - prompt.system.len()).into();
        let unmarked = body(&prompt, "m", 1, Ask::Tool(ToolChoice::Forced), DocumentAs::Block).unwrap();
        assert!(!unmarked.to_string().contains("cache_control"), "{unmarked}");
    }

    #[test]
    fn auto_strict_body_marks_the_tool_and_instructs() {
        let body =
            body(&prompt(), "claude-opus-5-5", 1024, Ask::Tool(ToolChoice::AutoStrict), DocumentAs::Block)
                .unwrap();
        assert_eq!(body["tool_choice"], json!({"type": "auto", "disable_parallel_tool_use": true}));
        assert_eq!(body["tools"][0]["strict"], true);
        let system = body["system"].as_str().unwrap();
        assert!(system.starts_with("Extract.\n\n"), "{system}");
        assert!(system.ends_with(&answer_through_tool("record_note")), "{system}");
    }

    #[test]
    fn auto_strict_does_not_repeat_what_the_built_in_instructions_say() {
        let mut prompt = prompt();
        prompt.system = crate::SYSTEM_INSTRUCTIONS.to_string();
        let body =
            body(&prompt, "claude-opus-5-5", 1024, Ask::Tool(ToolChoice::AutoStrict), DocumentAs::Block)
                .unwrap();
        assert_eq!(body["system"], prompt.system.as_str());
        assert_eq!(body["system"].as_str().unwrap().matches("Answer only through the tool").count(), 1);
    }

    #[test]
    fn empty_system_is_left_out_when_forced() {
        let mut prompt = prompt();
        prompt.system.clear();
        assert!(
            body(&prompt, "m", 1, Ask::Tool(ToolChoice::Forced), DocumentAs::Block)
                .unwrap()
                .get("system")
                .is_none()
        );
        let auto = body(&prompt, "m", 1, Ask::Tool(ToolChoice::AutoStrict), DocumentAs::Block).unwrap();
        assert_eq!(auto["system"], answer_through_tool("record_note"));
    }

    #[test]
    fn a_correction_is_one_text_of_three_labelled_blocks_after_the_document() {
        let mut prompt = prompt();
        prompt.attempt = 2;
        prompt.correction = Some(Correction {
            previous_output: "{\"a\":1}".into(),
            violations: "a: too small".into(),
            instruction: "Fix only a.".into(),
        });
        let body = body(&prompt, "m", 1, Ask::Tool(ToolChoice::Forced), DocumentAs::Block).unwrap();
        let content = body["messages"][0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        assert_eq!(content[0]["type"], "document");
        assert_eq!(
            content[1]["text"],
            "### PREVIOUS OUTPUT\n```\n{\"a\":1}\n```\n\n### VALIDATION ERRORS\n```\na: too small\n```\n\n\
             ### INSTRUCTION\n```\nFix only a.\n```"
        );
        assert!(content[1].get("cache_control").is_none());
    }

    #[test]
    fn bounds_are_keywords_for_claude_and_words_for_any_other_server() {
        let mut prompt = prompt();
        prompt.tool.input_schema = json!({
            "type": "object",
            "properties": {"qty": {"type": "integer", "minimum": 1, "exclusiveMaximum": 100}}
        });
        let forced = Ask::Tool(ToolChoice::Forced);
        let claude = body(&prompt, "m", 1, forced, DocumentAs::Block).unwrap();
        assert_eq!(claude["tools"][0]["input_schema"], prompt.tool.input_schema);
        let other = body(&prompt, "m", 1, forced, DocumentAs::Text).unwrap();
        assert_eq!(
            other["tools"][0]["input_schema"]["properties"]["qty"],
            json!({"type": "integer", "description": "Must be at least 1. Must be less than 100."})
        );
    }
}
