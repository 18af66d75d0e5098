//! Scoring one outcome against its truth: the four verdicts, the
//! comparison rules, and the counts they add up to.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::{Field, Kind, Step};
use crate::{Reason, Usage};

/// How one field (or one document) of one case came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A valid outcome whose value equals the truth.
    Correct,
    /// A valid outcome whose value differs from the truth: the figure that
    /// matters, since nothing downstream will question it.
    WrongAccepted,
    /// Escalated, although the truth holds a value.
    EscalatedPresent,
    /// Escalated, and the truth is `null` (the source lacks the datum).
    EscalatedAbsent,
}

impl Verdict {
    /// Whether the loop did the right thing: accepted the true value, or
    /// escalated what the source lacks. Accuracy counts these.
    pub fn is_right(self) -> bool {
        matches!(self, Verdict::Correct | Verdict::EscalatedAbsent)
    }

    /// The verdict as the report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Correct => "correct",
            Verdict::WrongAccepted => "wrong_accepted",
            Verdict::EscalatedPresent => "escalated_present",
            Verdict::EscalatedAbsent => "escalated_absent",
        }
    }
}

/// The four counts of a field or of the documents. They add up to the
/// number of cases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Valid, and equal to the truth (for documents: every field).
    pub correct: usize,
    /// Valid, and different from the truth (for documents: at least one field).
    pub wrong_accepted: usize,
    /// Escalated although the truth holds a value (for documents: the
    /// truth is complete).
    pub escalated_present: usize,
    /// Escalated, and the truth is `null` (for documents: for at least one
    /// required field).
    pub escalated_absent: usize,
}

impl Counts {
    pub(super) fn add(&mut self, verdict: Verdict) {
        *match verdict {
            Verdict::Correct => &mut self.correct,
            Verdict::WrongAccepted => &mut self.wrong_accepted,
            Verdict::EscalatedPresent => &mut self.escalated_present,
            Verdict::EscalatedAbsent => &mut self.escalated_absent,
        } += 1;
    }

    /// The number of cases counted.
    pub fn total(&self) -> usize {
        self.correct + self.wrong_accepted + self.escalated_present + self.escalated_absent
    }

    /// The share of cases the loop got right ([`Verdict::is_right`]):
    /// correct values plus rightly escalated ones (`escalated_absent`), over
    /// every case; 0 when there are none.
    pub fn accuracy(&self) -> f64 {
        let total = self.total();
        if total == 0 { 0.0 } else { (self.correct + self.escalated_absent) as f64 / total as f64 }
    }
}

/// A caller's comparison: `(value, truth) -> equal`.
pub type Equal = dyn Fn(&Value, &Value) -> bool + Send + Sync;

/// How a field's value is compared with its truth. A field without a rule
/// of its own takes its kind's: numbers numerically (`140` equals `140.0`),
/// dates as dates, everything else exactly.
#[derive(Clone)]
pub enum Rule {
    /// Equal JSON (numbers compared as numbers).
    Exact,
    /// Equal text once case and whitespace runs are set aside.
    Text,
    /// Numbers no further apart than the tolerance.
    Number {
        /// The largest difference still counted equal.
        tolerance: f64,
    },
    /// The same calendar date (`YYYY-MM-DD`, any time after it ignored).
    Date,
    /// The caller's own: `(value, truth) -> equal`, both non-null.
    Custom(Arc<Equal>),
}

impl Rule {
    /// A rule of the caller's own: `equal(value, truth)`, called only when
    /// neither is `null`.
    pub fn custom(equal: impl Fn(&Value, &Value) -> bool + Send + Sync + 'static) -> Rule {
        Rule::Custom(Arc::new(equal))
    }

    fn for_kind(kind: Kind) -> Rule {
        match kind {
            Kind::Number => Rule::Number { tolerance: 0.0 },
            Kind::Date => Rule::Date,
            Kind::Text | Kind::Boolean | Kind::Whole => Rule::Exact,
        }
    }

