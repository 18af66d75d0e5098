//! The corpus loader, [`load`]: a directory of labelled cases read all or
//! not at all. Every file in it is part of a case or named in the error;
//! extensions are read in any letter case; a PDF without a text layer is a
//! case whose quotes are unverified, as a run treats it; and the expected
//! JSON is read strictly: a key written twice in one object, or an integer
//! a float cannot hold exactly (every number is compared as one), is
//! refused naming the file and the path, never settled silently.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{Case, check_cases};
use crate::{Document, Error, Extractable};

/// How many of the files it refuses one error names.
const NAMED: usize = 12;

/// Loads a labelled corpus from `dir`: every `NAME.json` (the expected JSON)
/// beside its document, `NAME.txt` (text), or `NAME.pdf` with `NAME.txt` as
/// its text layer when it has one; the case's id is `NAME`, in name order.
/// Extensions are read in any letter case (`NAME.JSON`).
///
/// A PDF without `NAME.txt`, or whose `NAME.txt` holds only whitespace
/// (what `pdftotext` writes for a scan), is a PDF without a text layer: its
/// quotes are recorded unverified, as in a run on the same PDF.
///
/// All or nothing: `Err` naming the file for what cannot be read, for every
/// file that is no part of a case (a name that is not UTF-8 or not a
/// document id, another extension, a document without its `NAME.json`, a
/// case's file written twice), for an expected JSON that writes a key twice
/// in one object or an integer a float cannot hold exactly (naming the
/// path), and naming the case and the field for an expected JSON that does
/// not fit `T`.
pub fn load<T: Extractable>(dir: impl AsRef<Path>) -> Result<Vec<Case>, Error> {
    let dir = dir.as_ref();
    let listed = list(dir)?;
    let read = |path: &Path| {
        std::fs::read(path)
            .map_err(|e| Error::io(format!("corpus file {}: cannot read it", path.display()), e))
    };
    let text = |path: &Path| {
        String::from_utf8(read(path)?)
            .map_err(|_| Error::config(format!("corpus file {}: not UTF-8 text", path.display())))
    };
    let mut cases = Vec::with_capacity(listed.len());
    for (name, files) in listed {
        let (Some(json_path), txt, pdf) = files.one() else {
            unreachable!("`list` refuses a case without its JSON")
        };
        let expected = expected_json(&read(json_path)?)
            .map_err(|why| Error::config(format!("corpus file {}: {why}", json_path.display())))?;
        let document = match (pdf, txt) {
            (Some(pdf), layer) => {
                let document = Document::pdf(read(pdf)?);
                match layer.map(text).transpose()? {
                    Some(layer) if !layer.chars().all(char::is_whitespace) => document.with_text_layer(layer),
                    _ => document,
                }
            }
            (None, Some(txt)) => Document::text(text(txt)?),
            (None, None) => unreachable!("`list` refuses a case without its document"),
        };
        cases.push(Case::new(document.with_id(name), expected));
    }
    check_cases(&cases, &T::tool().input_schema, std::any::type_name::<T>())?;
    Ok(cases)
}

/// The files of one case, by kind.
#[derive(Default)]
struct Files {
    json: Vec<PathBuf>,
    txt: Vec<PathBuf>,
    pdf: Vec<PathBuf>,
}

impl Files {
    fn one(&self) -> (Option<&Path>, Option<&Path>, Option<&Path>) {
        fn first(paths: &[PathBuf]) -> Option<&Path> {
            paths.first().map(PathBuf::as_path)
        }
        (first(&self.json), first(&self.txt), first(&self.pdf))
    }
}

/// The cases of `dir` by name, each with its expected JSON and a document,
/// or an error naming every file that is no part of one.
fn list(dir: &Path) -> Result<BTreeMap<String, Files>, Error> {
    let listing = |e| Error::io(format!("corpus {}: cannot list it", dir.display()), e);
    let mut cases: BTreeMap<String, Files> = BTreeMap::new();
    let mut refused: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(listing)? {
        let path = entry.map_err(listing)?.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            refused.push(format!("{}: its name is not UTF-8, so it cannot name a case", path.display()));
            continue;
        };
        let kind = file_name.rsplit_once('.').filter(|(stem, _)| !stem.is_empty());
        let files = match kind {
            Some((stem, extension)) if !path.is_dir() => {
                let files = cases.entry(stem.to_string());
                match extension.to_ascii_lowercase().as_str() {
                    "json" => Some(&mut files.or_default().json),
                    "txt" => Some(&mut files.or_default().txt),
                    "pdf" => Some(&mut files.or_default().pdf),
                    _ => None,
                }
            }
            _ => None,
        };
        match files {
            Some(files) => files.push(path),
            None => refused.push(format!(
                "{}: not a case file (a corpus holds NAME.json, NAME.txt and NAME.pdf)",
                path.display()
            )),
        }
    }
    for (name, files) in &mut cases {
        for paths in [&mut files.json, &mut files.txt, &mut files.pdf] {
            paths.sort();
            if paths.len() > 1 {
                let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                refused.push(format!(
                    "{}: one file of case {name}, written twice (names that differ only in letter case)",
                    named.join(" and ")
                ));
            }
        }
        match files.one() {
            (None, txt, pdf) => {
                for document in txt.into_iter().chain(pdf) {
                    refused.push(format!("{}: a document without its expected JSON ({name}.json)", document.display()));
                }
            }
            (Some(json), None, None) => refused.push(format!(
                "{}: case {name} has no document ({name}.txt, or {name}.pdf with its text layer, if it has one, in {name}.txt)",
                json.display()
            )),
            (Some(json), _, _) => {
                if let Some(problem) = Document::text("").with_id(name.as_str()).problem() {
                    refused.push(format!("{}: the case's name is not a document id: {problem}", json.display()));
                }
            }
        }
    }
    if refused.is_empty() {
        return Ok(cases);
    }
    refused.sort();
    let more = refused.len().saturating_sub(NAMED);
    refused.truncate(NAMED);
    let mut message = format!(
        "corpus {}: every file must be part of a case, and {} not: {}",
        dir.display(),
        if refused.len() + more == 1 {
            "this one is".to_string()
        } else {
            format!("{} are", refused.len() + more)
        },
        refused.join("; ")
    );
    if more > 0 {
        message.push_str(&format!("; and {more} more"));
    }
    Err(Error::config(message))
}

