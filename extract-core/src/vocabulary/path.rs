//! Where in an output a violation sits: [`FieldPath`], in the JSON names the model sees.

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

use super::quote_prefix;

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object key: the JSON name of a field.
    Key(Cow<'static, str>),
    /// An array index.
    Index(usize),
}

/// Where in the output a violation sits, in JSON names: `line_items[2].amount`.
/// Empty for the root. A key that is not a plain name (letters, digits, `_`,
/// `-`) displays quoted and escaped, shortened like any value:
/// `items["Gbp\n..."].amount`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The root of the output.
    pub const fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// A path from its segments.
    pub fn from_segments(segments: Vec<Segment>) -> FieldPath {
        FieldPath(segments)
    }

    /// This path followed by `key`.
    pub fn key(mut self, key: impl Into<Cow<'static, str>>) -> FieldPath {
        self.0.push(Segment::Key(key.into()));
        self
    }

    /// This path followed by `[index]`.
    pub fn index(mut self, index: usize) -> FieldPath {
        self.0.push(Segment::Index(index));
        self
    }

    /// This path followed by every segment of `rest`.
    pub fn join(mut self, rest: &FieldPath) -> FieldPath {
        self.0.extend(rest.0.iter().cloned());
        self
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The path with every index replaced by `[*]`, so the same field of
    /// different array elements compares equal: `line_items[*].amount`.
    pub fn normalized(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, true);
        out
    }

    fn write(&self, out: &mut String, normalize: bool) {
        use std::fmt::Write;
        for segment in &self.0 {
            match segment {
                Segment::Key(key) if is_plain_name(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                // A key the model chose (a map key, an unknown field) is shown
                // quoted, escaped and shortened, so it cannot write a line or
                // a path step of its own.
                Segment::Key(key) => {
                    let _ = write!(out, "[{}]", quote_prefix(key));
                }
                Segment::Index(_) if normalize => out.push_str("[*]"),
                Segment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
            }
        }
    }
}

/// Whether a key is shown bare in a path: letters, digits, `_` and `-`, at
/// most 64 of them (every JSON name the derive gives a field is one).
fn is_plain_name(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out, false);
        f.write_str(&out)
    }
}

impl PartialEq<&str> for FieldPath {
    fn eq(&self, other: &&str) -> bool {
        let mut text = String::new();
        self.write(&mut text, false);
        text == *other
    }
}

impl Serialize for FieldPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
