//! The violation for what only serde rejects: a number out of range for its
//! Rust type, say, where the schema states no bound.

use serde_json::Value;

use super::convert::{MAX_LISTED, got, join_list, missing_message, short_text, show};
use crate::schema::TypeInfo;
use crate::vocabulary::text::shorten;
use crate::{Code, FieldPath, Layer, Segment, Violation, quote_prefix};

/// The fallback violation when serde rejects an output the schema pass
/// accepted (a `u8` given 300 where the schema states no bound, an `i64` out
/// of range: schemars sets no upper bound for `i64`/`u64`). Never panics.
///
/// The path comes from `serde_path_to_error`, in the JSON names serde read;
/// the message is written here from the value found at that path, never
/// copied from serde (whose text embeds whole values).
///
/// ```
/// # use serde::Deserialize;
/// use extract_core::structure::serde_violation;
///
/// #[derive(Deserialize, Debug)]
/// struct Row { count: u8 }
/// static INFO: extract_core::__private_v2::TypeInfo = extract_core::__private_v2::TypeInfo::new("Row", "row", "", &[]);
/// let value = serde_json::json!({"count": 300});
/// let error = serde_path_to_error::deserialize::<_, Row>(&value).unwrap_err();
/// let violation = serde_violation(&value, error, &INFO);
/// assert_eq!(violation.path, "count");
/// assert_eq!(violation.code, "invalid_type");
/// assert_eq!(violation.message, "expected an integer from 0 to 255, got 300");
/// ```
pub fn serde_violation(
    value: &Value,
    error: serde_path_to_error::Error<serde_json::Error>,
    info: &'static TypeInfo,
) -> Violation {
    let mut path = FieldPath::root();
    for segment in error.path().iter() {
        path = match segment {
            serde_path_to_error::Segment::Seq { index } => path.index(*index),
            serde_path_to_error::Segment::Map { key } => path.key(key.clone()),
            serde_path_to_error::Segment::Enum { variant } => path.key(variant.clone()),
            serde_path_to_error::Segment::Unknown => path,
        };
    }
    let text = error.inner().to_string();
    let found = value_at(value, &path);
    let structure =
        |code: Code, path: FieldPath, message: String| Violation::new(Layer::Structure, code, path, message);

    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default().to_string();
        let path = if matches!(path.segments().last(), Some(Segment::Key(k)) if *k == name) {
            path
        } else {
            path.key(name)
        };
        let recoverable = info.recoverable_at(&path, value);
        return structure(Code::MISSING_FIELD, path, missing_message(false, recoverable).into())
            .recoverable(recoverable);
    }
    if let Some(rest) = text.strip_prefix("unknown field `") {
        let (name, allowed) = split_backticked(rest);
        let path = if matches!(path.segments().last(), Some(Segment::Key(k)) if *k == name) {
            path
        } else {
            path.key(name.clone())
        };
        let allowed =
            if allowed.is_empty() { String::new() } else { format!(" (allowed: {})", allowed.join(", ")) };
        return structure(
            Code::UNKNOWN_FIELD,
            path,
            format!("field {} is not allowed here{allowed}", quote_prefix(&name)),
        );
    }
    if let Some(rest) = text.strip_prefix("unknown variant `") {
        let (_, allowed) = split_backticked(rest);
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let shown = found.map_or_else(|| "the value".to_string(), show);
        let message = if quoted.is_empty() {
            format!("{shown} is not an allowed value")
        } else {
            format!("{shown} is not one of {}", join_list(&quoted))
        };
        return structure(Code::INVALID_VALUE, path, message);
    }
    let expected = text.rsplit_once(", expected ").map(|(_, e)| rust_expected(e));
    if text.starts_with("invalid type: ") || text.starts_with("invalid value: ") {
        if found.is_some_and(Value::is_null) && matches!(path.segments().last(), Some(Segment::Key(_))) {
            let recoverable = info.recoverable_at(&path, value);
            return structure(Code::MISSING_FIELD, path, missing_message(true, recoverable).into())
                .recoverable(recoverable);
        }
        let expected = expected.unwrap_or_else(|| "a value of the field's type".into());
        let got = found.map_or_else(|| "a value of another type".into(), got);
        return structure(Code::INVALID_TYPE, path, format!("expected {expected}, got {got}"));
    }
    if let Some(rest) = text.strip_prefix("invalid length ") {
        let len = rest.split(',').next().unwrap_or_default();
        let expected = expected.unwrap_or_else(|| "another length".into());
        return structure(
            Code::INVALID_VALUE,
            path,
            format!("wrong number of items: expected {expected}, got {}", short_text(len)),
        );
    }
    if let Some(rest) = text.strip_prefix("duplicate field `") {
        let name = rest.split('`').next().unwrap_or_default();
        return structure(
            Code::INVALID_VALUE,
            path,
            format!("field {} appears twice; give it once", quote_prefix(name)),
        );
    }
    // A custom message from a type's own Deserialize (a date that does not parse, say).
    let got = found.map_or_else(String::new, |v| format!(", got {}", got(v)));
    structure(Code::INVALID_VALUE, path, format!("{}{got}", short_text(&text)))
}

/// `a`, `b` from "x`, expected one of `a`, `b`": the first name and the listed ones.
fn split_backticked(rest: &str) -> (String, Vec<String>) {
    let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
    let listed = tail.split('`').skip(1).step_by(2).take(MAX_LISTED).map(|s| shorten(s, 60)).collect();
    (name.to_string(), listed)
}

/// Serde's "expected" text in the words the model sees (`u8` -> a range).
pub(super) fn rust_expected(expected: &str) -> String {
    fn range<T: std::fmt::Display>(min: T, max: T) -> String {
        format!("an integer from {min} to {max}")
    }
    match expected {
        "u8" => range(u8::MIN, u8::MAX),
        "u16" => range(u16::MIN, u16::MAX),
        "u32" => range(u32::MIN, u32::MAX),
        "u64" => range(u64::MIN, u64::MAX),
        "u128" => range(u128::MIN, u128::MAX),
        "usize" => range(usize::MIN, usize::MAX),
        "i8" => range(i8::MIN, i8::MAX),
        "i16" => range(i16::MIN, i16::MAX),
        "i32" => range(i32::MIN, i32::MAX),
        "i64" => range(i64::MIN, i64::MAX),
        "i128" => range(i128::MIN, i128::MAX),
        "isize" => range(isize::MIN, isize::MAX),
        "f32" | "f64" => "a number".into(),
        "a string" | "a borrowed string" | "a character" => expected.to_string(),
        other => shorten(other, 100),
    }
}

/// The value at `path` inside `value`.
fn value_at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().iter().try_fold(value, |node, segment| match segment {
        Segment::Key(key) => node.get(key.as_ref()),
        Segment::Index(i) => node.get(*i),
    })
}
