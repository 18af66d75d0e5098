//! What went wrong with one output: [`Violation`], grouped as [`Violations`].
//!
//! Every violation names the place it concerns with a [`FieldPath`] spelled in
//! the JSON names the model sees, so the feedback text can be read back to the
//! model verbatim.

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

use super::FieldPath;

/// The validation layer a violation comes from. Validation stops at the first
/// layer that fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The reply is not a call of the expected tool with a JSON object.
    Syntax,
    /// The object does not match the type: missing fields, wrong types, schema keywords.
    Structure,
    /// The value is well formed but breaks a `#[check]` rule or a provenance quote.
    Semantic,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Syntax => "syntax",
            Layer::Structure => "structure",
            Layer::Semantic => "semantic",
        })
    }
}

/// A violation's machine-readable code, such as `"missing_field"`.
///
/// Compares equal to `&str`, so `violation.code == "check_failed"` reads naturally.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(Cow<'static, str>);

impl Code {
    /// The tool input is text that does not parse as JSON.
    pub const INVALID_JSON: Code = Code::new_static("invalid_json");
    /// The reply is text, not a call of the tool.
    pub const NO_TOOL_CALL: Code = Code::new_static("no_tool_call");
    /// The reply calls a tool other than the one asked for.
    pub const WRONG_TOOL: Code = Code::new_static("wrong_tool");
    /// A required field is absent or `null`.
    pub const MISSING_FIELD: Code = Code::new_static("missing_field");
    /// A value has the wrong JSON type, or is out of range for its Rust type.
    pub const INVALID_TYPE: Code = Code::new_static("invalid_type");
    /// A field the type does not know, under `deny_unknown_fields`.
    pub const UNKNOWN_FIELD: Code = Code::new_static("unknown_field");
    /// A value of the right type that breaks a schema keyword or is not an allowed enum value.
    pub const INVALID_VALUE: Code = Code::new_static("invalid_value");
    /// A `#[check]` rule does not hold.
    pub const CHECK_FAILED: Code = Code::new_static("check_failed");
    /// A `Sourced` quote is not in the document, or its value is not in its quote.
    pub const QUOTE_NOT_FOUND: Code = Code::new_static("quote_not_found");
    /// A validator panicked.
    pub const VALIDATOR_PANICKED: Code = Code::new_static("validator_panicked");
    /// The model refused to answer.
    pub const REFUSAL: Code = Code::new_static("refusal");
    /// A streamed output was stopped early by a violation no later output
    /// could change (reported so only when the run cannot judge the prefix
    /// again: a caller's own validator).
    pub const STOPPED: Code = Code::new_static("stopped");
    /// The output was cut off by a token limit.
    pub const TRUNCATED: Code = Code::new_static("truncated");
    /// The document does not fit the model's context window.
    pub const CONTEXT_EXCEEDED: Code = Code::new_static("context_exceeded");
    /// A patch correction's operations do not apply to the previous output
    /// (a pointer to nothing, an index past the end, a path into a number,
    /// an operation other than `add`, `remove` and `replace`).
    pub const INVALID_PATCH: Code = Code::new_static("invalid_patch");

    /// A code known at compile time.
    pub const fn new_static(code: &'static str) -> Code {
        Code(Cow::Borrowed(code))
    }

    /// A code made at run time (for example one a `#[check(code = ...)]` names).
    pub fn new(code: impl Into<Cow<'static, str>>) -> Code {
        Code(code.into())
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One thing wrong with one output, with where it is and whether a retry can fix it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// The layer that found it.
    pub layer: Layer,
    /// Machine-readable code, e.g. `"missing_field"`.
    pub code: Code,
    /// Where it is, in JSON names; empty for the root.
    pub path: FieldPath,
    /// Every path the violation involves, `path` first.
    pub fields: Vec<FieldPath>,
    /// Exact, actionable text in the names the model sees.
    pub message: String,
    /// Whether a retry with this violation as feedback can fix it. `false`
    /// means the datum is absent from the source, or no feedback helps.
    pub recoverable: bool,
    /// The rule that failed, for semantic violations (`sum(line_items.amount) == total`).
    /// Part of the violation's fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

impl Violation {
    /// A recoverable violation at `path` whose `fields` hold just `path`.
    pub fn new(layer: Layer, code: Code, path: FieldPath, message: impl Into<String>) -> Violation {
        Violation {
            layer,
            code,
            fields: vec![path.clone()],
            path,
            message: message.into(),
            recoverable: true,
            check: None,
        }
    }

    /// The same violation with the given recoverability.
    pub fn recoverable(mut self, recoverable: bool) -> Violation {
        self.recoverable = recoverable;
        self
    }

    /// The same violation involving `fields` (the path is kept first).
    pub fn with_fields(mut self, fields: impl IntoIterator<Item = FieldPath>) -> Violation {
        let mut all = vec![self.path.clone()];
        for field in fields {
            if !all.contains(&field) {
                all.push(field);
            }
        }
        self.fields = all;
        self
    }

    /// The same violation, naming the rule that failed.
    pub fn with_check(mut self, check: impl Into<String>) -> Violation {
        self.check = Some(check.into());
        self
    }

    /// The identity of this kind of failure across attempts and documents:
    /// layer, code, path with indices normalised to `[*]`, and the rule.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint {
            layer: self.layer,
            code: self.code.clone(),
            path: self.path.normalized(),
            check: self.check.clone(),
        }
    }
}

