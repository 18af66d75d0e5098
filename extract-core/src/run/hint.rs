//! Fix hints: what would fix a failure that feedback cannot, in the terms of
//! the schema or the run. Shared by the retry policy and [`Stats`](crate::Stats).

use crate::{Code, Fingerprint, Violation};

fn field(path: &str) -> String {
    if path.is_empty() { "the root object".to_string() } else { format!("`{path}`") }
}

/// The structural fix for a failure that repeats (the same fingerprint in
/// consecutive attempts, or across most documents of a corpus).
pub(crate) fn systematic(fp: &Fingerprint) -> String {
    let at = field(&fp.path);
    let code = &fp.code;
    if *code == Code::MISSING_FIELD {
        format!(
            "{at} keeps coming back missing or null: the source may not hold it. Make {at} optional \
             (Option) so null is a valid answer, or tag it #[extract(recoverable = false)] if a \
             document without it must go to a human"
        )
    } else if *code == Code::INVALID_TYPE || *code == Code::INVALID_VALUE {
        format!(
            "{at} keeps failing its type or format: loosen the field (accept the form the documents \
             use, e.g. a String) and normalise the value in post-processing, or state the expected \
             format in the field's doc comment"
        )
    } else if *code == Code::CHECK_FAILED {
        let rule = fp.check.as_deref().map(|c| format!("the check `{c}`")).unwrap_or("the check".into());
        format!(
            "{rule} on {at} keeps failing: review the check and the field (tolerance, rounding, \
             whether the source states these values consistently); tag the check recoverable = false \
             if documents may legitimately break it"
        )
    } else if *code == Code::QUOTE_NOT_FOUND {
        format!(
            "the model's quote for {at} fails again and again: check whether the document states the \
             value verbatim (a PDF's text layer may differ from the page), or make the field optional"
        )
    } else if *code == Code::UNKNOWN_FIELD {
        format!("the model keeps sending {at}: add it to the type, or drop deny_unknown_fields")
    } else if *code == Code::NO_TOOL_CALL || *code == Code::WRONG_TOOL || *code == Code::INVALID_JSON {
        "the model keeps answering without a valid call of the tool: force tool use in the backend \
         (tool_choice) or use a model that supports it, and keep the tool's schema small"
            .to_string()
    } else {
        format!("{at} keeps failing with `{code}`: review the field's schema and the instructions")
    }
}

/// What would fix a violation that no feedback can fix.
pub(crate) fn not_recoverable(v: &Violation) -> String {
    let at = field(&v.path.normalized());
    let code = &v.code;
    if *code == Code::REFUSAL {
        "the model declined to answer: review the document and the instructions for what it refuses; \
         a retry will not change its answer"
            .to_string()
    } else if *code == Code::TRUNCATED {
        "the output was cut off by the token limit: raise max_tokens (or split the document so each \
         output is smaller)"
            .to_string()
    } else if *code == Code::CONTEXT_EXCEEDED {
        "the document is too large for the model's context window: split the document and extract \
         from each part"
            .to_string()
    } else if *code == Code::VALIDATOR_PANICKED {
        "a validator panicked: fix the check or validation code so it returns a violation instead of \
         panicking"
            .to_string()
    } else if *code == Code::MISSING_FIELD {
        format!(
            "{at} is tagged recoverable = false and the model gave no value for it (null or left out). \
             Have a person check the document and supply it, or make it optional if documents may lack it"
        )
    } else if *code == Code::QUOTE_NOT_FOUND {
        format!(
            "{at} is tagged recoverable = false and neither the model's quote nor its value occurs in \
             the document. Have a person check the document and supply it, or make it optional if \
             documents may lack it"
        )
    } else if *code == Code::CHECK_FAILED {
        let rule = v.check.as_deref().map(|c| format!("the check `{c}`")).unwrap_or("the check".into());
        format!("{rule} is tagged recoverable = false: the document breaks it; a human has to decide")
    } else {
        format!("{at} failed with `{code}`, which no retry can fix: review the document and the schema")
    }
}
