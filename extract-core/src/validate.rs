//! [`validate`]: the three validation layers over one output.

use serde_json::Value;

use crate::{Extractable, Violations};

/// Validates one tool input against `T`: syntax, structure, then semantics.
pub fn validate<T: Extractable>(output: &Value, _document: &str) -> Result<T, Violations> {
    let _ = T::__cache();
    match T::deserialize(output) {
        Ok(v) => Ok(v),
        Err(_) => todo!(),
    }
}
