//! The tool definition a model fills in: [`Tool`].

use serde::Serialize;

/// An Anthropic tool object: `{"name", "description", "input_schema"}`, plus
/// `"strict": true` once made strict with [`Tool::strict`].
///
/// ```
/// let tool = extract::Tool {
///     name: "record_note".into(),
///     description: "Record one note.".into(),
///     input_schema: serde_json::json!({"type": "object", "properties": {}}),
///     strict: false,
/// };
/// let json = serde_json::to_value(&tool).unwrap();
/// assert_eq!(json["name"], "record_note");
/// assert!(json.get("strict").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    /// Tool name, matching `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// What the tool records, and the semantic checks its input must pass.
    pub description: String,
    /// The JSON Schema (draft 2020-12) of the input object.
    pub input_schema: serde_json::Value,
    /// Whether this copy is fit for Claude's strict tool use. Serialized only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

/// Why a tool cannot be made strict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` cannot be made strict: {reason}")]
pub struct StrictError {
    /// The tool's name.
    pub tool: String,
    /// What stands in the way, naming the property where there is one.
    pub reason: String,
}

impl Tool {
    /// A copy fit for Claude's strict tool use (see `strict.rs`).
    pub fn strict(&self) -> Result<Tool, StrictError> {
        let mut tool = self.clone();
        tool.strict = true;
        Ok(tool)
    }
}
