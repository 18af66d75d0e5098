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
    /// A copy fit for Claude's strict tool use (`"strict": true`), whose
    /// sampling is constrained to the schema.
    ///
    /// Every object gets `additionalProperties: false`; optional fields stay
    /// optional and nullable. Keywords strict mode rejects (`minimum`,
    /// `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
    /// `minLength`, `maxLength`, `minItems` other than 0 or 1, `maxItems`,
    /// `uniqueItems`, formats outside date-time, time, date, duration, email,
    /// hostname, uri, ipv4, ipv6 and uuid, and patterns with backreferences,
    /// lookaround or word boundaries) are removed and restated in the
    /// description of the schema that held them ("Must be at least 0."). The
    /// structure validator is compiled from the original schema, so they are
    /// still enforced. `oneOf` becomes `anyOf`.
    ///
    /// # Errors
    ///
    /// A [`StrictError`] naming the reason and the property when the schema
    /// cannot be made strict: a recursive type (a `$ref` cycle), a map with
    /// free-form keys, an `enum` of objects or arrays, more than 24 optional
    /// properties or more than 16 union-typed properties (`Option` fields,
    /// type arrays, `anyOf`) in the whole tool.
    ///
    /// ```
    /// let tool = extract_core::Tool {
    ///     name: "record_reading".into(),
    ///     description: "Record one reading.".into(),
    ///     input_schema: serde_json::json!({
    ///         "type": "object",
    ///         "properties": {"celsius": {"type": "number", "minimum": -273.15}},
    ///         "required": ["celsius"],
    ///     }),
    ///     strict: false,
    /// };
    /// let strict = tool.strict().unwrap();
    /// assert!(strict.strict);
    /// let schema = &strict.input_schema;
    /// assert_eq!(schema["additionalProperties"], false);
    /// assert!(schema["properties"]["celsius"].get("minimum").is_none());
    /// assert_eq!(schema["properties"]["celsius"]["description"], "Must be at least -273.15.");
    /// ```
    pub fn strict(&self) -> Result<Tool, StrictError> {
        let input_schema = super::strict::strict_schema(&self.input_schema, &self.name)
            .map_err(|reason| StrictError { tool: self.name.clone(), reason })?;
        Ok(Tool { input_schema, strict: true, ..self.clone() })
    }
}
