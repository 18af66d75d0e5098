//! An incremental reader of a model's JSON: fed the output chunk by chunk
//! as it streams, it knows at every point the value so far and which paths
//! are *finished*, closed by the output itself so nothing later can change
//! them:
//!
//! - a string when its closing quote arrives (until then it is shown as it
//!   grows, decoded: an escape or a character split across chunks waits for
//!   its last byte);
//! - a number, `true`, `false` or `null` when the byte after it arrives (a
//!   delimiter or whitespace) or the output ends. A number is never shown
//!   before it is finished: `1` must not be shown on its way to `1000000`;
//! - an object or an array when it closes (its members finish one by one
//!   before it; it is shown from its opening bracket on, growing).
//!
//! A member whose key has arrived but whose value has not started is not
//! shown. Each byte is read once: the reader keeps the open containers on a
//! stack and builds the value to show only when asked. The final value is
//! `serde_json`'s for the same text (numbers are parsed by `serde_json`,
//! duplicate keys keep the last value), and malformed JSON is an error that
//! says at which byte and what was expected.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use crate::{FieldPath, Segment};

/// JSON that cannot be read: at which byte of the output, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The byte offset in the whole output.
    pub offset: usize,
    /// What the reader expected, or what was wrong.
    pub expected: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the output is not JSON at byte {}: expected {}", self.offset, self.expected)
    }
}

impl std::error::Error for ReadError {}

/// A container being read, with where it sits in its parent.
#[derive(Debug)]
enum Open {
    Object { members: Map<String, Value>, key: Option<String>, expect: InObject },
    Array { items: Vec<Value>, expect: InArray },
}

/// What an object expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InObject {
    /// A key or `}` (just opened).
    FirstKey,
    /// A key (after a comma).
    Key,
    /// `:` after the key.
    Colon,
    /// The member's value.
    Value,
    /// `,` or `}` after a value.
    CommaOrEnd,
}

/// What an array expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InArray {
    /// A value or `]` (just opened).
    FirstValue,
    /// A value (after a comma).
    Value,
    /// `,` or `]` after a value.
    CommaOrEnd,
}

/// A scalar being read.
#[derive(Debug)]
enum Token {
    /// A string (or an object's key): its decoded bytes so far, and the
    /// escape in progress.
    Text { bytes: Vec<u8>, escape: Escape, key: bool },
    /// A number's characters so far.
    Number(String),
    /// `true`, `false` or `null`, as far as it has arrived.
    Literal(String),
}

/// An escape inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and `digits` hex digits of `value`; `high` is the first
    /// half of a surrogate pair waiting for its second.
    Unicode {
        digits: u8,
        value: u32,
        high: Option<u32>,
    },
    /// A high surrogate has been read: `\` and `u` of the low one must follow.
    AfterHigh {
        high: u32,
        seen: u8,
    },
}

/// The incremental reader (see the module's documentation).
#[derive(Debug, Default)]
pub struct PartialJson {
    /// The open containers, outermost first.
    stack: Vec<Open>,
    /// The scalar being read, if any.
    token: Option<Token>,
    /// The whole value, once the top-level value is finished.
    done: Option<Value>,
    /// Bytes read so far.
    offset: usize,
    /// Every finished path, in the order it finished (each once: a value
    /// finishes once, and a duplicate key's later value is another value).
    finished: Vec<FieldPath>,
    /// The first error, kept: the output cannot recover from it.
    error: Option<ReadError>,
}

impl PartialJson {
    /// A reader that has read nothing.
    pub fn new() -> PartialJson {
        PartialJson::default()
    }

    /// Reads `chunk`; the paths it finished, in order.
    pub fn push(&mut self, chunk: &str) -> Result<&[FieldPath], ReadError> {
        self.push_bytes(chunk.as_bytes())
    }