/// A case's expected JSON, read strictly: a key written twice in one object
/// and an integer a float cannot hold exactly are refused, naming the path.
fn expected_json(bytes: &[u8]) -> Result<Value, String> {
    let mut numbers = Vec::new();
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let value = Strict { path: String::new(), numbers: &mut numbers }
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value))
        .map_err(|e| match e.classify() {
            serde_json::error::Category::Data => e.to_string(),
            _ => format!("not JSON: {e}"),
        })?;
    let literals = number_literals(bytes);
    debug_assert_eq!(literals.len(), numbers.len(), "one literal for each number read");
    for (literal, path) in literals.into_iter().zip(&numbers) {
        if let Some(held) = inexact_integer(literal) {
            return Err(format!(
                "{} is the integer {literal}, which a float cannot hold exactly (it would be compared as {held}); \
                 every number of a case is compared as a float",
                shown(path)
            ));
        }
    }
    Ok(value)
}

fn shown(path: &str) -> String {
    if path.is_empty() { "the whole JSON".to_string() } else { format!("`{path}`") }
}

/// What a float makes of `literal` when it is an integer a float cannot
/// hold exactly; `None` for a float's literal and for an exact integer.
fn inexact_integer(literal: &str) -> Option<String> {
    if literal.contains(['.', 'e', 'E']) {
        return None;
    }
    let float: f64 = literal.parse().ok()?;
    // An integral float written with no fraction digits is its exact value.
    let held = format!("{float:.0}");
    (held != literal).then_some(held)
}

/// The number literals of valid JSON text, in order.
fn number_literals(bytes: &[u8]) -> Vec<&str> {
    let mut literals = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                // Number literals are ASCII.
                literals.push(std::str::from_utf8(&bytes[start..i]).unwrap_or_default());
            }
            _ => i += 1,
        }
    }
    literals
}

/// A JSON value read with the path of every member, refusing a key written
/// twice in one object; every number's path is kept in order.
struct Strict<'a> {
    path: String,
    numbers: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        self.numbers.push(self.path);
        Ok(Value::Number(n.into()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        self.numbers.push(self.path);
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        let number = Number::from_f64(n)
            .ok_or_else(|| E::custom(format!("{} is not a finite number", shown(&self.path))))?;
        self.numbers.push(self.path);
        Ok(Value::Number(number))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict {
            path: format!("{}[{}]", self.path, items.len()),
            numbers: &mut *self.numbers,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if members.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key `{path}` is written twice in one object (a key is written once)"
                )));
            }
            let value = map.next_value_seed(Strict { path, numbers: &mut *self.numbers })?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_reader_reads_what_serde_json_reads() {
        for text in [
            r#"{"a": [1, -2, 3.5, 1e3, true, null, "x\"1, 2\\"], "b": {"c": {}, "d": []}, "e": "9007199254740993"}"#,
            "[]",
            "0",
            r#""\u00e9""#,
            "-0",
            "18446744073709551615.0",
        ] {
            let strict = expected_json(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(strict, serde_json::from_str::<Value>(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn a_key_written_twice_is_refused_with_its_path() {
        let error = expected_json(br#"{"a": [{"b": 1}, {"c": 2, "c": 3}]}"#).unwrap_err();
        assert!(error.starts_with("the key `a[1].c` is written twice in one object"), "{error}");
        let error = expected_json(br#"{"a": 1, "a": 1}"#).unwrap_err();
        assert!(error.starts_with("the key `a` is written twice"), "{error}");
        // The same key in two objects is two keys.
        assert!(expected_json(br#"[{"a": 1}, {"a": 1}]"#).is_ok());
    }

    #[test]
    fn an_integer_a_float_cannot_hold_is_refused_with_its_path() {
        let error =
            expected_json(br#"{"x": "123456789012345678901", "y": [0, 9007199254740993]}"#).unwrap_err();
        assert!(error.starts_with("`y[1]` is the integer 9007199254740993"), "{error}");
        assert!(error.contains("it would be compared as 9007199254740992"), "{error}");
        let error = expected_json(b"-123456789012345678901234567890").unwrap_err();
        assert!(
            error.starts_with("the whole JSON is the integer -123456789012345678901234567890"),
            "{error}"
        );
        for exact in [
            "9007199254740992",
            "-9007199254740992",
            "100000000000000000000",
            "0",
            "-0",
            "1.7976931348623157e308",
        ] {
            assert!(expected_json(exact.as_bytes()).is_ok(), "{exact}");
        }
        assert!(expected_json(b"{\"a\": 1}x").unwrap_err().starts_with("not JSON: trailing characters"));
    }
}
