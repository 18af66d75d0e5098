//! Corrections as patches: [`Corrections`], the tool `patch_output` a patch
//! correction offers, and the application of its RFC 6902 operations to the
//! previous output, without I/O.
//!
//! Only `add`, `remove` and `replace` are accepted (the three a fix needs;
//! `move`, `copy` and `test` are refused). The operations apply in order to a
//! copy of the previous output, all or nothing: a patch that does not apply
//! changes nothing and is one `invalid_patch` violation naming the operation
//! and its pointer. Written here rather than taken from the `json-patch`
//! crate: three operations are a few dozen lines, and the messages must say,
//! in the model's terms, which pointer failed and why ("`/line_items` has 100
//! items, so index 101 is past the end"), which a generic error does not.

use serde_json::{Value, json};

use crate::{Code, FieldPath, Layer, Tool, Violation, Violations};

/// The name of the tool a patch correction offers.
pub const PATCH_TOOL: &str = "patch_output";

/// How a correction attempt asks the model for the fix.
///
/// ```
/// use extract::{Corrections, Extractor};
/// use extract::testing::Scripted;
///
/// let extractor = Extractor::new(Scripted::new(Vec::<serde_json::Value>::new()))
///     .corrections(Corrections::Patch);
/// # let _ = extractor;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Corrections {
    /// The model sends the complete object again (the default).
    #[default]
    Full,
    /// The model sends only the operations that fix the previous output,
    /// through the tool `patch_output` (input `{"patch": [...]}`, RFC 6902
    /// `add`, `remove` and `replace`). The runtime applies them and
    /// validates the whole result with all three layers; that result is the
    /// attempt's output everywhere (the next correction, `last_output`,
    /// `partial`). A model that answers with the full object instead is
    /// judged as usual. The first attempt, and a correction of an attempt
    /// that gave no JSON object to patch, ask for the full object.
    Patch,
}

/// The tool of a patch correction: `patch_output`, whose input is
/// `{"patch": [{"op", "path", "value"}...]}`. Never strict: a strict schema
/// cannot hold the untyped `value` (backends send it without `strict`).
pub fn patch_tool() -> Tool {
    Tool {
        name: PATCH_TOOL.into(),
        description: "Fix PREVIOUS OUTPUT with JSON Patch (RFC 6902) operations: add, remove or replace. \
                      Paths are JSON Pointers into PREVIOUS OUTPUT (/line_items/3/amount); `-` appends \
                      to an array. Send only the operations the errors need."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "patch": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "op": {"enum": ["add", "remove", "replace"]},
                            "path": {"type": "string"},
                            "value": {}
                        },
                        "required": ["op", "path"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["patch"],
            "additionalProperties": false
        }),
        strict: false,
    }
}

/// Whether a tool input is a patch: an object whose only member is `patch`.
pub(crate) fn is_patch_input(input: &Value) -> bool {
    input.as_object().is_some_and(|o| o.len() == 1 && o.contains_key("patch"))
}

/// `base` with the operations of `input` (`{"patch": [...]}`) applied, or
/// one `invalid_patch` violation (recoverable, at the root) naming the
/// operation and its pointer. Nothing is applied unless everything applies.
pub fn apply_patch(base: &Value, input: &Value) -> Result<Value, Violations> {
    let Some(operations) = input.get("patch").and_then(Value::as_array) else {
        return Err(invalid(format!(
            "the input of the tool `{PATCH_TOOL}` must be {{\"patch\": [...]}}, a list of operations"
        )));
    };
    let mut result = base.clone();
    for (i, operation) in operations.iter().enumerate() {
        let op = Operation::read(i, operation)?;
        op.apply(&mut result).map_err(|why| invalid(format!("{}: {why}", op.named())))?;
    }
    Ok(result)
}

fn invalid(message: String) -> Violations {
    let message = format!("{message}; nothing of the patch was applied");
    Violations::one(Violation::new(Layer::Syntax, Code::INVALID_PATCH, FieldPath::root(), message))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Remove,
    Replace,
}

struct Operation<'a> {
    index: usize,
    op: Op,
    op_name: &'a str,
    path: &'a str,
    value: Option<&'a Value>,
}