    /// Reads `bytes` (a multi-byte character may be split between calls);
    /// the paths they finished, in order.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> Result<&[FieldPath], ReadError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let before = self.finished.len();
        for &byte in bytes {
            if let Err(expected) = self.byte(byte) {
                let error = ReadError { offset: self.offset, expected };
                self.error = Some(error.clone());
                return Err(error);
            }
            self.offset += 1;
        }
        Ok(&self.finished[before..])
    }

    /// Whether the value at `path` is finished: it is whole, or inside a
    /// container the reader has closed or a member or item it has placed.
    /// Only the containers open along the path being read are not finished,
    /// and that path itself.
    pub fn is_finished(&self, path: &FieldPath) -> bool {
        if let Some(done) = &self.done {
            return value_at(done, path.segments()).is_some();
        }
        let segments = path.segments();
        for (depth, open) in self.stack.iter().enumerate() {
            let Some(segment) = segments.get(depth) else { return false };
            let placed = match (open, segment) {
                // The member or item being read: look deeper.
                (Open::Object { key: Some(reading), .. }, Segment::Key(name)) if reading == name.as_ref() => {
                    continue;
                }
                (Open::Array { items, .. }, Segment::Index(index)) if *index == items.len() => continue,
                (Open::Object { members, .. }, Segment::Key(name)) => members.get(name.as_ref()),
                (Open::Array { items, .. }, Segment::Index(index)) => items.get(*index),
                _ => None,
            };
            return placed.is_some_and(|value| value_at(value, &segments[depth + 1..]).is_some());
        }
        false
    }

    /// Every finished path, in the order it finished.
    pub fn finished(&self) -> &[FieldPath] {
        &self.finished
    }

    /// The value so far (`null` before anything is shown): finished values,
    /// the open containers, and a string as far as it has arrived.
    pub fn value(&self) -> Value {
        if let Some(done) = &self.done {
            return done.clone();
        }
        // The scalar in progress, as far as it may be shown.
        let mut inner: Option<Value> = match &self.token {
            Some(Token::Text { bytes, key: false, .. }) => {
                Some(Value::String(valid_prefix(bytes).to_string()))
            }
            _ => None,
        };
        for open in self.stack.iter().rev() {
            inner = Some(match open {
                Open::Object { members, key, .. } => {
                    let mut members = members.clone();
                    if let (Some(key), Some(value)) = (key, inner) {
                        members.insert(key.clone(), value);
                    }
                    Value::Object(members)
                }
                Open::Array { items, .. } => {
                    let mut items = items.clone();
                    items.extend(inner);
                    Value::Array(items)
                }
            });
        }
        inner.unwrap_or(Value::Null)
    }

    /// Ends the output: the whole value, equal to `serde_json`'s for the
    /// same text; an error when the text is not one whole JSON value.
    pub fn finish(mut self) -> Result<Value, ReadError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if matches!(self.token, Some(Token::Number(_) | Token::Literal(_))) {
            // The end of the output delimits a top-level number.
            self.end_scalar().map_err(|expected| ReadError { offset: self.offset, expected })?;
        }
        self.done.ok_or_else(|| ReadError {
            offset: self.offset,
            expected: if self.stack.is_empty() && self.token.is_none() {
                "a value".to_string()
            } else {
                "the rest of the value: the output ends inside it".to_string()
            },
        })
    }

    /// The path of the value being read now.
    fn path(&self) -> FieldPath {
        let segments = self
            .stack
            .iter()
            .map(|open| match open {
                Open::Object { key, .. } => Segment::Key(Cow::Owned(key.clone().unwrap_or_default())),
                Open::Array { items, .. } => Segment::Index(items.len()),
            })
            .collect();
        FieldPath::from_segments(segments)
    }

    /// Reads one byte.
    fn byte(&mut self, byte: u8) -> Result<(), String> {
        match &mut self.token {
            Some(Token::Text { bytes, escape, .. }) => {
                return text_byte(bytes, escape, byte).map(|closed| {
                    if closed {
                        self.end_text();
                    }
                });
            }
            Some(Token::Number(text)) => {
                if matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    text.push(char::from(byte));
                    return Ok(());
                }
                self.end_scalar()?;
            }
            Some(Token::Literal(text)) => {
                if byte.is_ascii_alphabetic() {
                    text.push(char::from(byte));
                    if text.len() > 5 {
                        return Err("`true`, `false` or `null`".into());
                    }
                    return Ok(());
                }
                self.end_scalar()?;
            }
            None => {}
        }
        if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            return Ok(());
        }
        if self.done.is_some() {
            return Err("the end of the output: one value is whole".into());
        }
        match self.stack.last_mut() {
            None => self.start_value(byte),
            Some(Open::Object { expect, .. }) => match (*expect, byte) {
                (InObject::FirstKey | InObject::Key, b'"') => {
                    self.token = Some(Token::Text { bytes: Vec::new(), escape: Escape::None, key: true });
                    Ok(())
                }
                (InObject::FirstKey, b'}') | (InObject::CommaOrEnd, b'}') => self.close(),
                (InObject::Colon, b':') => {
                    *expect = InObject::Value;
                    Ok(())
                }
                (InObject::Value, _) => self.start_value(byte),
                (InObject::CommaOrEnd, b',') => {
                    *expect = InObject::Key;
                    Ok(())
                }
                (InObject::FirstKey, _) => Err("a key (a string) or `}`".into()),
                (InObject::Key, _) => Err("a key (a string)".into()),
                (InObject::Colon, _) => Err("`:` after the key".into()),
                (InObject::CommaOrEnd, _) => Err("`,` or `}` after the member".into()),
            },
            Some(Open::Array { expect, .. }) => match (*expect, byte) {
                (InArray::FirstValue, b']') | (InArray::CommaOrEnd, b']') => self.close(),
                (InArray::FirstValue | InArray::Value, _) => self.start_value(byte),
                (InArray::CommaOrEnd, b',') => {
                    *expect = InArray::Value;
                    Ok(())
                }
                (InArray::CommaOrEnd, _) => Err("`,` or `]` after the item".into()),
            },
        }
    }

    /// A value starts with `byte`.
    fn start_value(&mut self, byte: u8) -> Result<(), String> {
        match byte {
            b'{' => {
                self.stack.push(Open::Object { members: Map::new(), key: None, expect: InObject::FirstKey });
            }
            b'[' => self.stack.push(Open::Array { items: Vec::new(), expect: InArray::FirstValue }),
            b'"' => self.token = Some(Token::Text { bytes: Vec::new(), escape: Escape::None, key: false }),
            b'-' | b'0'..=b'9' => self.token = Some(Token::Number(char::from(byte).to_string())),
            b't' | b'f' | b'n' => self.token = Some(Token::Literal(char::from(byte).to_string())),
            _ => return Err("a value".into()),
        }
        Ok(())
    }

    /// A string's closing quote: a key waits for its value, a value is placed.
    fn end_text(&mut self) {
        let Some(Token::Text { bytes, key, .. }) = self.token.take() else { return };
        // The bytes were checked as UTF-8 when the string closed.
        let text = String::from_utf8(bytes).unwrap_or_default();
        if key {
            if let Some(Open::Object { key, expect, .. }) = self.stack.last_mut() {
                *key = Some(text);
                *expect = InObject::Colon;
            }
            return;
        }
        self.place(Value::String(text));
    }

    /// A number or literal ends (at a delimiter or the end of the output).
    fn end_scalar(&mut self) -> Result<(), String> {
        let value = match self.token.take() {
            Some(Token::Number(text)) => number(&text).ok_or_else(|| format!("a number, not `{text}`"))?,
            Some(Token::Literal(text)) => match text.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => return Err(format!("`true`, `false` or `null`, not `{text}`")),
            },
            other => {
                self.token = other;
                return Ok(());
            }
        };
        self.place(value);
        Ok(())
    }

    /// A finished value goes where the reader is: finished at its path.
    fn place(&mut self, value: Value) {
        let path = self.path();
        self.finished.push(path);
        match self.stack.last_mut() {
            None => self.done = Some(value),
            Some(Open::Object { members, key, expect }) => {
                if let Some(key) = key.take() {
                    members.insert(key, value);
                }
                *expect = InObject::CommaOrEnd;
            }
            Some(Open::Array { items, expect }) => {
                items.push(value);
                *expect = InArray::CommaOrEnd;
            }
        }
    }

    /// The innermost container closes: finished, and placed in its parent.
    fn close(&mut self) -> Result<(), String> {
        let value = match self.stack.pop() {
            Some(Open::Object { members, .. }) => Value::Object(members),
            Some(Open::Array { items, .. }) => Value::Array(items),
            None => return Err("a value".into()),
        };
        self.place(value);
        Ok(())
    }
}

