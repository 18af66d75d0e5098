//! The syntax layer: is the reply a call of the expected tool whose input is a
//! JSON object? See [`tool_input`].

use std::borrow::Cow;

use serde_json::Value;

use crate::vocabulary::text::kind_of;
use crate::{Code, FieldPath, Layer, Reply, ReplyContent, Truncation, Violation, Violations};

/// The tool input of `reply` if it is a call of `tool_name` with a JSON
/// object, else the syntax violation (at the root path) that says why not.
///
/// | reply | code | recoverable |
/// |---|---|---|
/// | call of another tool | `wrong_tool` | yes |
/// | raw input text that does not parse (serde_json's nesting limit of 128 included) | `invalid_json` | yes |
/// | input that is not a JSON object | `invalid_type` | yes |
/// | text with no tool call | `no_tool_call` | yes |
/// | refusal | `refusal` | no |
/// | cut off by `max_tokens` | `truncated` | no |
/// | document too large for the context window | `context_exceeded` | no |
///
/// ```
/// use extract_core::syntax;
/// use extract::model::Reply;
/// use serde_json::json;
///
/// let reply = Reply::tool_call(json!({"total": 3}));
/// assert_eq!(syntax::tool_input(&reply, "record_total").unwrap()["total"], 3);
///
/// let text = Reply::text("The total is 3.");
/// let violations = syntax::tool_input(&text, "record_total").unwrap_err();
/// assert_eq!(violations[0].code, "no_tool_call");
/// assert!(violations[0].recoverable);
/// ```
pub fn tool_input<'r>(reply: &'r Reply, tool_name: &str) -> Result<Cow<'r, Value>, Violations> {
    let input = match &reply.content {
        ReplyContent::ToolCall { name, input } => {
            check_name(name.as_deref(), tool_name)?;
            Cow::Borrowed(input)
        }
        ReplyContent::ToolCallText { name, json } => {
            check_name(name.as_deref(), tool_name)?;
            match serde_json::from_str::<Value>(json) {
                Ok(value) => Cow::Owned(value),
                Err(error) => {
                    return Err(syntax(
                        Code::INVALID_JSON,
                        format!(
                            "the input of the tool `{tool_name}` is not valid JSON ({error}); \
                             call the tool again with a well-formed JSON object"
                        ),
                        true,
                    ));
                }
            }
        }
        ReplyContent::Text(_) => {
            return Err(syntax(
                Code::NO_TOOL_CALL,
                format!(
                    "the reply is text, not a tool call; answer by calling the tool `{tool_name}` \
                     with the input object, and write nothing else"
                ),
                true,
            ));
        }
        ReplyContent::Refusal { .. } => {
            return Err(syntax(Code::REFUSAL, "the model declined to answer".to_string(), false));
        }
        ReplyContent::Stopped { stopped_by, .. } => {
            return Err(syntax(
                Code::STOPPED,
                format!(
                    "the output was stopped before it ended: {stopped_by}; call the tool `{tool_name}` again with every field"
                ),
                true,
            ));
        }
        ReplyContent::Truncated { limit: Truncation::MaxTokens, .. } => {
            return Err(syntax(
                Code::TRUNCATED,
                "the output was cut off by the max_tokens limit before the tool call was complete"
                    .to_string(),
                false,
            ));
        }
        ReplyContent::Truncated { limit: Truncation::ContextWindow, .. } => {
            return Err(syntax(
                Code::CONTEXT_EXCEEDED,
                "the prompt does not fit the model's context window".to_string(),
                false,
            ));
        }
    };
    require_object(&input)?;
    Ok(input)
}

/// The syntax rule every tool input obeys, also applied by
/// [`validate`](fn@crate::validate) to outputs given to it directly: the input is
/// a JSON object.
pub(crate) fn require_object(input: &Value) -> Result<(), Violations> {
    if input.is_object() {
        Ok(())
    } else {
        Err(syntax(
            Code::INVALID_TYPE,
            format!("the tool input must be a JSON object, not {}", kind_of(input)),
            true,
        ))
    }
}

/// The output of a reply as it is shown back to the model and kept in an
/// escalation: the tool input as JSON when there is one, otherwise the raw
/// text the model sent as a JSON string. `None` when the reply holds nothing.
pub(crate) fn reply_output(reply: &Reply) -> Option<Value> {
    match &reply.content {
        ReplyContent::ToolCall { input, .. } => Some(input.clone()),
        ReplyContent::ToolCallText { json, .. } => {
            Some(serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.clone())))
        }
        ReplyContent::Text(text) => Some(Value::String(text.clone())),
        ReplyContent::Refusal { text, .. } if !text.is_empty() => Some(Value::String(text.clone())),
        ReplyContent::Refusal { .. } => None,
        ReplyContent::Stopped { partial, .. } => Some(Value::String(partial.clone())),
        ReplyContent::Truncated { partial, .. } => partial.clone().map(Value::String),
    }
}

