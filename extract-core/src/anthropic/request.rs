//! The body of `POST /v1/messages`, mapped from a [`Prompt`]: its blocks
//! become content blocks, never one flattened string.
//!
//! - `tools`: the prompt's tool, with `cache_control: {"type": "ephemeral"}`
//!   (tools render first, so the cache prefix starts with them).
//! - `tool_choice`: forced (`{"type": "tool", "name", "disable_parallel_tool_use": true}`)
//!   or, where forcing is refused, `{"type": "auto", "disable_parallel_tool_use": true}`
//!   with the strict copy of the tool and a system instruction to answer only
//!   through it (unless the system already says so, as the built-in one does).
//! - one user message: the document as a `document` block with a plain-text
//!   source (byte for byte, `cache_control` ephemeral, so a correction attempt
//!   reads tools, system and document from the cache), then either the task
//!   (first attempt) or the labelled correction blocks.
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
use crate::run::{answer_as_json, system_answering_through_tool};
use crate::{BlockKind, Content, Document, Error, Prompt, Tool};

/// How the request asks for the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolChoice {
    /// `{"type": "tool", "name": ..., "disable_parallel_tool_use": true}`.
    Forced,
    /// `{"type": "auto", "disable_parallel_tool_use": true}` with the strict
    /// tool and an instruction to answer only through it.
    AutoStrict,
}

fn ephemeral() -> Value {
    json!({ "type": "ephemeral" })
}

/// How the request carries the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocumentAs {
    /// A `document` block: a text source byte for byte, or a base64 PDF.
    Block,
    /// A labelled, fenced text block (a PDF's text layer), for servers that
    /// speak the Messages API but drop `document` blocks.
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
    let system = match ask {
        Ask::Tool(choice) => {
            let (tool, tool_choice, system) = match choice {
                ToolChoice::Forced => (
                    prompt.tool.clone(),
                    json!({ "type": "tool", "name": tool_name, "disable_parallel_tool_use": true }),
                    prompt.system.clone(),
                ),
                ToolChoice::AutoStrict => {
                    let system = system_answering_through_tool(&prompt.system, tool_name);
                    // A patch's untyped `value` is not for strict tools: sent as it is.
                    let tool = if prompt.asks_for_patch() {
                        prompt.tool.clone()
                    } else {
                        strict_or_plain(&prompt.tool)
                    };
                    (tool, json!({ "type": "auto", "disable_parallel_tool_use": true }), system)
                }
            };
            let mut tool = serde_json::to_value(&tool).unwrap_or_else(|_| json!({}));
            if let Some(object) = tool.as_object_mut() {
                object.insert("cache_control".into(), ephemeral());
            }
            body["tools"] = json!([tool]);
            body["tool_choice"] = tool_choice;
            system
        }
        Ask::Json => {
            body["output_config"] =
                json!({ "format": { "type": "json_schema", "schema": json_schema(prompt)? } });
            let mut system = prompt.system.clone();
            if !system.trim().is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&answer_as_json(tool_name));
            system
        }
    };
    body["messages"] = json!([{ "role": "user", "content": content(prompt, ask, document_as)? }]);
    if !system.is_empty() {
        body["system"] = Value::String(system);
    }
    Ok(body)
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

/// The content blocks of the one user message: the prompt's blocks in order,
/// less the system and the tool, which the request carries in fields of their own.
fn content(prompt: &Prompt, ask: Ask, document_as: DocumentAs) -> Result<Vec<Value>, Error> {
    let mut blocks = Vec::new();
    for block in prompt.blocks() {
        match block.kind {
            BlockKind::System | BlockKind::Tool => {}
            BlockKind::Document => blocks.push(document(&prompt.document, document_as)?),
            // Fenced and labelled as the flattened text shows them, so the
            // previous output (the model's own words) cannot close its block.
            kind => blocks.push(text(block.fenced(&kind.heading()))),
        }
    }
    if !prompt.is_correction() {
        let name = &prompt.tool.name;
        blocks.push(text(match ask {
            Ask::Tool(_) => format!("Call the tool `{name}` with the data of the document above."),
            Ask::Json => format!("Answer with the input object of `{name}` for the document above, as JSON."),
        }));
    }
    Ok(blocks)
}

/// The document's block, with `cache_control`, so a correction reads it
/// from the prompt cache. Its title is the label the instructions refer
/// to, then the document's own title.
fn document(document: &Document, document_as: DocumentAs) -> Result<Value, Error> {
    let mut title = BlockKind::Document.heading();
    if let Some(own) = document.title() {
        title = format!("{title}: {own}");
    }
    let block = match (document_as, document.content()) {
        (DocumentAs::Block, Content::Text(text)) => json!({
            "type": "document",
            "source": { "type": "text", "media_type": "text/plain", "data": text },
            "title": title,
            "cache_control": ephemeral(),
        }),
        (DocumentAs::Block, Content::Pdf { bytes, .. }) => json!({
            "type": "document",
            "source": { "type": "base64", "media_type": "application/pdf", "data": BASE64.encode(bytes) },
            "title": title,
            "cache_control": ephemeral(),
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
            json!({ "type": "text", "text": block.fenced(&title), "cache_control": ephemeral() })
        }
    };
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
        Prompt {
            attempt: 1,
            system: "Extract.".into(),
            document: "Invoice \"7\"\nTotal: 5 €".into(),
            tool: Tool {
                name: "record_note".into(),
                description: "Record one note.".into(),
                input_schema: json!({"type": "object", "properties": {}}),
                strict: false,
            },
            correction: None,
        }
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
            json!({"type": "tool", "name": "record_note", "disable_parallel_tool_use": true})
        );
        assert_eq!(body["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert!(body["tools"][0].get("strict").is_none());
        assert_eq!(body["system"], "Extract.");
        let content = body["messages"][0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        assert_eq!(content[0]["source"]["data"], "Invoice \"7\"\nTotal: 5 €");
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
        prompt.system = crate::system_instructions("record_note");
        let body =
            body(&prompt, "claude-opus-5-5", 1024, Ask::Tool(ToolChoice::AutoStrict), DocumentAs::Block)
                .unwrap();
        assert_eq!(body["system"], prompt.system.as_str());
        assert_eq!(body["system"].as_str().unwrap().matches("Answer only by calling").count(), 1);
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
    fn correction_becomes_three_labelled_blocks_after_the_document() {
        let mut prompt = prompt();
        prompt.attempt = 2;
        prompt.correction = Some(Correction {
            previous_output: "{\"a\":1}".into(),
            violations: "a: too small".into(),
            instruction: "Fix only a.".into(),
        });
        let body = body(&prompt, "m", 1, Ask::Tool(ToolChoice::Forced), DocumentAs::Block).unwrap();
        let content = body["messages"][0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 4);
        assert_eq!(content[0]["type"], "document");
        assert_eq!(
            content[1]["text"],
            "### PREVIOUS OUTPUT (your previous answer: the input you gave the tool, verbatim)\n```\n{\"a\":1}\n```"
        );
        assert_eq!(
            content[2]["text"],
            "### VALIDATION ERRORS (what was wrong with that answer)\n```\na: too small\n```"
        );
        assert_eq!(content[3]["text"], "### INSTRUCTION (what to do now)\n```\nFix only a.\n```");
        assert!(content[1..].iter().all(|b| b.get("cache_control").is_none()));
    }
}