/// One byte of a string's content; `Ok(true)` when it is the closing quote.
fn text_byte(bytes: &mut Vec<u8>, escape: &mut Escape, byte: u8) -> Result<bool, String> {
    match *escape {
        Escape::None => match byte {
            b'"' => {
                std::str::from_utf8(bytes).map_err(|_| "text in UTF-8".to_string())?;
                return Ok(true);
            }
            b'\\' => *escape = Escape::Backslash,
            0x00..=0x1f => return Err("a control character escaped (`\\n`, `\\u0001`)".into()),
            _ => bytes.push(byte),
        },
        Escape::Backslash => {
            let plain = match byte {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    *escape = Escape::Unicode { digits: 0, value: 0, high: None };
                    return Ok(false);
                }
                _ => return Err("an escape: one of `\"\\/bfnrtu` after `\\`".into()),
            };
            bytes.push(plain);
            *escape = Escape::None;
        }
        Escape::Unicode { digits, value, high } => {
            let digit = char::from(byte).to_digit(16).ok_or("four hex digits after `\\u`")?;
            let value = value * 16 + digit;
            if digits < 3 {
                *escape = Escape::Unicode { digits: digits + 1, value, high };
                return Ok(false);
            }
            *escape = Escape::None;
            let code = match (high, value) {
                (None, 0xD800..=0xDBFF) => {
                    *escape = Escape::AfterHigh { high: value, seen: 0 };
                    return Ok(false);
                }
                (None, 0xDC00..=0xDFFF) => return Err("a high surrogate before a low one".into()),
                (None, code) => code,
                (Some(high), 0xDC00..=0xDFFF) => 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00),
                (Some(_), _) => {
                    return Err("a low surrogate (`\\uDC00` to `\\uDFFF`) after a high one".into());
                }
            };
            let c = char::from_u32(code).ok_or("a Unicode scalar value")?;
            bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        Escape::AfterHigh { high, seen } => match (seen, byte) {
            (0, b'\\') => *escape = Escape::AfterHigh { high, seen: 1 },
            (1, b'u') => *escape = Escape::Unicode { digits: 0, value: 0, high: Some(high) },
            _ => return Err("the low surrogate (`\\uDC00` to `\\uDFFF`) after a high one".into()),
        },
    }
    Ok(false)
}