    fn equal(&self, value: &Value, truth: &Value) -> bool {
        match self {
            Rule::Exact => json_equal(value, truth),
            Rule::Text => match (value.as_str(), truth.as_str()) {
                (Some(a), Some(b)) => normalize(a) == normalize(b),
                _ => json_equal(value, truth),
            },
            Rule::Number { tolerance } => match (value.as_f64(), truth.as_f64()) {
                (Some(a), Some(b)) => (a - b).abs() <= *tolerance,
                _ => false,
            },
            Rule::Date => match (value.as_str().and_then(parse_date), truth.as_str().and_then(parse_date)) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
            Rule::Custom(equal) => equal(value, truth),
        }
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Exact => f.write_str("Exact"),
            Rule::Text => f.write_str("Text"),
            Rule::Number { tolerance } => write!(f, "Number {{ tolerance: {tolerance} }}"),
            Rule::Date => f.write_str("Date"),
            Rule::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// How the items of an array are paired with the truth's, so that their
/// fields are scored one by one (without it, an array is one field,
/// compared whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// The first item with the first, and so on.
    Position,
    /// The item whose value at this key equals the truth item's.
    Key(String),
}

/// Equal JSON, numbers compared as numbers.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// `YYYY-MM-DD`, alone or followed by a time: `(year, month, day)`.
pub(super) fn parse_date(text: &str) -> Option<(i32, u32, u32)> {
    let date = text.get(..10)?;
    let rest = &text[10..];
    if !(rest.is_empty() || rest.starts_with(['T', 't', ' '])) {
        return None;
    }
    let mut parts = date.split('-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let (year, month, day) = (year.parse().ok()?, month.parse().ok()?, day.parse().ok()?);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then_some((year, month, day))
}

/// One case's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseScore {
    /// The document's id.
    pub id: String,
    /// The document's verdict.
    pub verdict: Verdict,
    /// Why it was escalated, when it was.
    pub reason: Option<Reason>,
    /// The fingerprints of the violations that ended an escalated case
    /// (its last attempt's), to tell the causes apart across cases.
    pub fingerprints: Vec<String>,
    /// Each field's verdict, by JSON path.
    pub fields: BTreeMap<String, Verdict>,
    /// Model calls spent on it.
    pub attempts: u32,
    /// Tokens spent on it.
    pub usage: Usage,
}

/// Scores one case: `output` is the valid outcome's JSON, `None` when it
/// was escalated.
pub(super) fn score_case(
    fields: &[Field],
    rules: &BTreeMap<String, Rule>,
    matches: &BTreeMap<String, Match>,
    output: Option<&Value>,
    truth: &Value,
) -> (Verdict, BTreeMap<String, Verdict>) {
    let mut verdicts = BTreeMap::new();
    for field in fields {
        let verdict = match output {
            None if present(Some(truth), &field.steps, field.sourced) => Verdict::EscalatedPresent,
            None => Verdict::EscalatedAbsent,
            Some(output) => {
                let equal = match matches.get(&field.path) {
                    // The array of matched items: all the truth's there, and no more.
                    Some(how) => same_items(at(output, &field.steps), at(truth, &field.steps), how),
                    None => {
                        let rule =
                            rules.get(&field.path).cloned().unwrap_or_else(|| Rule::for_kind(field.kind));
                        equal(Some(output), Some(truth), &field.steps, field.sourced, &rule)
                    }
                };
                if equal { Verdict::Correct } else { Verdict::WrongAccepted }
            }
        };
        verdicts.insert(field.path.clone(), verdict);
    }
    // An array of paired items is wrong when a field of one of its pairs is.
    if output.is_some() {
        for path in matches.keys() {
            let prefix = format!("{path}[].");
            let item_wrong = verdicts
                .iter()
                .any(|(field, verdict)| field.starts_with(&prefix) && *verdict == Verdict::WrongAccepted);
            if let (true, Some(verdict)) = (item_wrong, verdicts.get_mut(path)) {
                *verdict = Verdict::WrongAccepted;
            }
        }
    }
    let document = match output {
        Some(_) if verdicts.values().all(|v| *v == Verdict::Correct) => Verdict::Correct,
        Some(_) => Verdict::WrongAccepted,
        None if fields.iter().any(|f| f.required && !present(Some(truth), &f.steps, f.sourced)) => {
            Verdict::EscalatedAbsent
        }
        None => Verdict::EscalatedPresent,
    };
    (document, verdicts)
}

/// The value at `steps` (object keys only; `None` past an `Items` step).
fn at<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    let mut value = value;
    for step in steps {
        match step {
            Step::Key(key) => value = value.get(key)?,
            Step::Items(_) => return None,
        }
    }
    Some(value)
}