impl fmt::Display for Violation {
    /// `path: message` on one line: a line break in a message (a `with`
    /// check's error, say) is shown escaped, so no violation can write a
    /// line of its own into the feedback.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str("(root): ")?;
        } else {
            write!(f, "{}: ", self.path)?;
        }
        for c in self.message.chars() {
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                c if (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}') => {
                    write!(f, "{}", c.escape_default())?
                }
                c => fmt::Write::write_char(f, c)?,
            }
        }
        Ok(())
    }
}

/// What makes two violations "the same error" for systematic-error detection.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Fingerprint {
    /// The layer.
    pub layer: Layer,
    /// The code.
    pub code: Code,
    /// The path with indices normalised: `line_items[*].amount`.
    pub path: String,
    /// The rule, for check failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "(root)" } else { &self.path };
        write!(f, "{} {} at {}", self.layer, self.code, path)?;
        if let Some(check) = &self.check {
            write!(f, " [{check}]")?;
        }
        Ok(())
    }
}

/// Every violation of the layer that failed: never empty.
///
/// Displays as the feedback text a model reads: one line per violation, path first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// Groups `violations`; `None` when there are none.
    pub fn new(violations: Vec<Violation>) -> Option<Violations> {
        if violations.is_empty() { None } else { Some(Violations(violations)) }
    }

    /// A group of exactly one violation.
    pub fn one(violation: Violation) -> Violations {
        Violations(vec![violation])
    }

    /// The layer that failed (every violation of a group shares it, except a
    /// panicking validator reported beside semantic failures).
    pub fn layer(&self) -> Layer {
        self.0[0].layer
    }

    /// Whether a retry can fix every violation.
    pub fn all_recoverable(&self) -> bool {
        self.0.iter().all(|v| v.recoverable)
    }

    /// The violations, as a `Vec`.
    pub fn into_vec(self) -> Vec<Violation> {
        self.0
    }
}

impl std::ops::Deref for Violations {
    type Target = [Violation];
    fn deref(&self) -> &[Violation] {
        &self.0
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "- {violation}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// How many lines of violations a correction lists at most, whatever the
/// fingerprints (the last line then counts the rest).
const FEEDBACK_LINES: usize = 40;

impl Violations {
    /// The feedback a correction prompt carries: like `Display`, but at most
    /// `per_fingerprint` violations of one fingerprint are listed, then one
    /// line says how many more share it (and past 40 lines one last line counts
    /// the rest). So 20,000 bad line items make a
    /// few lines of feedback, not 20,000; the error chain keeps them all.
    ///
    /// ```
    /// use extract::{Code, FieldPath, Layer, Violation, Violations};
    /// let all: Vec<Violation> = (0..100)
    ///     .map(|i| {
    ///         let at = FieldPath::root().key("line_items").index(i).key("amount");
    ///         Violation::new(Layer::Semantic, Code::CHECK_FAILED, at, "must be >= 0")
    ///     })
    ///     .collect();
    /// let feedback = Violations::new(all).unwrap().feedback(5);
    /// assert_eq!(feedback.lines().count(), 6);
    /// assert!(feedback.ends_with("- ... and 95 more like this at line_items[*].amount"));
    /// ```
    pub fn feedback(&self, per_fingerprint: usize) -> String {
        let per_fingerprint = per_fingerprint.max(1);
        // Grouped by fingerprint, in the order each first appears.
        let mut index: std::collections::HashMap<Fingerprint, usize> = std::collections::HashMap::new();
        let mut groups: Vec<(Vec<&Violation>, usize, String)> = Vec::new();
        for violation in &self.0 {
            let fingerprint = violation.fingerprint();
            let at = *index.entry(fingerprint).or_insert_with_key(|fingerprint| {
                let path =
                    if fingerprint.path.is_empty() { "(root)".to_string() } else { fingerprint.path.clone() };
                groups.push((Vec::new(), 0, path));
                groups.len() - 1
            });
            let (listed, total, _) = &mut groups[at];
            *total += 1;
            if listed.len() < per_fingerprint {
                listed.push(violation);
            }
        }
        // Fingerprints tell map keys and unknown field names apart, so 20,000
        // distinct keys are 20,000 groups: the whole list is capped too.
        let mut lines = Vec::new();
        let mut unlisted = 0;
        for (listed, total, path) in groups {
            if lines.len() >= FEEDBACK_LINES {
                unlisted += total;
                continue;
            }
            lines.extend(listed.iter().map(|v| format!("- {v}")));
            if total > listed.len() {
                lines.push(format!("- ... and {} more like this at {path}", total - listed.len()));
            }
        }
        if unlisted > 0 {
            lines.push(format!("- ... and {unlisted} more violations of other kinds"));
        }
        lines.join("\n")
    }
}
