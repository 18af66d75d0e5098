//! The trait `#[derive(Extractable)]` implements: [`Extractable`].

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::structure::StructureValidator;
use crate::{Tool, TypeInfo};

/// A type a model can be asked to fill in, with its tool definition, its
/// structural validator and its semantic checks. Derive it with
/// `#[derive(Extractable)]`; do not implement it by hand.
pub trait Extractable: JsonSchema + DeserializeOwned + Sized {
    /// The tool definition a model fills in: name, description (with the list
    /// of checks) and the input schema.
    fn tool() -> Tool {
        Self::__cache().tool.clone()
    }

    #[doc(hidden)]
    /// The derive's description of the type.
    fn __describe() -> &'static TypeInfo;

    #[doc(hidden)]
    /// Runs the type's checks, then those of every nested value.
    fn __audit(&self, audit: &mut crate::check::Audit<'_>);

    #[doc(hidden)]
    /// Built once per type: the tool and the compiled structural validator.
    fn __cache() -> &'static TypeCache;
}

/// What is computed once per type and kept for the process: the tool and the
/// structural validator compiled from its schema.
#[doc(hidden)]
pub struct TypeCache {
    pub tool: Tool,
    pub structure: StructureValidator,
}

impl TypeCache {
    /// Builds the cache of `T` into `cell` on first use.
    pub fn get_or_build<T: Extractable>(cell: &'static OnceLock<TypeCache>) -> &'static TypeCache {
        cell.get_or_init(|| {
            let info = T::__describe();
            let schema =
                serde_json::to_value(schemars::schema_for!(T)).expect("a schemars schema serializes");
            let structure = StructureValidator::new(&schema);
            let mut description = info.description.trim().to_string();
            let mut checks = Vec::new();
            list_checks(info, "", &mut checks, &mut Vec::new());
            if !checks.is_empty() {
                if !description.is_empty() {
                    description.push_str("\n\n");
                }
                description.push_str("The input must satisfy these checks:");
                for check in checks {
                    description.push_str("\n- ");
                    description.push_str(&check);
                }
            }
            let tool =
                Tool { name: info.tool_name.to_string(), description, input_schema: schema, strict: false };
            TypeCache { tool, structure }
        })
    }
}

/// The checks of `info` and of every type nested in it, each in the JSON
/// names the model sees; a nested type's checks say where they apply.
fn list_checks(info: &'static TypeInfo, location: &str, out: &mut Vec<String>, seen: &mut Vec<&'static str>) {
    if seen.contains(&info.rust_name) {
        return;
    }
    seen.push(info.rust_name);
    for check in info.checks {
        let mut line = match check.with {
            Some(function) => format!("passes `{function}`"),
            None => info.render(check.rule),
        };
        if let Some(tolerance) = check.tolerance {
            line.push_str(&format!(" (tolerance {tolerance})"));
        }
        if !location.is_empty() {
            line = format!("in each `{location}`: {line}");
        }
        out.push(line);
    }
    for field in info.fields {
        if let Some(nested) = (field.nested)() {
            let location = if location.is_empty() {
                field.json_name.to_string()
            } else {
                format!("{location}.{}", field.json_name)
            };
            list_checks(nested, &location, out, seen);
        }
    }
    seen.pop();
}
