//! JSON text for a journal line's values, written straight into the line:
//! byte for byte what `serde_json::to_writer` writes (tests hold the two
//! together), without serde's serializer machinery, which, measured, was
//! most of a journal's instructions.

use serde_json::{Number, Value};

/// Writes `value` as compact JSON text.
pub(super) fn value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => self::number(out, number),
        Value::String(text) => string(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                self::value(out, item);
            }
            out.push(b']');
        }
        Value::Object(fields) => {
            out.push(b'{');
            for (index, (key, item)) in fields.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                string(out, key);
                out.push(b':');
                self::value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Writes `number` as serde_json does. A whole number that fits a `u64`
/// is its decimal digits, however serde_json holds numbers (another crate
/// can turn on its `arbitrary_precision`, where a number keeps the text it
/// was read from; that text is then those digits too); any other number is
/// left to serde_json, whose float format is its own.
fn number(out: &mut Vec<u8>, number: &Number) {
    if let Some(integer) = number.as_u64() {
        out.extend_from_slice(itoa::Buffer::new().format(integer).as_bytes());
    } else {
        // Writing into a `Vec` cannot fail, nor can serializing a `Number`.
        let _ = serde_json::to_writer(&mut *out, number);
    }
}

/// How serde_json escapes a byte of a string: 0 for not at all, `u` for
/// `\u00XX`, else the letter after the backslash.
static ESCAPE: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes `text` as a JSON string, escaped as serde_json escapes it.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut plain_from = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPE[byte as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[plain_from..at]);
        plain_from = at + 1;
        if escape == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(byte >> 4) as usize],
                HEX[(byte & 0xf) as usize],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
    out.extend_from_slice(&bytes[plain_from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn written(value: &Value) -> String {
        let mut out = Vec::new();
        super::value(&mut out, value);
        String::from_utf8(out).expect("JSON text is UTF-8")
    }

    #[test]
    fn every_escape_and_number_form_is_what_serde_json_writes() {
        let every_byte: String = (0u8..=0x7f).map(char::from).collect();
        let value = json!({
            "escapes": every_byte,
            "unicode": "\u{2028}\u{7f}é漢🦀",
            "": [],
            "empty": {},
            "numbers": [0, -0.0, 1, -1, u64::MAX, i64::MIN, 0.1, 1e300, -2.5e-300, 5e-324, 1e21, 1e15, 623.0, f64::MAX],
            "nested": [[[{"a": [null, true, false]}]]],
            "key \"with\"\n escapes": "x",
        });
        assert_eq!(written(&value), serde_json::to_string(&value).unwrap());
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from), // a non-finite float is null
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in any_value()) {
            prop_assert_eq!(written(&value), serde_json::to_string(&value).unwrap());
        }
    }
}