/// The item of `items` paired with `truth_item`, the `index`-th of the truth's.
fn paired<'v>(items: &'v [Value], truth_item: &Value, index: usize, how: &Match) -> Option<&'v Value> {
    match how {
        Match::Position => items.get(index),
        Match::Key(key) => {
            let wanted = truth_item.get(key).filter(|k| !k.is_null())?;
            items.iter().find(|item| item.get(key).is_some_and(|k| json_equal(k, wanted)))
        }
    }
}

fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// `value`, or for a `Sourced` value its `value`; `None` for null.
fn unwrap_sourced(value: Option<&Value>, sourced: bool) -> Option<&Value> {
    let value = value.filter(|v| !v.is_null())?;
    if sourced {
        value.as_object().map_or(Some(value), |o| o.get("value")).filter(|v| !v.is_null())
    } else {
        Some(value)
    }
}

fn same_items(value: Option<&Value>, truth: Option<&Value>, how: &Match) -> bool {
    let (items, truth_items) = (items(value), items(truth));
    items.len() == truth_items.len()
        && truth_items.iter().enumerate().all(|(i, t)| paired(items, t, i, how).is_some())
}

fn equal(value: Option<&Value>, truth: Option<&Value>, steps: &[Step], sourced: bool, rule: &Rule) -> bool {
    let Some((step, rest)) = steps.split_first() else {
        return match (unwrap_sourced(value, sourced), unwrap_sourced(truth, sourced)) {
            (None, None) => true,
            (Some(v), Some(t)) => rule.equal(v, t),
            _ => false,
        };
    };
    match step {
        Step::Key(key) => {
            equal(value.and_then(|v| v.get(key)), truth.and_then(|t| t.get(key)), rest, sourced, rule)
        }
        Step::Items(how) => {
            let values = items(value);
            items(truth)
                .iter()
                .enumerate()
                .all(|(i, t)| equal(paired(values, t, i, how), Some(t), rest, sourced, rule))
        }
    }
}

/// Whether the truth holds a value at `steps` (for matched items: in any item).
fn present(truth: Option<&Value>, steps: &[Step], sourced: bool) -> bool {
    let Some(truth) = truth.filter(|t| !t.is_null()) else { return false };
    match steps.split_first() {
        None => unwrap_sourced(Some(truth), sourced).is_some(),
        Some((Step::Key(key), rest)) => present(truth.get(key), rest, sourced),
        Some((Step::Items(_), rest)) => {
            truth.as_array().is_some_and(|items| items.iter().any(|t| present(Some(t), rest, sourced)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_parse_strictly() {
        assert_eq!(parse_date("2026-02-28"), Some((2026, 2, 28)));
        assert_eq!(parse_date("2024-02-29T10:00:00Z"), Some((2024, 2, 29)));
        assert_eq!(parse_date("2026-02-29"), None);
        assert_eq!(parse_date("01/03/2026"), None);
        assert_eq!(parse_date("2026-03-011"), None);
    }

    #[test]
    fn each_rule_says_equal_and_different() {
        assert!(Rule::Exact.equal(&json!(140), &json!(140.0)));
        assert!(!Rule::Exact.equal(&json!("INV-1"), &json!("inv-1")));
        assert!(Rule::Text.equal(&json!(" ACME\n Corp "), &json!("acme corp")));
        assert!(!Rule::Text.equal(&json!("ACME Co"), &json!("acme corp")));
        assert!(Rule::Number { tolerance: 0.01 }.equal(&json!(10.004), &json!(10)));
        assert!(!Rule::Number { tolerance: 0.01 }.equal(&json!(10.02), &json!(10)));
        assert!(Rule::Date.equal(&json!("2026-03-01T00:00:00"), &json!("2026-03-01")));
        assert!(!Rule::Date.equal(&json!("2026-03-02"), &json!("2026-03-01")));
        let prefix = Rule::custom(|v, t| v.as_str().zip(t.as_str()).is_some_and(|(v, t)| v.starts_with(t)));
        assert!(prefix.equal(&json!("INV-1040"), &json!("INV")));
        assert!(!prefix.equal(&json!("PO-1040"), &json!("INV")));
    }
}
