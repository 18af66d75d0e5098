//! The structure layer: does the output match the type?

use serde_json::Value;

use crate::{TypeInfo, Violation};

/// The compiled schema validator of one type.
pub struct StructureValidator {
    _schema: Value,
}

impl StructureValidator {
    /// Compiles the validator of `schema`.
    pub fn new(schema: &Value) -> StructureValidator {
        StructureValidator { _schema: schema.clone() }
    }

    /// Whether the schema holds keywords serde does not enforce.
    pub fn needs_schema_pass(&self) -> bool {
        false
    }

    /// Every structural violation of `value`.
    pub fn violations(&self, _value: &Value, _info: &'static TypeInfo) -> Vec<Violation> {
        Vec::new()
    }
}

/// A violation for an output serde rejected.
pub fn serde_violation(
    _value: &Value,
    error: serde_path_to_error::Error<serde_json::Error>,
    _info: &'static TypeInfo,
) -> Violation {
    Violation::new(
        crate::Layer::Structure,
        crate::Code::INVALID_TYPE,
        crate::FieldPath::root(),
        error.to_string(),
    )
}
