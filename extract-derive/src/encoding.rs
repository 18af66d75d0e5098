//! The description of a type the derive hands the runtime, in the
//! contract's encoding (`extract_contract`, which holds the grammar and the
//! one encoder and decoder): the fields' names and tags, and the checks.

use crate::container::Field;

/// A check's description, owned while the derive builds it; encoded by
/// [`checks`] as `extract_contract::Check`.
pub struct CheckText {
    pub rule: String,
    pub atoms: Vec<String>,
    pub fields: Vec<String>,
    pub tolerance: Option<String>,
    pub message: Option<String>,
    pub placeholders: Vec<String>,
    pub code: Option<String>,
    pub recoverable: bool,
    pub with: Option<String>,
}

/// Whether the field's shape must come from its type: any but a field the
/// derive reads as plain data (a primitive, `String`, containers of those),
/// for which no shape is looked up.
pub fn is_typed(field: &Field) -> bool {
    !crate::emit::shape_of(field).is_leaf()
}

/// The fields the model sees, encoded (one string literal).
pub fn fields<'a>(fields: impl Iterator<Item = &'a Field>) -> String {
    let described: Vec<extract_contract::Field<'_>> = fields
        .map(|f| extract_contract::Field {
            rust_name: &f.rust_name,
            json_name: &f.json_name,
            required: f.required,
            recoverable: f.recoverable,
            typed: is_typed(f),
            per_window: f.per_window.is_some(),
        })
        .collect();
    extract_contract::encode_fields(&described)
}

fn rule(text: &str) -> extract_contract::Rule<'_> {
    extract_contract::Rule::parse(text).unwrap_or_else(|_| unreachable!("the derive encodes rules"))
}

/// The checks, encoded (one string literal).
pub fn checks(checks: &[&CheckText]) -> String {
    let described: Vec<extract_contract::Check<'_>> = checks
        .iter()
        .map(|c| extract_contract::Check {
            rule: rule(&c.rule),
            atoms: c.atoms.iter().map(|a| rule(a)).collect(),
            fields: c.fields.iter().map(String::as_str).collect(),
            tolerance: c.tolerance.as_deref(),
            message: c.message.as_deref(),
            placeholders: c.placeholders.iter().map(String::as_str).collect(),
            code: c.code.as_deref(),
            recoverable: c.recoverable,
            with: c.with.as_deref(),
        })
        .collect();
    extract_contract::encode_checks(&described)
}