/// A number's value as `serde_json` reads it: an integer exactly (a
/// plain run of digits, the common case, parsed here), anything else by
/// `serde_json` itself, whose float parsing the final value must match.
fn number(text: &str) -> Option<Value> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    if plain {
        if let Ok(n) = text.parse::<u64>() {
            return Some(Value::from(n));
        }
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::from(n));
        }
    }
    serde_json::from_str::<Value>(text).ok().filter(Value::is_number)
}

/// The value at `segments` inside `value`.
pub(super) fn value_at<'v>(value: &'v Value, segments: &[Segment]) -> Option<&'v Value> {
    segments.iter().try_fold(value, |value, segment| match segment {
        Segment::Key(key) => value.get(key.as_ref()),
        Segment::Index(index) => value.get(index),
    })
}

/// The longest prefix of `bytes` that is whole UTF-8.
fn valid_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn path(text: &str) -> FieldPath {
        let mut path = FieldPath::root();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            path = match part.parse::<usize>() {
                Ok(index) => path.index(index),
                Err(_) => path.key(part.to_string()),
            };
        }
        path
    }

    fn read(chunks: &[&str]) -> PartialJson {
        let mut reader = PartialJson::new();
        for chunk in chunks {
            reader.push(chunk).unwrap();
        }
        reader
    }

    #[test]
    fn a_number_is_never_shown_cut_short() {
        let mut reader = read(&[r#"{"total": 1"#]);
        assert_eq!(reader.value(), json!({}), "the key alone is not shown, nor `1` on its way to more");
        reader.push("000000").unwrap();
        assert_eq!(reader.value(), json!({}));
        let finished = reader.push(",").unwrap().to_vec();
        assert_eq!(finished, [path("total")]);
        assert_eq!(reader.value(), json!({"total": 1000000}));
        // At the end of the output, a top-level number is finished too.
        assert_eq!(read(&["-12.5e1"]).finish().unwrap(), json!(-125.0));
    }

    #[test]
    fn a_string_grows_and_finishes_at_its_quote() {
        let mut reader = read(&[r#"{"seller": "Fabr"#]);
        assert_eq!(reader.value(), json!({"seller": "Fabr"}));
        assert!(!reader.is_finished(&path("seller")));
        assert_eq!(reader.push(r#"ikam""#).unwrap(), [path("seller")]);
        assert_eq!(reader.value(), json!({"seller": "Fabrikam"}));
    }

    #[test]
    fn escapes_and_characters_split_across_chunks_wait_for_their_last_byte() {
        let mut reader = read(&[r#"["a\"#]);
        assert_eq!(reader.value(), json!(["a"]));
        reader.push("u00").unwrap();
        assert_eq!(reader.value(), json!(["a"]));
        reader.push(r#"e9b", "\ud83d"#).unwrap();
        assert_eq!(reader.value(), json!(["aéb", ""]));
        reader.push(r#"\ude00\n""#).unwrap();
        assert_eq!(reader.value(), json!(["aéb", "😀\n"]));
        // A multi-byte character split between byte chunks.
        let mut bytes = PartialJson::new();
        let text = "[\"é\"]".as_bytes();
        bytes.push_bytes(&text[..3]).unwrap();
        assert_eq!(bytes.value(), json!([""]), "half a character is not shown");
        bytes.push_bytes(&text[3..]).unwrap();
        assert_eq!(bytes.finish().unwrap(), json!(["é"]));
    }

    #[test]
    fn containers_finish_when_they_close_after_their_members() {
        let reader = read(&[r#"{"items": [1, {"a": true}], "n": null}"#]);
        let order: Vec<String> = reader.finished().iter().map(ToString::to_string).collect();
        assert_eq!(order, ["items[0]", "items[1].a", "items[1]", "items", "n", ""]);
    }

    #[test]
    fn malformed_output_is_an_error_at_its_byte() {
        let error = PartialJson::new().push(r#"{"a" 1}"#).unwrap_err();
        assert_eq!((error.offset, error.expected.as_str()), (5, "`:` after the key"));
        let error = PartialJson::new().push("[01]").unwrap_err();
        assert!(error.expected.contains("a number"), "{error}");
        let error = PartialJson::new().push("[1] 2").unwrap_err();
        assert_eq!(error.offset, 4);
        assert!(read(&[r#"{"a": [1"#]).finish().unwrap_err().expected.contains("ends inside"));
        assert!(PartialJson::new().push("[tru]").is_err());
        assert!(PartialJson::new().push("[\"a\u{1}\"]").is_err(), "a raw control character");
        // After an error, the reader keeps it.
        let mut reader = PartialJson::new();
        assert!(reader.push("{x").is_err());
        assert!(reader.push("}").is_err());
    }

    /// Any JSON value: nested objects and arrays of text (escapes and
    /// non-ASCII included), integers, floats, booleans and nulls.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e12f64..1e12).prop_map(Value::from),
            "(\\PC|[\"\\\\\n\t\u{1}]){0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-z\u{e9}\"]{0,6}", inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    fn at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
        value_at(value, path.segments())
    }

    /// Every path of `value`, the root included.
    fn paths(value: &Value) -> Vec<FieldPath> {
        let mut all = vec![FieldPath::root()];
        let mut i = 0;
        while i < all.len() {
            let path = all[i].clone();
            match at(value, &path) {
                Some(Value::Object(members)) => {
                    all.extend(members.keys().map(|key| path.clone().key(key.clone())));
                }
                Some(Value::Array(items)) => {
                    all.extend((0..items.len()).map(|index| path.clone().index(index)))
                }
                _ => {}
            }
            i += 1;
        }
        all
    }

    /// Whether `shown` is what a prefix of `whole` may show: strings as
    /// prefixes, containers as growing parts, everything else equal.
    fn consistent(shown: &Value, whole: &Value) -> bool {
        match (shown, whole) {
            (Value::String(part), Value::String(all)) => all.starts_with(part.as_str()),
            (Value::Array(part), Value::Array(all)) => {
                part.len() <= all.len() && part.iter().zip(all).all(|(p, a)| consistent(p, a))
            }
            (Value::Object(part), Value::Object(all)) => {
                part.iter().all(|(key, p)| all.get(key).is_some_and(|a| consistent(p, a)))
            }
            (Value::Null, _) => true,
            _ => shown == whole,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn every_prefix_agrees_with_the_whole(value in any_json(), pretty in any::<bool>(), step in 1usize..9) {
            let text = if pretty { serde_json::to_vec_pretty(&value) } else { serde_json::to_vec(&value) }.unwrap();
            let whole: Value = serde_json::from_slice(&text).unwrap();
            for cut in 0..=text.len() {
                let mut reader = PartialJson::new();
                reader.push_bytes(&text[..cut]).unwrap();
                let shown = reader.value();
                prop_assert!(consistent(&shown, &whole), "cut {cut}: {shown} of {whole}");
                for finished in reader.finished() {
                    prop_assert_eq!(at(&shown, finished), at(&whole, finished), "cut {} at {}", cut, finished);
                    prop_assert!(reader.is_finished(finished), "cut {} at {}", cut, finished);
                }
                // Whatever is said finished is shown as it ends.
                for path in paths(&whole) {
                    if reader.is_finished(&path) {
                        prop_assert_eq!(at(&shown, &path), at(&whole, &path), "cut {} at {}", cut, path);
                    }
                }
                reader.push_bytes(&text[cut..]).unwrap();
                prop_assert_eq!(reader.finish().unwrap(), whole.clone());
            }
            // Chunked in steps, as a stream arrives: the same value.
            let mut reader = PartialJson::new();
            for chunk in text.chunks(step) {
                reader.push_bytes(chunk).unwrap();
            }
            prop_assert_eq!(reader.finish().unwrap(), whole);
        }
    }
}
