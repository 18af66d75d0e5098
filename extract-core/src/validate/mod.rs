//! The three validation layers and [`validate`], which runs them in order:
//! syntax (the reply is a call of the tool with a JSON object), structure
//! (the object matches the type), semantic (the checks and the quotes hold).
//! Also the trait that ties a type's tool to its validators,
//! [`Extractable`], and the provenance wrapper [`Sourced`].

pub mod check;
mod extractable;
mod sourced;
pub mod structure;
pub mod syntax;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use crate::vocabulary::text::shorten;
use crate::{Code, Document, FieldPath, Layer, Source, Violation, Violations};
use check::Audit;
pub use extractable::{
    Anchored, Extractable, ObjectContent, ObjectRoot, TypeCache, generic_info, require_anchored,
    require_extractable, require_nested, require_object_content,
};
pub use sourced::Sourced;
use structure::serde_violation;

/// Validates one tool input against `T`, stopping at the first layer that
/// fails and reporting every violation of that layer.
///
/// - Syntax: the input must be a JSON object.
/// - Structure: the object must match `T` (fields, types, schema keywords).
///   Deserialization runs first, judging on the way the forms the output
///   takes; the schema validator runs only when it fails, when the output
///   takes a form serde reads and the schema refuses, or when `T`'s schema
///   holds keywords serde does not enforce.
/// - Semantic: the `#[check]` rules of `T` and of every nested value, and the
///   quotes of every `Sourced` value, against `document`.
///
/// A check, or a `Deserialize` impl, that panics is caught and reported as
/// one `validator_panicked` violation (this needs the default `panic =
/// "unwind"`).
///
/// ```
/// use extract::Extractable;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// #[check(amount >= 0)]
/// struct Payment { amount: f64 }
///
/// let ok = extract::validate::<Payment>(&serde_json::json!({"amount": 12.5}), "").unwrap();
/// assert_eq!(ok.amount, 12.5);
///
/// let err = extract::validate::<Payment>(&serde_json::json!({"amount": -1}), "").unwrap_err();
/// assert_eq!(err[0].code, "check_failed");
/// assert_eq!(err[0].path.to_string(), "amount");
/// ```
pub fn validate<T: Extractable>(output: &Value, document: &str) -> Result<T, Violations> {
    validate_text::<T>(output, Some(document)).map(|(value, _)| value)
}

/// What a run's validator gives for an output it accepts: the value, and
/// the provenance of its `Sourced` values (`None` when the validator does
/// not know of any: a caller's own validator, a type without `Sourced`).
pub(crate) type Accepted<T> = (T, Option<Vec<Source>>);

/// [`validate`] against a [`Document`]: quotes are checked against its text
/// (a PDF's text layer), or left unverified for a PDF without one; with the
/// provenance of every `Sourced` value (`None` for a type without any).
pub(crate) fn validate_document<T: Extractable>(
    output: &Value,
    document: &Document,
) -> Result<Accepted<T>, Violations> {
    validate_searchable::<T>(output, document.searchable_text())
}

/// [`validate_document`] against a document's searchable text alone
/// (`None`: a PDF without a text layer, whose quotes are recorded unverified).
pub(crate) fn validate_searchable<T: Extractable>(
    output: &Value,
    text: Option<&str>,
) -> Result<Accepted<T>, Violations> {
    let (value, sources) = validate_text::<T>(output, text)?;
    // A type alias can hide a `Sourced` from the type's description: what the walk met counts too.
    let known = TypeCache::of::<T>().has_sources || !sources.is_empty();
    Ok((value, known.then_some(sources)))
}

fn validate_text<T: Extractable>(output: &Value, text: Option<&str>) -> Result<(T, Vec<Source>), Violations> {
    syntax::require_object(output)?;
    let name = T::__describe().rust_name;
    let value = guarded(Layer::Structure, format_args!("deserializing `{name}`"), || structure::<T>(output))?;
    let sources =
        guarded(Layer::Semantic, format_args!("a validator of `{name}`"), || semantic(&value, text))?;
    Ok((value, sources))
}

/// The structure layer alone: the output deserialized into `T`, or every
/// structural violation.
fn structure<T: Extractable>(output: &Value) -> Result<T, Violations> {
    let cache = TypeCache::of::<T>();
    let info = T::__describe();
    match cache.structure.deserialize::<T>(output) {
        Ok((value, false)) => Ok(value),
        Ok((value, true)) => match Violations::new(cache.structure.violations(output, info)) {
            None => Ok(value),
            Some(violations) => Err(violations),
        },
        Err(_) => {
            let mut violations = cache.structure.violations(output, info);
            // What only serde rejects (300 for a `u8`, an `i64` out of range)
            // joins the schema's findings, so every error comes in one round;
            // and when the schema found nothing, it is the one violation.
            let error = cache
                .structure
                .deserialize_error::<T>(output)
                .expect("deserialization failed a moment ago and is deterministic");
            let from_serde = serde_violation(output, error, info);
            let overlaps = |v: &Violation| {
                let (a, b) = (v.path.segments(), from_serde.path.segments());
                a.starts_with(b) || b.starts_with(a)
            };
            if !violations.iter().any(overlaps) {
                violations.push(from_serde);
            }
            Err(Violations::new(violations).expect("not empty"))
        }
    }
}

/// The semantic layer alone: the checks and quotes of `value` and
/// everything inside it; the provenance of its quotes when they hold.
fn semantic<T: Extractable>(value: &T, text: Option<&str>) -> Result<Vec<Source>, Violations> {
    let mut audit = Audit::new(text);
    check::Audited::audit::<check::Lazy>(value, &mut audit, true);
    let (violations, sources) = audit.into_parts();
    match Violations::new(violations) {
        None => Ok(sources),
        Some(violations) => Err(violations),
    }
}

/// Runs a validator, turning a panic into one `validator_panicked`
/// violation of `layer` that names `who` and the panic's (shortened) message.
/// Not recoverable: no feedback to the model fixes a validator.
pub(crate) fn guarded<R>(
    layer: Layer,
    who: fmt::Arguments<'_>,
    validator: impl FnOnce() -> Result<R, Violations>,
) -> Result<R, Violations> {
    catch_unwind(AssertUnwindSafe(validator)).unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        let message = format!("{who} panicked: {}", shorten(&reason, 200));
        Err(Violations::one(
            Violation::new(layer, Code::VALIDATOR_PANICKED, FieldPath::root(), message).recoverable(false),
        ))
    })
}
