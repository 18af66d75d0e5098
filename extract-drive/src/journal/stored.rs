//! What a journal stores of an outcome besides its packet, and how a run's
//! statistics and escalations are read back from a journal alone (no
//! documents, no type, no model): the [`Facts`] that [`Stats`] counts, and
//! each escalation rebuilt from its packet. Never a `Validated`: only the
//! validators build one.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::run::Facts;
use crate::{
    Code, Escalation, FailedAttempt, FieldPath, Fingerprint, Layer, Partial, Reason, Segment, Usage,
    Violation, Violations,
};

/// `facts` as the journal stores them.
pub(crate) fn facts_json(facts: &Facts) -> String {
    json!({
        "attempts": facts.attempts,
        "usage": facts.usage,
        "reason": facts.reason,
        "reviewed": facts.reviewed,
        "attempt_usage": facts.attempt_usage,
        "failed": facts.failed,
        "cost": facts.cost,
        "rung": facts.rung,
        "spend": facts.spend,
    })
    .to_string()
}

/// The facts the journal stored; `None` when they do not read.
pub(crate) fn facts_from(value: &Value) -> Option<Facts> {
    let usage = |v: &Value| serde_json::from_value::<Usage>(v.clone()).ok();
    let attempt_usage = value["attempt_usage"]
        .as_array()?
        .iter()
        .map(|pair| Some((u32::try_from(pair[0].as_u64()?).ok()?, usage(&pair[1])?)))
        .collect::<Option<Vec<_>>>()?;
    let failed = value["failed"]
        .as_array()?
        .iter()
        .map(|prints| prints.as_array()?.iter().map(fingerprint).collect::<Option<BTreeSet<_>>>())
        .collect::<Option<Vec<_>>>()?;
    Some(Facts {
        attempts: u32::try_from(value["attempts"].as_u64()?).ok()?,
        usage: usage(&value["usage"])?,
        reason: match &value["reason"] {
            Value::Null => None,
            reason => Some(reason_from(reason.as_str()?)?),
        },
        reviewed: value["reviewed"].as_bool().unwrap_or(false),
        attempt_usage,
        failed,
        // Facts written before costs were kept have none.
        cost: value["cost"].as_f64(),
        rung: value["rung"].as_u64().and_then(|r| u32::try_from(r).ok()).unwrap_or(0),
        // Facts written before each attempt's spend was kept have none.
        spend: serde_json::from_value(value["spend"].clone()).unwrap_or_default(),
    })
}

fn fingerprint(value: &Value) -> Option<Fingerprint> {
    Some(Fingerprint {
        layer: layer_from(value["layer"].as_str()?)?,
        code: Code::new(value["code"].as_str()?.to_string()),
        path: value["path"].as_str()?.to_string(),
        check: value["check"].as_str().map(str::to_owned),
    })
}

fn layer_from(text: &str) -> Option<Layer> {
    Some(match text {
        "syntax" => Layer::Syntax,
        "structure" => Layer::Structure,
        "semantic" => Layer::Semantic,
        _ => return None,
    })
}

fn reason_from(text: &str) -> Option<Reason> {
    Some(match text {
        "not_recoverable" => Reason::NotRecoverable,
        "systematic" => Reason::Systematic,
        "budget_exhausted" => Reason::BudgetExhausted,
        _ => return None,
    })
}

/// An escalation's packet read back; `None` when it does not read.
pub(crate) fn escalation_from(packet: &Value) -> Option<Escalation> {
    let chain = packet["error_chain"]
        .as_array()?
        .iter()
        .map(|attempt| {
            let violations =
                attempt["violations"].as_array()?.iter().map(violation).collect::<Option<Vec<_>>>()?;
            let usage = serde_json::from_value::<Usage>(attempt["usage"].clone()).ok()?;
            Some(
                FailedAttempt::new(
                    u32::try_from(attempt["attempt"].as_u64()?).ok()?,
                    Violations::new(violations)?,
                    usage,
                )
                .with_model(attempt["model"].as_str().map(str::to_owned))
                .with_cost(attempt["cost"].as_f64()),
            )
        })
        .collect::<Option<Vec<_>>>()?;
    let mut usage = Usage::default();
    for attempt in &chain {
        usage += attempt.usage;
    }
    let last_output = match &packet["last_output"] {
        Value::Null => None,
        output => Some(output.clone()),
    };
    let fix_hint = packet["fix_hint"].as_str().map(str::to_owned);
    let mut escalation =
        Escalation::new(reason_from(packet["reason"].as_str()?)?, chain, last_output, fix_hint, usage)
            .with_cost(packet["cost"].as_f64())
            .answered_by(packet["model"].as_str().map(str::to_owned), 0);
    if let (Some(held), Some(failed)) =
        (packet["partial"]["held"].as_object(), packet["partial"]["failed"].as_object())
    {
        escalation.partial = Partial { held: held.clone(), failed: failed.clone() };
    }
    Some(escalation)
}

fn violation(value: &Value) -> Option<Violation> {
    let fields =
        value["fields"].as_array()?.iter().map(|f| f.as_str().map(path_from)).collect::<Option<Vec<_>>>()?;
    let mut violation = Violation::new(
        layer_from(value["layer"].as_str()?)?,
        Code::new(value["code"].as_str()?.to_string()),
        path_from(value["path"].as_str()?),
        value["message"].as_str()?,
    )
    .recoverable(value["recoverable"].as_bool()?)
    .with_fields(fields);
    if let Some(check) = value["check"].as_str() {
        violation = violation.with_check(check);
    }
    Some(violation)
}

/// A path as it displays (`line_items[2].amount`, `items["a b"].x`) back
/// into segments. A key shortened for display stays shortened.
pub(crate) fn path_from(text: &str) -> FieldPath {
    let mut segments = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("[\"") {
            // A quoted key: a JSON string, up to its closing quote.
            let mut end = 0;
            let mut escaped = false;
            for (i, c) in after.char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            let quoted = &after[..end];
            let key = serde_json::from_str::<String>(&format!("\"{quoted}\""))
                .unwrap_or_else(|_| quoted.to_string());
            segments.push(Segment::Key(key.into()));
            rest = after.get(end + 2..).unwrap_or_default();
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').unwrap_or(after.len());
            match after[..end].parse::<usize>() {
                Ok(index) => segments.push(Segment::Index(index)),
                Err(_) => segments.push(Segment::Key(after[..end].to_string().into())),
            }
            rest = after.get(end + 1..).unwrap_or_default();
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            segments.push(Segment::Key(rest[..end].to_string().into()));
            rest = &rest[end..];
        }
    }
    FieldPath::from_segments(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_back_as_they_display() {
        for path in [
            FieldPath::root(),
            FieldPath::root().key("total"),
            FieldPath::root().key("line_items").index(2).key("amount"),
            FieldPath::root().key("items").key("a b\"c").key("x"),
            FieldPath::root().index(0).index(3),
        ] {
            assert_eq!(path_from(&path.to_string()), path, "{path}");
        }
    }
}
