//! The body of `POST {base}/chat/completions`, mapped from a [`Prompt`]: its
//! blocks become messages and text parts, never one flattened string.
//!
//! - `messages`: the system block as a `system` message (with a note added
//!   when the tool is not forced, or in the response-format mode), then one
//!   `user` message whose text parts are the document (labelled and fenced,
//!   byte for byte), then either the task (first attempt) or the labelled,
//!   fenced correction blocks.
//! - [`Mode::Tool`]: `tools` holds the one function tool and `tool_choice`
//!   forces it, or asks for `"required"` or `"auto"` where forcing is refused.
//! - [`Mode::JsonSchema`]: `response_format` holds the schema; no tools.
//! - Without strict mode, the tool's numeric bounds are restated in words
//!   ([`bounds_in_words`]): a server behind this API may decode under the
//!   schema's grammar (llama.cpp, vLLM), which would force a value a check
//!   exists to catch. Strict mode's copy says them in words already.
//! - `strict` and the strict schema only when strict is on (see
//!   [`ClientBuilder::strict`](super::ClientBuilder::strict)), and never for
//!   a patch correction (`patch_output`, whose untyped `value` strict mode
//!   cannot express).
//! - `max_completion_tokens` (OpenAI's own API) or `max_tokens` (any other
//!   server), only when set.

use std::borrow::Cow;
use std::convert::Infallible;

use serde_json::{Map, Value, json};
use tracing::warn;

use super::builder::Mode;
#[cfg(test)]
use crate::run::answer_through_tool;
use crate::run::{PATCH_TOOL, answer_as_json, system_answering_through_tool};
use crate::schema::{bounds_in_words, keywords};
use crate::vocabulary::text::shorten;
use crate::{Block, BlockKind, Document, Error, Prompt, Tool};

/// How a request in [`Mode::Tool`] asks for the tool, from the strongest ask
/// to the weakest. A client starts at [`ToolChoice::Forced`] and steps down
/// once for each 400 that refuses the current choice, never back up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolChoice {
    /// `{"type": "function", "function": {"name": ...}}`: this tool, now.
    Forced,
    /// `"required"`: some tool (there is only one).
    Required,
    /// `"auto"`, with a system instruction to answer only through the tool.
    Auto,
}

impl ToolChoice {
    pub(super) fn from_u8(value: u8) -> ToolChoice {
        match value {
            0 => ToolChoice::Forced,
            1 => ToolChoice::Required,
            _ => ToolChoice::Auto,
        }
    }

    /// The next weaker choice, if any.
    pub(super) fn weaker(self) -> Option<ToolChoice> {
        match self {
            ToolChoice::Forced => Some(ToolChoice::Required),
            ToolChoice::Required => Some(ToolChoice::Auto),
            ToolChoice::Auto => None,
        }
    }
}

/// What a request is made of, besides the prompt.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub max_tokens: Option<u32>,
    /// Whether the base URL is OpenAI's own API (which names the token cap
    /// `max_completion_tokens`).
    pub openai_api: bool,
    pub strict: bool,
    pub mode: Mode,
    pub choice: ToolChoice,
}

/// The request body for `prompt`; `Err` (configuration) for a PDF without
/// a text layer, which this API has no way to carry.
pub(crate) fn body(prompt: &Prompt, request: &Request<'_>) -> Result<Value, Error> {
    let tool = &prompt.tool;
    let mut system = prompt.system.clone();
    let mut body = Map::new();
    body.insert("model".into(), request.model.into());

    match request.mode {
        Mode::Tool => {
            let tools: Vec<Value> = prompt
                .offered_tools()
                .iter()
                .map(|offered| {
                    let (schema, strict) = schema_of(offered, request.strict);
                    let mut function = json!({
                        "name": offered.name,
                        "description": offered.description,
                        "parameters": schema,
                    });
                    if strict {
                        function["strict"] = Value::Bool(true);
                    }
                    json!({ "type": "function", "function": function })
                })
                .collect();
            // A request that offers several tools (a windowed extraction's)
            // asks for any of them, the same on every call, so the cached
            // prefix holds: its task names the one to call.
            let several = tools.len() > 1;
            body.insert("tools".into(), Value::Array(tools));
            let choice = match request.choice {
                ToolChoice::Forced if !several => {
                    json!({ "type": "function", "function": { "name": tool.name } })
                }
                ToolChoice::Forced | ToolChoice::Required => json!("required"),
                ToolChoice::Auto => {
                    system = system_answering_through_tool(&system, &tool.name);
                    json!("auto")
                }
            };
            body.insert("tool_choice".into(), choice);
        }
        Mode::JsonSchema => {
            let (schema, strict) = schema_of(tool, request.strict);
            let mut format = json!({
                "name": tool.name,
                "description": tool.description,
                "schema": schema,
            });
            if strict {
                format["strict"] = Value::Bool(true);
            }
            body.insert("response_format".into(), json!({ "type": "json_schema", "json_schema": format }));
            add_note(&mut system, &answer_as_json(&tool.name));
        }
    }

    let mut messages = Vec::new();
    if !system.is_empty() {
        messages.push(json!({ "role": "system", "content": system }));
    }
    messages.push(json!({ "role": "user", "content": parts(prompt, request.mode)? }));
    body.insert("messages".into(), Value::Array(messages));

    if let Some(max_tokens) = request.max_tokens {
        let field = if request.openai_api { "max_completion_tokens" } else { "max_tokens" };
        body.insert(field.into(), max_tokens.into());
    }
    Ok(Value::Object(body))
}

