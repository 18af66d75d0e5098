//! Human review of an escalation: a reviewer's fix held to the same checks
//! as a model's answer ([`review`]). What of the last output can be trusted
//! is the escalation's own [`Partial`](crate::Partial).

use serde_json::{Map, Value};

use super::outcome::{Escalation, Validated};
use crate::validate::validate_searchable;
use crate::{Document, Extractable, Violations};

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
    review_document(escalation, &Document::text(document), fix)
}

/// [`review`] against a whole [`Document`]: a PDF's quotes are checked
/// against its text layer, and without one are recorded unverified, as in
/// the run (never all failing against an empty text). The desk and the
/// journal's reviews use it.
pub fn review_document<T: Extractable>(
    escalation: &Escalation,
    document: &Document,
    fix: Value,
) -> Result<Validated<T>, Violations> {
    review_searchable(escalation, document.searchable_text(), fix)
}

/// [`review_document`] against a document's searchable text alone (`None`:
/// no text, the quotes unverified): for drivers that keep only the text.
pub fn review_searchable<T: Extractable>(
    escalation: &Escalation,
    text: Option<&str>,
    fix: Value,
) -> Result<Validated<T>, Violations> {
    let output = patched(escalation, fix);
    let (value, sources) = validate_searchable::<T>(&output, text)?;
    let attempt_usage = escalation.error_chain.iter().map(|a| a.usage).collect();
    let validated = Validated::new(value, attempt_usage, escalation.error_chain.clone(), sources);
    Ok(validated
        .with_cost(escalation.cost)
        .answered_by(escalation.model.clone(), escalation.rung)
        .reviewed_by_a_human())
}

/// `escalation`'s last output with `fix` merged into it: what a review validates.
pub fn patched(escalation: &Escalation, fix: Value) -> Value {
    let mut output = match &escalation.last_output {
        // The last output was text (a refusal, unparsable input): the fix starts from nothing.
        Some(value @ Value::Object(_)) => value.clone(),
        _ => Value::Object(Map::new()),
    };
    merge_patch(&mut output, fix);
    output
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
