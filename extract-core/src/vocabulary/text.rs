//! Text helpers every layer shares: the one way a long value is cut for a
//! message, counted nouns, and the names of JSON types as messages write them.

use std::fmt;

use serde_json::Value;

/// How many characters of a value a message quotes.
const QUOTED_CHARS: usize = 40;

/// `text` cut to at most `max_chars` characters (at a character boundary),
/// and its length in characters when it was cut.
fn head(text: &str, max_chars: usize) -> (&str, Option<usize>) {
    match text.char_indices().nth(max_chars) {
        None => (text, None),
        Some((cut, _)) => (&text[..cut], Some(text.chars().count())),
    }
}

/// Quotes at most a short prefix of a long value, escaped as a Rust string
/// literal, so a message never carries a whole 10 MB string back to the
/// model, nor a line break that would start a line of its own.
///
/// ```
/// assert_eq!(extract::run::quote_prefix("ACME"), "\"ACME\"");
/// assert_eq!(extract::run::quote_prefix(&"x".repeat(100)), format!("\"{}\"… (100 characters)", "x".repeat(40)));
/// ```
pub fn quote_prefix(text: &str) -> String {
    match head(text, QUOTED_CHARS) {
        (all, None) => format!("{all:?}"),
        (cut, Some(total)) => format!("{cut:?}… ({total} characters)"),
    }
}

/// At most `max_chars` characters of `text`, ending in `…` when cut. For text
/// the program wrote (a pattern, a library's message, a response body).
pub fn shorten(text: &str, max_chars: usize) -> String {
    match head(text, max_chars) {
        (all, None) => all.to_string(),
        (cut, Some(_)) => format!("{cut}…"),
    }
}

/// `1 item`, `3 items`.
pub fn count(n: impl fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    if n == "1" { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A JSON type named as a message writes it: `a string`, `an object`, `null`.
/// `None` for a name that is not a JSON type.
pub fn a_json_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "null" => "null",
        "boolean" => "a boolean",
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "array" => "an array",
        "object" => "an object",
        _ => return None,
    })
}

/// The JSON type of `value`, as a message writes it (`a number` for every number).
pub fn kind_of(value: &Value) -> &'static str {
    let name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    a_json_type(name).expect("every JSON value has a JSON type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_character_boundary() {
        assert_eq!(shorten("ééééé", 3), "ééé…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(quote_prefix("a\nb"), "\"a\\nb\"");
    }

    #[test]
    fn nouns_are_counted() {
        assert_eq!(count(1, "item"), "1 item");
        assert_eq!(count(3u64, "field"), "3 fields");
        assert_eq!(count(serde_json::json!(1), "character"), "1 character");
    }
}
