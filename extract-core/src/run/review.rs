//! Human review of an escalation: what of the last output can be trusted
//! ([`Partial`]), and a reviewer's fix held to the same checks as a model's
//! answer ([`review`]).

use serde::Serialize;
use serde_json::{Map, Value};

use super::outcome::{Escalation, Validated};
use crate::validate::validate_document;
use crate::{Document, Extractable, Segment, Violation, Violations};

/// What a reviewer can trust of an escalation's last output.
///
/// `held` maps each top-level field (JSON name) of the last output that no
/// violation of the last attempt names to its value. It passed every layer
/// that ran on it: when validation stopped at the structure layer, a held
/// field has the right shape and type, but no semantic check (no
/// `#[check]`, no quote) ran on it. `failed` maps every other field of the
/// type to the messages of the violations that name it: an empty list for a
/// field the output left out with no violation of its own. A violation at
/// the root (text instead of a tool call, a `with` check over the whole
/// value) names every field, so nothing is held.
///
/// Serializes as `{"held": {...}, "failed": {...}}`, fields in the type's order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Partial {
    /// Fields that passed, with their values.
    pub held: Map<String, Value>,
    /// Fields that did not, with the messages of the violations naming them.
    pub failed: Map<String, Value>,
}

impl Partial {
    /// The partial result of `output` judged by `violations`, over the
    /// fields `fields` (JSON names, in the type's order; empty: the output's
    /// own top-level keys).
    pub(crate) fn of(output: Option<&Value>, violations: Option<&Violations>, fields: &[&str]) -> Partial {
        let object = output.and_then(Value::as_object);
        let mut names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        if names.is_empty() {
            names = object.map(|o| o.keys().cloned().collect()).unwrap_or_default();
        }
        let violations: &[Violation] = violations.map(|v| &v[..]).unwrap_or_default();
        let mut partial = Partial::default();
        for name in names {
            let messages: Vec<Value> = violations
                .iter()
                .filter(|v| names_field(v, &name))
                .map(|v| Value::String(v.message.clone()))
                .collect();
            match object.and_then(|o| o.get(&name)) {
                Some(value) if messages.is_empty() => {
                    partial.held.insert(name, value.clone());
                }
                _ => {
                    partial.failed.insert(name, Value::Array(messages));
                }
            }
        }
        partial
    }
}

/// Whether `violation` concerns the top-level field `name`: one of the paths
/// it involves starts there, or it sits at the root.
fn names_field(violation: &Violation, name: &str) -> bool {
    violation.fields.iter().chain(std::iter::once(&violation.path)).any(|path| {
        match path.segments().first() {
            None => true,
            Some(Segment::Key(key)) => key == name,
            Some(Segment::Index(_)) => false,
        }
    })
}

/// Applies a reviewer's `fix` to `escalation`'s last output as a JSON merge
/// patch (RFC 7396: an object's keys replace or, with `null`, remove the
/// output's; anything else replaces the whole value) and validates the
/// result with all three layers against `document`: a human's answer is
/// held to the same checks as a model's. The `Validated` says
/// [`reviewed()`](Validated::reviewed), and its packet `"reviewed": true`.
///
/// ```
/// use extract::{Extractable, Extractor, Outcome, Retries, testing::Scripted};
/// use serde_json::json;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// #[check(net + tax == gross, tolerance = 0.01)]
/// struct Totals { net: f64, tax: f64, gross: f64 }
///
/// let wrong = json!({"net": 100.0, "tax": 20.0, "gross": 110.0});
/// let model = Scripted::new([wrong.clone(), wrong]);
/// let outcome = Extractor::new(model).retries(Retries::new(1)?).extract_blocking::<Totals>("Net 100, VAT 20, gross 120")?;
/// let Outcome::Escalated(escalation) = outcome else { panic!() };
/// assert_eq!(escalation.partial.held.len(), 0, "the check names all three");
///
/// // A reviewer fixes the gross; the fix goes through every layer.
/// let fixed = extract::review::<Totals>(&escalation, "Net 100, VAT 20, gross 120", json!({"gross": 120.0})).unwrap();
/// assert!(fixed.reviewed());
/// assert_eq!(fixed.value().gross, 120.0);
/// // A fix that still fails is refused with its violations.
/// let still = extract::review::<Totals>(&escalation, "", json!({"gross": 121.0})).unwrap_err();
/// assert_eq!(still[0].code, "check_failed");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn review<T: Extractable>(
    escalation: &Escalation,
    document: &str,
    fix: Value,
) -> Result<Validated<T>, Violations> {
    let mut output = match &escalation.last_output {
        // The last output was text (a refusal, unparsable input): the fix starts from nothing.
        Some(value @ Value::Object(_)) => value.clone(),
        _ => Value::Object(Map::new()),
    };
    merge_patch(&mut output, fix);
    let (value, sources) = validate_document::<T>(&output, &Document::text(document))?;
    let attempt_usage = escalation.error_chain.iter().map(|a| a.usage).collect();
    Ok(Validated::new(value, attempt_usage, escalation.error_chain.clone(), sources).reviewed_by_a_human())
}

/// RFC 7396, section 2: `patch` merged into `target`.
fn merge_patch(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let object = target.as_object_mut().expect("made an object above");
    for (key, value) in patch {
        if value.is_null() {
            object.remove(&key);
        } else {
            merge_patch(object.entry(key).or_insert(Value::Null), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The examples of RFC 7396, appendix A.
    #[test]
    fn merge_patch_follows_the_rfc_examples() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "b"}), json!({"b": "c"}), json!({"a": "b", "b": "c"})),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (json!({"a": "b", "b": "c"}), json!({"a": null}), json!({"b": "c"})),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
            (json!({"a": {"b": "c"}}), json!({"a": {"b": "d", "c": null}}), json!({"a": {"b": "d"}})),
            (json!({"a": [{"b": "c"}]}), json!({"a": [1]}), json!({"a": [1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a": "b"}), json!(["c"]), json!(["c"])),
            (json!({"a": "foo"}), json!(null), json!(null)),
            (json!({"a": "foo"}), json!("bar"), json!("bar")),
            (json!({"e": null}), json!({"a": 1}), json!({"e": null, "a": 1})),
            (json!([1, 2]), json!({"a": "b", "c": null}), json!({"a": "b"})),
            (json!({}), json!({"a": {"bb": {"ccc": null}}}), json!({"a": {"bb": {}}})),
        ];
        for (target, patch, expected) in cases {
            let mut merged = target.clone();
            merge_patch(&mut merged, patch.clone());
            assert_eq!(merged, expected, "{target} + {patch}");
        }
    }
}