impl<'a> Operation<'a> {
    fn read(index: usize, operation: &'a Value) -> Result<Operation<'a>, Violations> {
        let n = index + 1;
        let Some(object) = operation.as_object() else {
            return Err(invalid(format!("operation {n} is not an object with `op` and `path`")));
        };
        let op_name = object.get("op").and_then(Value::as_str).unwrap_or("");
        let path = object.get("path").and_then(Value::as_str);
        let Some(path) = path else {
            return Err(invalid(format!(
                "operation {n} (`{}`) has no string `path`",
                crate::quote_prefix(op_name)
            )));
        };
        let op = match op_name {
            "add" => Op::Add,
            "remove" => Op::Remove,
            "replace" => Op::Replace,
            other => {
                return Err(invalid(format!(
                    "operation {n} ({} at {}) is not allowed: use only add, remove and replace",
                    crate::quote_prefix(other),
                    crate::quote_prefix(path)
                )));
            }
        };
        let value = object.get("value");
        if op != Op::Remove && value.is_none() {
            return Err(invalid(format!(
                "operation {n} (`{op_name}` at {}) has no `value`",
                crate::quote_prefix(path)
            )));
        }
        Ok(Operation { index, op, op_name, path, value })
    }

    fn named(&self) -> String {
        format!("operation {} (`{}` at {})", self.index + 1, self.op_name, crate::quote_prefix(self.path))
    }

    fn apply(&self, document: &mut Value) -> Result<(), String> {
        let tokens = tokens(self.path)?;
        let Some((last, parents)) = tokens.split_last() else {
            // The root: only a whole new object replaces it.
            return match self.op {
                Op::Remove => Err("the root cannot be removed".into()),
                Op::Add | Op::Replace => {
                    *document = self.value.cloned().unwrap_or(Value::Null);
                    Ok(())
                }
            };
        };
        let mut at = document;
        let mut walked = String::new();
        for token in parents {
            at = step(at, token, &walked)?;
            walked.push('/');
            walked.push_str(&escape(token));
        }
        let value = || self.value.cloned().unwrap_or(Value::Null);
        match at {
            Value::Object(members) => match self.op {
                Op::Add => {
                    members.insert(last.clone(), value());
                    Ok(())
                }
                Op::Remove | Op::Replace if !members.contains_key(last.as_str()) => {
                    Err(no_member(last, &walked))
                }
                Op::Remove => {
                    members.remove(last.as_str());
                    Ok(())
                }
                Op::Replace => {
                    members.insert(last.clone(), value());
                    Ok(())
                }
            },
            Value::Array(items) => {
                let len = items.len();
                if self.op == Op::Add && last == "-" {
                    items.push(value());
                    return Ok(());
                }
                let index = index(last, &walked)?;
                let limit = if self.op == Op::Add { len } else { len.saturating_sub(1) };
                if index > limit || (self.op != Op::Add && len == 0) {
                    return Err(past_the_end(&walked, len, index));
                }
                match self.op {
                    Op::Add => items.insert(index, value()),
                    Op::Remove => {
                        items.remove(index);
                    }
                    Op::Replace => items[index] = value(),
                }
                Ok(())
            }
            scalar => Err(into_scalar(scalar, &walked)),
        }
    }
}

/// The reference tokens of a JSON Pointer, unescaped as RFC 6901 says: `~1`
/// is `/`, `~0` is `~`, each unescaped once (`~01` is `~1`), and a `~`
/// followed by anything else, or by nothing, makes the pointer invalid.
fn tokens(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err("a JSON Pointer starts with `/` (or is empty, for the whole output)".into());
    };
    rest.split('/').map(unescape).collect()
}

/// One reference token unescaped, or why it is not one.
fn unescape(token: &str) -> Result<String, String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            after => {
                let after = match after {
                    Some(c) => format!("`{}`", c.escape_debug()),
                    None => "the end of the token".into(),
                };
                return Err(format!(
                    "the JSON Pointer has a `~` followed by {after}: `~` must be followed by `0` or `1` \
                     (`~0` is `~`, `~1` is `/`; RFC 6901)"
                ));
            }
        }
    }
    Ok(out)
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The member or item `token` of `at`, which `walked` addresses.
fn step<'v>(at: &'v mut Value, token: &str, walked: &str) -> Result<&'v mut Value, String> {
    match at {
        Value::Object(members) => {
            if !members.contains_key(token) {
                return Err(no_member(token, walked));
            }
            Ok(members.get_mut(token).expect("the member was just found"))
        }
        Value::Array(items) => {
            let len = items.len();
            let i = index(token, walked)?;
            items.get_mut(i).ok_or_else(|| past_the_end(walked, len, i))
        }
        scalar => Err(into_scalar(scalar, walked)),
    }
}

fn index(token: &str, walked: &str) -> Result<usize, String> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = token.len() > 1 && token.starts_with('0');
    match token.parse::<usize>() {
        Ok(i) if digits && !leading_zero => Ok(i),
        _ => Err(format!(
            "{} is an array, indexed by a number (or `-` to append), not {}",
            shown(walked),
            crate::quote_prefix(token)
        )),
    }
}