/// Makes `body` a streamed request (`"stream": true`), whose last event
/// before `[DONE]` states the usage (`stream_options.include_usage`):
/// without it a stream states none.
pub(crate) fn streamed(body: &mut Value) {
    if let Some(body) = body.as_object_mut() {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
}

/// `tool`'s schema as sent, and whether it is strict: strict where
/// `strict` asks and the schema allows; else with its numeric bounds in
/// words. The patch tool's `value` is untyped, which strict mode cannot
/// express: it is sent non-strict.
fn schema_of(tool: &Tool, strict: bool) -> (Value, bool) {
    let strict = strict && tool.name != PATCH_TOOL;
    match strict.then(|| strict_schema(tool)).flatten() {
        Some(schema) => (schema, true),
        None => {
            let mut schema = tool.input_schema.clone();
            bounds_in_words(&mut schema);
            (schema, false)
        }
    }
}

fn add_note(system: &mut String, note: &str) {
    if !system.trim().is_empty() {
        system.push_str("\n\n");
    }
    system.push_str(note);
}

/// The text parts of the one user message: the document, then the blocks
/// after it as one text ([`Prompt::text_after_document`]: a correction's, a
/// windowed call's task), or on a first attempt without one the task; the
/// system and the tool go in fields of their own.
fn parts(prompt: &Prompt, mode: Mode) -> Result<Vec<Value>, Error> {
    let mut parts = vec![text(document(&prompt.document)?)];
    if let Some(after) = prompt.text_after_document() {
        parts.push(text(after));
    }
    if !prompt.is_correction() && prompt.windowed.is_none() {
        let name = &prompt.tool.name;
        parts.push(text(match mode {
            Mode::Tool => format!("Record the data of the source document above by calling the tool `{name}`."),
            Mode::JsonSchema => format!(
                "Record the data of the source document above: answer with the input object of `{name}` as JSON."
            ),
        }));
    }
    Ok(parts)
}

/// The document's part: its text (a PDF's text layer) under its heading and
/// the document's own title, fenced so that it cannot close its own block.
fn document(document: &Document) -> Result<String, Error> {
    let Some(text) = document.searchable_text() else {
        return Err(Error::config(format!(
            "document {} is a PDF without a text layer, and the OpenAI-compatible client (Chat Completions \
             API) sends documents as text; give it a text layer with Document::with_text_layer",
            document.id()
        )));
    };
    let mut heading = BlockKind::Document.label().to_string();
    if let Some(title) = document.title() {
        heading = format!("{heading}: {title}");
    }
    Ok(Block { kind: BlockKind::Document, text: Cow::Borrowed(text) }.fenced(&heading))
}

fn text(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// The schema strict mode is sent: [`Tool::strict`], then OpenAI's own rules
/// ([`require_every_property`]) and no `$schema`. `None` (with a warning)
/// when the tool cannot be made strict: it is then sent as it is, not strict.
pub(crate) fn strict_schema(tool: &Tool) -> Option<Value> {
    match tool.strict() {
        Ok(strict) => {
            let mut schema = strict.input_schema;
            if let Some(root) = schema.as_object_mut() {
                root.remove("$schema");
            }
            require_every_property(&mut schema);
            Some(schema)
        }
        Err(error) => {
            warn!(tool = %tool.name, %error, "sending the tool without strict mode");
            None
        }
    }
}

/// OpenAI's strict mode on top of [`Tool::strict`]: every object lists all
/// its properties in `required` (an optional property keeps admitting `null`
/// where it did, which is how it says "absent"), and no schema holds
/// `default`, which strict mode rejects: it is restated in the description
/// ("Give [] when the document does not state it."), so a property that was
/// optional only through its default is still answered with that default.
fn require_every_property(schema: &mut Value) {
    if let Some(node) = schema.as_object_mut() {
        if let Some(names) = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().map(Value::String).collect::<Vec<_>>())
        {
            node.insert("required".into(), Value::Array(names));
        }
        if let Some(default) = node.remove("default") {
            let note =
                format!("Give {} when the document does not state it.", shorten(&default.to_string(), 120));
            let description = match node.get("description").and_then(Value::as_str).map(str::trim_end) {
                Some(own) if !own.is_empty() => format!("{own} {note}"),
                _ => note,
            };
            node.insert("description".into(), Value::String(description));
        }
    }
    let _ = keywords::for_each_subschema_mut(schema, |_, _, sub| {
        require_every_property(sub);
        Ok::<(), Infallible>(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Correction;

    fn tool() -> Tool {
        Tool {
            name: "record_note".into(),
            description: "Record one note.".into(),
            input_schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                    "author": {"type": ["string", "null"]},
                    "pages": {"type": "array", "items": {"$ref": "#/$defs/Page"}}
                },
                "required": ["title", "pages"],
                "$defs": {
                    "Page": {
                        "type": "object",
                        "properties": {"number": {"type": "integer", "minimum": 1}, "note": {"type": ["string", "null"]}},
                        "required": ["number"]
                    }
                }
            }),
            strict: false,
        }
    }

    fn prompt() -> Prompt {
        let mut prompt = Prompt::new(tool(), "Note \"7\"\nTotal: 5 €");
        prompt.system = "Extract.".into();
        prompt
    }

    #[test]
    fn tool_choices_step_down_and_stop() {
        assert_eq!(ToolChoice::Forced.weaker(), Some(ToolChoice::Required));
        assert_eq!(ToolChoice::Required.weaker(), Some(ToolChoice::Auto));
        assert_eq!(ToolChoice::Auto.weaker(), None);
        for choice in [ToolChoice::Forced, ToolChoice::Required, ToolChoice::Auto] {
            assert_eq!(ToolChoice::from_u8(choice as u8), choice);
        }
    }

    fn request(mode: Mode, choice: ToolChoice, strict: bool) -> Request<'static> {
        Request { model: "m", max_tokens: None, openai_api: false, strict, mode, choice }
    }

    #[test]
    fn forced_body_has_exactly_the_documented_fields() {
        let body = body(&prompt(), &request(Mode::Tool, ToolChoice::Forced, false)).unwrap();
        let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["messages", "model", "tool_choice", "tools"]);
        assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "record_note"}}));
        // The tool's schema as it is, but for its bounds, which go in words.
        let mut parameters = tool().input_schema;
        parameters["$defs"]["Page"]["properties"]["number"] =
            json!({"type": "integer", "description": "Must be at least 1."});
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {
                "name": "record_note", "description": "Record one note.", "parameters": parameters
            }}])
        );
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "Extract."}));
        let parts = body["messages"][1]["content"].as_array().unwrap();
        assert_eq!(body["messages"][1]["role"], "user");
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0]["text"], "### DOCUMENT\n```\nNote \"7\"\nTotal: 5 €\n```");
    }

    #[test]
    fn a_streamed_body_asks_for_the_usage_too() {
        let mut streamed_body =
            body(&prompt(), &request(Mode::JsonSchema, ToolChoice::Forced, false)).unwrap();
        let whole = streamed_body.clone();
        streamed(&mut streamed_body);
        assert_eq!(streamed_body["stream"], true);
        assert_eq!(streamed_body["stream_options"], json!({"include_usage": true}));
        let object = streamed_body.as_object_mut().unwrap();
        object.remove("stream");
        object.remove("stream_options");
        assert_eq!(streamed_body, whole, "nothing else changes");
    }

    #[test]
    fn weaker_choices_and_the_auto_note() {
        let required = body(&prompt(), &request(Mode::Tool, ToolChoice::Required, false)).unwrap();
        assert_eq!(required["tool_choice"], "required");
        assert_eq!(required["messages"][0]["content"], "Extract.");
        let auto = body(&prompt(), &request(Mode::Tool, ToolChoice::Auto, false)).unwrap();
        assert_eq!(auto["tool_choice"], "auto");
        assert_eq!(
            auto["messages"][0]["content"],
            format!("Extract.\n\n{}", answer_through_tool("record_note"))
        );
    }

    #[test]
    fn max_tokens_is_named_for_the_server_and_sent_only_when_set() {
        let mut req = request(Mode::Tool, ToolChoice::Forced, false);
        req.max_tokens = Some(512);
        assert_eq!(body(&prompt(), &req).unwrap()["max_tokens"], 512);
        req.openai_api = true;
        let openai = body(&prompt(), &req).unwrap();
        assert_eq!(openai["max_completion_tokens"], 512);
        assert!(openai.get("max_tokens").is_none());
    }

    #[test]
    fn the_strict_schema_requires_every_property_and_restates_defaults() {
        let schema = strict_schema(&tool()).unwrap();
        assert!(schema.get("$schema").is_none());
        assert_eq!(schema["required"], json!(["title", "tags", "author", "pages"]));
        assert_eq!(schema["additionalProperties"], false);
        let tags = &schema["properties"]["tags"];
        assert!(tags.get("default").is_none(), "{tags}");
        assert_eq!(tags["description"], "Give [] when the document does not state it.");
        assert_eq!(tags["type"], "array", "a defaulted field is not made nullable");
        assert_eq!(schema["properties"]["author"]["type"], json!(["string", "null"]));
        let page = &schema["$defs"]["Page"];
        assert_eq!(page["required"], json!(["number", "note"]));
        assert_eq!(page["additionalProperties"], false);
        assert_eq!(page["properties"]["number"]["description"], "Must be at least 1.");

        let body = body(&prompt(), &request(Mode::Tool, ToolChoice::Forced, true)).unwrap();
        assert_eq!(body["tools"][0]["function"]["strict"], true);
        assert_eq!(body["tools"][0]["function"]["parameters"], schema);
    }

    #[test]
    fn a_tool_that_cannot_be_strict_goes_as_it_is() {
        let mut recursive = prompt();
        recursive.tool.input_schema = json!({
            "type": "object",
            "properties": {"child": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}
        });
        let body = body(&recursive, &request(Mode::Tool, ToolChoice::Forced, true)).unwrap();
        assert!(body["tools"][0]["function"].get("strict").is_none());
        assert_eq!(body["tools"][0]["function"]["parameters"], recursive.tool.input_schema);
    }

    #[test]
    fn json_schema_mode_sends_a_response_format_and_no_tool() {
        let body = body(&prompt(), &request(Mode::JsonSchema, ToolChoice::Forced, true)).unwrap();
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert_eq!(body["response_format"]["type"], "json_schema");
        let format = &body["response_format"]["json_schema"];
        assert_eq!(format["name"], "record_note");
        assert_eq!(format["description"], "Record one note.");
        assert_eq!(format["strict"], true);
        assert_eq!(format["schema"], strict_schema(&tool()).unwrap());
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("Extract.\n\n") && system.ends_with(&answer_as_json("record_note")));
    }

    #[test]
    fn a_correction_is_one_part_of_three_fenced_blocks_after_the_document() {
        let mut prompt = prompt();
        prompt.attempt = 2;
        prompt.correction = Some(Correction {
            previous_output: "{\"a\":1}".into(),
            violations: "a: too small".into(),
            instruction: "Fix only a.".into(),
        });
        let body = body(&prompt, &request(Mode::Tool, ToolChoice::Forced, false)).unwrap();
        let parts = body["messages"][1]["content"].as_array().unwrap();
        assert_eq!(parts.len(), 2);
        assert!(parts[0]["text"].as_str().unwrap().starts_with("### DOCUMENT\n"));
        assert_eq!(
            parts[1]["text"],
            "### PREVIOUS OUTPUT\n```\n{\"a\":1}\n```\n\n### VALIDATION ERRORS\n```\na: too small\n```\n\n\
             ### INSTRUCTION\n```\nFix only a.\n```"
        );
    }

    #[test]
    fn without_strict_mode_bounds_go_in_words() {
        let mut prompt = prompt();
        prompt.tool.input_schema["properties"]["rating"] = json!({"type": "number", "maximum": 5});
        for mode in [Mode::Tool, Mode::JsonSchema] {
            let body = body(&prompt, &request(mode, ToolChoice::Forced, false)).unwrap();
            let schema = match mode {
                Mode::Tool => &body["tools"][0]["function"]["parameters"],
                Mode::JsonSchema => &body["response_format"]["json_schema"]["schema"],
            };
            assert_eq!(
                schema["properties"]["rating"],
                json!({"type": "number", "description": "Must be at most 5."})
            );
        }
    }
}