/// The previous output verbatim, as a correction shows it: pretty JSON of the
/// tool input, or the raw text when the model sent text (or unparsable input).
pub(crate) fn output_text(reply: &Reply) -> String {
    match &reply.content {
        ReplyContent::ToolCall { input, .. } => compact(input),
        ReplyContent::ToolCallText { json, .. } => match serde_json::from_str::<Value>(json) {
            Ok(value) => compact(&value),
            Err(_) => json.clone(),
        },
        ReplyContent::Text(text) => text.clone(),
        ReplyContent::Refusal { text, .. } => text.clone(),
        ReplyContent::Stopped { partial, .. } => partial.clone(),
        ReplyContent::Truncated { partial, .. } => partial.clone().unwrap_or_default(),
    }
}

/// `value` as a correction shows it: compact JSON, the output verbatim in
/// the fewest bytes (pretty printing made a large invoice's correction 30%
/// longer, and a patch's pointers address it just as well).
pub(crate) fn compact(value: &Value) -> String {
    value.to_string()
}

fn check_name(name: Option<&str>, tool_name: &str) -> Result<(), Violations> {
    match name {
        Some(name) if name != tool_name => Err(syntax(
            Code::WRONG_TOOL,
            format!(
                "the reply calls the tool {}, not `{tool_name}`; call the tool `{tool_name}`",
                crate::quote_prefix(name)
            ),
            true,
        )),
        _ => Ok(()),
    }
}

fn syntax(code: Code, message: String, recoverable: bool) -> Violations {
    Violations::one(Violation::new(Layer::Syntax, code, FieldPath::root(), message).recoverable(recoverable))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(reply: &Reply) -> (String, bool) {
        let v = tool_input(reply, "record").unwrap_err();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].layer, Layer::Syntax);
        assert!(v[0].path.is_root());
        (v[0].code.to_string(), v[0].recoverable)
    }

    #[test]
    fn tool_call_of_the_right_tool_passes() {
        let reply = Reply::named_tool_call("record", json!({"a": 1}));
        assert!(matches!(tool_input(&reply, "record").unwrap(), Cow::Borrowed(_)));
        let reply = Reply::tool_call_text(r#"{"a": [1, 2]}"#);
        assert_eq!(tool_input(&reply, "record").unwrap().into_owned(), json!({"a": [1, 2]}));
    }

    #[test]
    fn every_reply_kind_maps_to_its_code() {
        assert_eq!(code(&Reply::named_tool_call("other", json!({}))), ("wrong_tool".into(), true));
        assert_eq!(code(&Reply::tool_call(json!([1]))), ("invalid_type".into(), true));
        assert_eq!(code(&Reply::tool_call_text("[1]")), ("invalid_type".into(), true));
        assert_eq!(code(&Reply::tool_call_text("{\"a\": ")), ("invalid_json".into(), true));
        assert_eq!(code(&Reply::text("hello")), ("no_tool_call".into(), true));
        assert_eq!(code(&Reply::refusal("no")), ("refusal".into(), false));
        assert_eq!(code(&Reply::truncated()), ("truncated".into(), false));
        assert_eq!(code(&Reply::context_exceeded()), ("context_exceeded".into(), false));
    }

    #[test]
    fn invalid_json_names_the_position_not_the_text() {
        let secret = "{\"name\": \"SECRET-VALUE\" oops}";
        let v = tool_input(&Reply::tool_call_text(secret), "record").unwrap_err();
        assert!(v[0].message.contains("line 1 column"), "{}", v[0].message);
        assert!(!v[0].message.contains("SECRET-VALUE"));
    }

    #[test]
    fn nesting_beyond_serde_json_limit_is_invalid_json() {
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let v = tool_input(&Reply::tool_call_text(deep), "record").unwrap_err();
        assert_eq!(v[0].code, "invalid_json");
        assert!(v[0].message.contains("recursion limit"), "{}", v[0].message);
    }

    #[test]
    fn no_tool_call_names_the_tool() {
        let v = tool_input(&Reply::text("hi"), "record_invoice").unwrap_err();
        assert!(v[0].message.contains("calling the tool `record_invoice`"));
    }

    #[test]
    fn outputs_are_kept_verbatim() {
        assert_eq!(output_text(&Reply::text("plain words")), "plain words");
        assert_eq!(output_text(&Reply::tool_call_text("{bad")), "{bad");
        assert_eq!(output_text(&Reply::tool_call(json!({"a": 1}))), "{\"a\":1}");
        assert_eq!(reply_output(&Reply::text("t")), Some(json!("t")));
        assert_eq!(reply_output(&Reply::tool_call_text("{\"a\":1}")), Some(json!({"a": 1})));
        assert_eq!(reply_output(&Reply::truncated()), None);
    }
}