fn shown(pointer: &str) -> String {
    if pointer.is_empty() { "the output".into() } else { format!("`{pointer}`") }
}

fn no_member(token: &str, walked: &str) -> String {
    format!("{} has no member {}", shown(walked), crate::quote_prefix(token))
}

fn past_the_end(walked: &str, len: usize, index: usize) -> String {
    format!(
        "{} has {}, so index {index} is past the end",
        shown(walked),
        crate::vocabulary::text::count(len, "item")
    )
}

fn into_scalar(scalar: &Value, walked: &str) -> String {
    format!(
        "{} is {}, which has nothing inside it to address",
        shown(walked),
        crate::vocabulary::text::kind_of(scalar)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Value {
        json!({"total": 5.0, "items": [{"amount": 1}, {"amount": 2}], "a/b": {"~x": 1}})
    }

    fn patched(ops: Value) -> Result<Value, String> {
        apply_patch(&base(), &json!({ "patch": ops })).map_err(|v| v[0].message.clone())
    }

    #[test]
    fn add_remove_and_replace_apply_in_order() {
        let out = patched(json!([
            {"op": "replace", "path": "/items/1/amount", "value": 3},
            {"op": "add", "path": "/items/-", "value": {"amount": 4}},
            {"op": "add", "path": "/items/0", "value": {"amount": 0}},
            {"op": "remove", "path": "/a~1b/~0x"},
            {"op": "add", "path": "/total", "value": 10.0},
        ]))
        .unwrap();
        assert_eq!(
            out,
            json!({"total": 10.0, "items": [{"amount": 0}, {"amount": 1}, {"amount": 3}, {"amount": 4}], "a/b": {}})
        );
    }

    #[test]
    fn an_empty_patch_changes_nothing() {
        assert_eq!(patched(json!([])).unwrap(), base());
    }

    #[test]
    fn failures_name_the_operation_and_the_pointer() {
        let e = patched(json!([{"op": "replace", "path": "/items/2/amount", "value": 1}])).unwrap_err();
        assert!(e.contains("operation 1 (`replace` at \"/items/2/amount\")"), "{e}");
        assert!(e.contains("`/items` has 2 items, so index 2 is past the end"), "{e}");
        let e = patched(json!([{"op": "add", "path": "/items/3", "value": 1}])).unwrap_err();
        assert!(e.contains("index 3 is past the end"), "{e}");
        let e = patched(json!([{"op": "add", "path": "/total/x", "value": 1}])).unwrap_err();
        assert!(e.contains("`/total` is a number"), "{e}");
        let e = patched(json!([{"op": "remove", "path": "/nothing"}])).unwrap_err();
        assert!(e.contains("the output has no member \"nothing\""), "{e}");
        let e = patched(json!([{"op": "replace", "path": "/items/x", "value": 1}])).unwrap_err();
        assert!(e.contains("indexed by a number"), "{e}");
        let e = patched(json!([{"op": "replace", "path": "/items/01", "value": 1}])).unwrap_err();
        assert!(e.contains("indexed by a number"), "{e}");
        let e = patched(json!([{"op": "replace", "path": "total", "value": 1}])).unwrap_err();
        assert!(e.contains("starts with `/`"), "{e}");
        assert!(e.ends_with("nothing of the patch was applied"), "{e}");
    }

    #[test]
    fn move_copy_and_test_are_refused() {
        for op in ["move", "copy", "test"] {
            let e = patched(json!([{"op": op, "path": "/total", "from": "/items", "value": 1}])).unwrap_err();
            assert!(e.contains("use only add, remove and replace"), "{e}");
        }
    }

    #[test]
    fn a_failing_operation_undoes_the_earlier_ones() {
        let v = apply_patch(
            &base(),
            &json!({"patch": [{"op": "replace", "path": "/total", "value": 1}, {"op": "remove", "path": "/x"}]}),
        )
        .unwrap_err();
        assert_eq!(v[0].code, "invalid_patch");
        assert!(v[0].recoverable);
        assert!(v[0].path.is_root());
    }

    #[test]
    fn only_a_lone_patch_member_is_a_patch() {
        assert!(is_patch_input(&json!({"patch": []})));
        assert!(!is_patch_input(&json!({"patch": [], "total": 1})));
        assert!(!is_patch_input(&json!({"total": 1})));
    }

    #[test]
    fn the_patch_tool_is_an_object_schema_with_three_operations() {
        let tool = patch_tool();
        assert_eq!(tool.name, PATCH_TOOL);
        assert_eq!(
            tool.input_schema["properties"]["patch"]["items"]["properties"]["op"]["enum"],
            json!(["add", "remove", "replace"])
        );
        assert!(!tool.strict);
    }
}
