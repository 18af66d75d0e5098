//! The desk's HTML: the queue, a document's page, short message pages,
//! the style sheet and the keyboard script (both served as files, so the
//! Content-Security-Policy allows no inline code).
//!
//! Every string from a model, a document or a request goes through the
//! report's [`escape`] in HTML text and attribute values, and through
//! [`document_href`]/[`query_value`] (percent-encoding) before it is put
//! in a URL; nothing is written into a script or a style.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::ops::Range;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::form::{self, BLANK_ROWS, Field, Input};
use crate::report::escape;
use crate::validate::check::locate_quote;
use crate::vocabulary::text::shorten;
use crate::{Content, Document, Segment, Violation, Violations};
use extract_drive::journal::Waiting;

/// What stays as it is in a URL's path segment or query value: letters,
/// digits and `-._~`; everything else is percent-encoded.
const URL_SAFE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The most characters of a fix hint the queue shows (the page shows it whole).
const QUEUE_HINT_CHARS: usize = 240;
/// The most rows the queue shows; the rest are counted, and a filter narrows them.
const QUEUE_ROWS: usize = 200;

/// The link to a document's page: its id percent-encoded as a path segment.
pub(crate) fn document_href(id: &str) -> String {
    document_url(id, "")
}

/// The address of `action` (`""`: the page, `"pdf"`, `"fix"`, `"reject"`)
/// on document `id`: `/document/<id>/<action>`, the id percent-encoded as
/// a path segment. An id that is a dot segment (`.` or `..`, which a
/// browser collapses however it is escaped) goes in the query instead:
/// `/by-id/<action>?id=..`.
pub(crate) fn document_url(id: &str, action: &str) -> String {
    if id == "." || id == ".." {
        return format!("/by-id/{action}?id={}", query_value(id));
    }
    let segment = utf8_percent_encode(id, URL_SAFE);
    if action.is_empty() { format!("/document/{segment}") } else { format!("/document/{segment}/{action}") }
}

/// `url` with `key=value` added to its query.
pub(crate) fn with_query(url: &str, key: &str, value: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}{key}={}", query_value(value))
}

/// `text` percent-encoded as a query value.
pub(crate) fn query_value(text: &str) -> String {
    utf8_percent_encode(text, URL_SAFE).to_string()
}

/// `text` percent-encoded as a cookie's value.
pub(crate) fn cookie_value(text: &str) -> String {
    utf8_percent_encode(text, URL_SAFE).to_string()
}

/// The start of every page, up to and with `<body>`.
fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<link rel=\"stylesheet\" href=\"/desk.css\">\n\
         <script src=\"/desk.js\" defer></script>\n</head>\n<body>\n",
        escape(title)
    );
}

/// A page that says one thing (a refusal, an error), with a way back.
pub(crate) fn message(title: &str, text: &str) -> String {
    let mut out = String::new();
    head(&mut out, title);
    let _ = write!(
        out,
        "<main class=\"message\">\n<h1>{}</h1>\n<p>{}</p>\n<p><a href=\"/\">Back to the queue</a></p>\n</main>\n</body>\n</html>\n",
        escape(title),
        escape(text)
    );
    out
}

/// The page of a document the journal has but the desk was not given.
pub(crate) fn missing_document(id: &str) -> String {
    message(
        "Document not loaded",
        &format!(
            "The journal escalated document {id}, but the desk was not given it, so its quotes cannot be \
             checked: start the desk with the run's documents. Nothing was recorded."
        ),
    )
}

/// The queue's filters, from its query string (empty means none).
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Filters {
    #[serde(default)]
    reason: String,
    #[serde(default)]
    field: String,
    #[serde(default)]
    fingerprint: String,
    #[serde(default)]
    recorded: String,
    #[serde(default)]
    rejected: String,
}

/// The fingerprints (as displayed) of the violations an escalation ended with.
fn fingerprints(entry: &Waiting) -> BTreeSet<String> {
    entry
        .escalation
        .error_chain
        .last()
        .map(|a| a.violations.iter().map(|v| v.fingerprint().to_string()).collect())
        .unwrap_or_default()
}

/// The queue: every waiting document, filtered, with counts.
pub(crate) struct QueuePage<'a> {
    pub waiting: &'a [Waiting],
    pub reviewed: u64,
    pub rejected: u64,
    pub filters: &'a Filters,
    pub known: &'a BTreeMap<String, Document>,
}

impl QueuePage<'_> {
    pub fn render(&self) -> String {
        let filters = self.filters;
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        let mut fields: BTreeMap<&str, usize> = BTreeMap::new();
        let mut prints: BTreeMap<String, usize> = BTreeMap::new();
        for entry in self.waiting {
            *reasons.entry(entry.escalation.reason.as_str()).or_default() += 1;
            for field in entry.escalation.partial.failed.keys() {
                *fields.entry(field).or_default() += 1;
            }
            for print in fingerprints(entry) {
                *prints.entry(print).or_default() += 1;
            }
        }
        let shown: Vec<&Waiting> = self
            .waiting
            .iter()
            .filter(|e| filters.reason.is_empty() || e.escalation.reason.as_str() == filters.reason)
            .filter(|e| filters.field.is_empty() || e.escalation.partial.failed.contains_key(&filters.field))
            .filter(|e| filters.fingerprint.is_empty() || fingerprints(e).contains(&filters.fingerprint))
            .collect();
        let mut out = String::new();
        head(&mut out, "Review desk");
        let _ = write!(
            out,
            "<main class=\"queue\">\n<h1>Review desk</h1>\n<p class=\"counts\"><strong id=\"waiting\">{}</strong> waiting \
             · <span id=\"reviewed\">{}</span> reviewed · <span id=\"rejected\">{}</span> rejected</p>\n",
            self.waiting.len(),
            self.reviewed,
            self.rejected
        );
        for (said, id) in [("fix", &filters.recorded), ("rejection", &filters.rejected)] {
            if !id.is_empty() {
                let _ =
                    writeln!(out, "<p class=\"notice\">Recorded the {said} of document {}.</p>", escape(id));
            }
        }
        out.push_str("<form class=\"filters\" method=\"get\" action=\"/\">\n");
        select(
            &mut out,
            "reason",
            "Reason",
            &reasons.iter().map(|(k, n)| (k.to_string(), *n)).collect::<Vec<_>>(),
            &filters.reason,
        );
        select(
            &mut out,
            "field",
            "Failing field",
            &fields.iter().map(|(k, n)| (k.to_string(), *n)).collect::<Vec<_>>(),
            &filters.field,
        );
        select(
            &mut out,
            "fingerprint",
            "Violation",
            &prints.into_iter().collect::<Vec<_>>(),
            &filters.fingerprint,
        );
        out.push_str("<button type=\"submit\">Filter</button> <a href=\"/\">Clear</a>\n</form>\n");
        let _ = writeln!(
            out,
            "<p class=\"muted\">Showing <span id=\"shown\">{}</span> of {}.</p>",
            shown.len(),
            self.waiting.len()
        );
        if shown.is_empty() {
            out.push_str("<p class=\"empty\">Nothing waits for a reviewer here.</p>\n");
        } else {
            out.push_str(
                "<table class=\"queue\">\n<thead><tr><th>Document</th><th>Reason</th><th>Failing fields</th>\
                 <th>Fix hint</th></tr></thead>\n<tbody>\n",
            );
            for entry in shown.iter().take(QUEUE_ROWS) {
                let id = escape(&entry.id);
                let title = self.known.get(&entry.id).and_then(Document::title);
                let _ = write!(
                    out,
                    "<tr><td><a class=\"document\" data-document-id=\"{id}\" href=\"{}\">{id}</a>",
                    escape(&document_href(&entry.id))
                );
                if let Some(title) = title {
                    let _ = write!(out, "<br><small>{}</small>", escape(title));
                }
                if !self.known.contains_key(&entry.id) {
                    out.push_str("<br><small class=\"problem\">not given to the desk</small>");
                }
                let _ = write!(
                    out,
                    "</td><td>{}<br><small>{} attempt(s)</small></td><td><ul class=\"fields\">",
                    escape(entry.escalation.reason.as_str()),
                    entry.escalation.attempts()
                );
                for (field, messages) in &entry.escalation.partial.failed {
                    let first = messages
                        .as_array()
                        .and_then(|m| m.first())
                        .and_then(Value::as_str)
                        .unwrap_or("absent");
                    let _ = write!(
                        out,
                        "<li><code>{}</code>: {}</li>",
                        escape(field),
                        escape(&shorten(first, 160))
                    );
                }
                let hint = entry.escalation.fix_hint.as_deref().unwrap_or("");
                let _ = writeln!(
                    out,
                    "</ul></td><td class=\"hint\">{}</td></tr>",
                    escape(&shorten(hint, QUEUE_HINT_CHARS))
                );
            }
            out.push_str("</tbody>\n</table>\n");
            if shown.len() > QUEUE_ROWS {
                let _ = writeln!(
                    out,
                    "<p class=\"more muted\">and {} more, not shown: filter by reason, field or violation to see them.</p>",
                    shown.len() - QUEUE_ROWS
                );
            }
        }
        out.push_str(
            "<p class=\"keys muted\">Keys on a document's page: <kbd>n</kbd> next, <kbd>p</kbd> previous, \
             <kbd>Ctrl</kbd>+<kbd>Enter</kbd> record the fix.</p>\n</main>\n</body>\n</html>\n",
        );
        out
    }
}

/// A `<select>` of one filter: every value with its count, `value` chosen.
fn select(out: &mut String, name: &str, label: &str, options: &[(String, usize)], chosen: &str) {
    let _ = write!(out, "<label>{label} <select name=\"{name}\"><option value=\"\">any</option>");
    for (option, count) in options {
        let selected = if option == chosen { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{}\"{selected}>{} ({count})</option>",
            escape(option),
            escape(&shorten(option, 100))
        );
    }
    out.push_str("</select></label>\n");
}

/// A document's page: the source beside the review.
pub(crate) struct DocumentPage<'a> {
    pub id: &'a str,
    pub entry: &'a Waiting,
    /// `None`: the desk was not given this document.
    pub document: Option<&'a Document>,
    /// The form's fields (the schema's, then keys the model invented).
    pub fields: Vec<Field>,
    /// What the inputs show: the last output, or after a refused fix, the output with it.
    pub values: Map<String, Value>,
    /// The violations of a refused fix.
    pub violations: Option<Violations>,
    /// What else is wrong with the submitted form (no reviewer, no reason).
    pub problem: Option<String>,
    pub csrf: &'a str,
    pub reviewer: &'a str,
    /// The previous and next waiting ids, and this one's place (1-based) of how many.
    pub neighbours: (Option<&'a str>, Option<&'a str>, usize, usize),
    pub notice: Option<String>,
    /// A rejection's reason as typed, after a refused rejection.
    pub reason: &'a str,
}

/// One `Sourced` value of the output: where it is, its quote, its top-level field.
struct Quote {
    path: String,
    field: String,
    quote: String,
    /// `Some(range)` found; `None` not found; unverified when the document has no text.
    span: Option<Range<usize>>,
}

/// Every `{ "value", "quote" }` object in `values` (the shape of a `Sourced`).
fn quotes_in(values: &Map<String, Value>, text: Option<&str>) -> Vec<Quote> {
    fn walk(value: &Value, path: String, field: &str, text: Option<&str>, out: &mut Vec<Quote>) {
        match value {
            Value::Object(object) => {
                if let (Some(Value::String(quote)), true, 2) =
                    (object.get("quote"), object.contains_key("value"), object.len())
                {
                    let span = text.and_then(|t| locate_quote(t, quote));
                    out.push(Quote { path, field: field.to_string(), quote: quote.clone(), span });
                    return;
                }
                for (key, inner) in object {
                    walk(inner, format!("{path}.{key}"), field, text, out);
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, format!("{path}[{i}]"), field, text, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (name, value) in values {
        walk(value, name.clone(), name, text, &mut out);
    }
    out
}

/// The top-level fields a violation names (its path's and its fields').
fn fields_named(violation: &Violation) -> BTreeSet<String> {
    std::iter::once(&violation.path)
        .chain(&violation.fields)
        .filter_map(|path| match path.segments().first() {
            Some(Segment::Key(key)) => Some(key.to_string()),
            _ => None,
        })
        .collect()
}

impl DocumentPage<'_> {
    pub fn render(&self) -> String {
        let id = escape(self.id);
        let escalation = &self.entry.escalation;
        let mut out = String::new();
        head(&mut out, &format!("Review {}", self.id));
        let (previous, next, place, of) = self.neighbours;
        out.push_str("<nav class=\"bar\"><a href=\"/\" id=\"queue\">Queue</a>");
        let _ = write!(out, " <span class=\"muted\">document {place} of {of}</span>");
        if let Some(previous) = previous {
            let _ =
                write!(out, " <a rel=\"prev\" href=\"{}\">← Previous</a>", escape(&document_href(previous)));
        }
        if let Some(next) = next {
            let _ = write!(out, " <a rel=\"next\" href=\"{}\">Next →</a>", escape(&document_href(next)));
        }
        out.push_str(
            " <span class=\"keys muted\"><kbd>p</kbd> previous · <kbd>n</kbd> next · <kbd>Ctrl</kbd>+<kbd>Enter</kbd> \
             record</span></nav>\n",
        );
        let _ = write!(out, "<main data-document-id=\"{id}\">\n<h1>Document <code>{id}</code>");
        if let Some(title) = self.document.and_then(Document::title) {
            let _ = write!(out, " <small>{}</small>", escape(title));
        }
        out.push_str("</h1>\n");
        if let Some(notice) = &self.notice {
            let _ = writeln!(out, "<p class=\"notice\">{}</p>", escape(notice));
        }
        if let Some(problem) = &self.problem {
            let _ = writeln!(out, "<p class=\"problem\" role=\"alert\">{}</p>", escape(problem));
        }
        if self.violations.is_some() {
            out.push_str(
                "<p class=\"problem\" role=\"alert\">The fix does not pass the checks: nothing was recorded. \
                 The violations are shown beside their fields.</p>\n",
            );
        }
        let _ = writeln!(
            out,
            "<p class=\"reason\">Escalated: <strong>{}</strong> after {} attempt(s).</p>",
            escape(escalation.reason.as_str()),
            escalation.attempts()
        );
        out.push_str("<div class=\"columns\">\n");
        let text = self.document.and_then(Document::searchable_text);
        let quotes = quotes_in(&self.values, text);
        self.source(&mut out, text, &quotes);
        out.push_str("<section class=\"review\">\n");
        self.failed(&mut out);
        self.fix_form(&mut out, &quotes);
        self.trusted(&mut out);
        self.reject_form(&mut out);
        self.history(&mut out);
        out.push_str("</section>\n</div>\n</main>\n</body>\n</html>\n");
        out
    }

    /// The document: its PDF where there is one, its text with every found quote marked.
    fn source(&self, out: &mut String, text: Option<&str>, quotes: &[Quote]) {
        out.push_str("<section class=\"source\">\n<h2>Document</h2>\n");
        let Some(document) = self.document else {
            out.push_str(
                "<p class=\"problem\">The desk was not given this document: its text cannot be shown and a fix \
                 cannot be checked against it. Start the desk with the run's documents.</p>\n</section>\n",
            );
            return;
        };
        if let Content::Pdf { .. } = document.content() {
            let _ = writeln!(
                out,
                "<iframe class=\"pdf\" src=\"{}\" title=\"The PDF of document {}\"></iframe>",
                escape(&document_url(self.id, "pdf")),
                escape(self.id)
            );
            if text.is_some() {
                out.push_str("<h3>Text layer</h3>\n");
            } else {
                out.push_str(
                    "<p class=\"note\">This PDF has no text layer: its quotes cannot be checked against the \
                     document, so they are shown unverified (a fix is not refused for them). Read the values off \
                     the PDF.</p>\n",
                );
            }
        }
        if let Some(text) = text {
            marked_text(out, text, quotes);
        }
        if !quotes.is_empty() {
            out.push_str("<h3>Quotes</h3>\n<ul class=\"quotes\">\n");
            for (i, quote) in quotes.iter().enumerate() {
                let (class, said) = match (&quote.span, text) {
                    (_, None) => ("unverified", "unverified: no text to check it against".to_string()),
                    (Some(span), Some(_)) => ("found", format!("found at bytes {}–{}", span.start, span.end)),
                    (None, Some(_)) => ("missing", "not found in the document".to_string()),
                };
                let _ = write!(
                    out,
                    "<li id=\"quote-{i}\" class=\"{class}\"><a href=\"#field-{}\"><code>{}</code></a>: “{}” \
                     <small>{}</small>",
                    escape(&quote.field),
                    escape(&quote.path),
                    escape(&shorten(&quote.quote, 400)),
                    escape(&said)
                );
                if quote.span.is_some() && text.is_some() {
                    let _ = write!(out, " <a href=\"#mark-{i}\">show</a>");
                }
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }

    /// The failed fields with their messages, and the fix hint.
    fn failed(&self, out: &mut String) {
        let escalation = &self.entry.escalation;
        out.push_str("<h2>What failed</h2>\n<dl class=\"failed\">\n");
        for (field, messages) in &escalation.partial.failed {
            let _ = write!(out, "<dt><a href=\"#field-{0}\"><code>{0}</code></a></dt>", escape(field));
            let messages: Vec<&str> =
                messages.as_array().map(|m| m.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            if messages.is_empty() {
                out.push_str("<dd>absent from the output</dd>\n");
            }
            for message in messages {
                let _ = writeln!(out, "<dd>{}</dd>", escape(message));
            }
        }
        out.push_str("</dl>\n");
        if let Some(hint) = &escalation.fix_hint {
            let _ = writeln!(out, "<p class=\"hint\"><strong>Fix hint:</strong> {}</p>", escape(hint));
        }
    }

    /// The held fields, read-only: what the reviewer can trust as it is.
    fn trusted(&self, out: &mut String) {
        let escalation = &self.entry.escalation;
        if !escalation.partial.held.is_empty() {
            out.push_str("<h3>Trusted fields</h3>\n<p class=\"muted\">They passed every check that ran.</p>\n<dl class=\"held\">\n");
            for (field, value) in &escalation.partial.held {
                // A `Sourced` value shows as its value and its quote.
                let shown = match (value.get("value"), value.get("quote").and_then(Value::as_str)) {
                    (Some(given), Some(quote)) => format!("{} (quote “{quote}”)", form::shown(given)),
                    _ => form::shown(value),
                };
                let _ = writeln!(
                    out,
                    "<dt><code>{}</code></dt><dd>{}</dd>",
                    escape(field),
                    escape(&shorten(&shown, 400))
                );
            }
            out.push_str("</dl>\n");
        }
    }

    /// The violations of a refused fix, by top-level field ("" for those naming none).
    fn violations_by_field(&self) -> BTreeMap<String, Vec<&Violation>> {
        let mut by_field: BTreeMap<String, Vec<&Violation>> = BTreeMap::new();
        let known: BTreeSet<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        for violation in self.violations.iter().flat_map(|v| v.iter()) {
            let named: Vec<String> =
                fields_named(violation).into_iter().filter(|f| known.contains(f.as_str())).collect();
            if named.is_empty() {
                by_field.entry(String::new()).or_default().push(violation);
            }
            for field in named {
                by_field.entry(field).or_default().push(violation);
            }
        }
        by_field
    }

    fn fix_form(&self, out: &mut String, quotes: &[Quote]) {
        let action = escape(&document_url(self.id, "fix"));
        let _ = writeln!(out, "<h2>Fix</h2>\n<form id=\"fix\" method=\"post\" action=\"{action}\">");
        let _ = writeln!(out, "<input type=\"hidden\" name=\"csrf\" value=\"{}\">", escape(self.csrf));
        let by_field = self.violations_by_field();
        if let Some(general) = by_field.get("") {
            out.push_str("<ul class=\"violations\">\n");
            for violation in general {
                violation_item(out, violation);
            }
            out.push_str("</ul>\n");
        }
        let held = &self.entry.escalation.partial.held;
        let (trusted, open): (Vec<&Field>, Vec<&Field>) =
            self.fields.iter().partition(|f| held.contains_key(&f.name));
        for field in open {
            self.field(out, field, "failed", &by_field, quotes);
        }
        if !trusted.is_empty() {
            let refused_here = trusted.iter().any(|f| by_field.contains_key(&f.name));
            let _ = writeln!(
                out,
                "<details class=\"trusted\"{}><summary>Edit trusted fields ({})</summary>",
                if refused_here { " open" } else { "" },
                trusted.len()
            );
            for field in trusted {
                self.field(out, field, "held", &by_field, quotes);
            }
            out.push_str("</details>\n");
        }
        reviewer_input(out, "fix-reviewer", self.reviewer);
        out.push_str(
            "<p><button type=\"submit\" id=\"record\">Record fix</button> <small class=\"muted\">The fix is checked \
             by every layer first; nothing is recorded unless it passes.</small></p>\n</form>\n",
        );
    }

    /// One field's block: label, input(s), its violations beside it.
    fn field(
        &self,
        out: &mut String,
        field: &Field,
        class: &str,
        by_field: &BTreeMap<String, Vec<&Violation>>,
        quotes: &[Quote],
    ) {
        let name = escape(&field.name);
        let refused = by_field.get(&field.name);
        let _ = write!(
            out,
            "<div class=\"field {class}{}\" id=\"field-{name}\">\n<label class=\"name\" for=\"input-{name}\"><code>{name}</code></label>\n",
            if refused.is_some() { " refused" } else { "" }
        );
        let value = self.values.get(&field.name).unwrap_or(&Value::Null);
        input(out, &field.input, &field.name, value, field.nullable, true);
        for (i, quote) in quotes.iter().enumerate() {
            if quote.field == field.name && quote.span.is_some() {
                let _ = write!(out, "<a class=\"see\" href=\"#mark-{i}\">see quote in the document</a> ");
            }
        }
        if let Some(refused) = refused {
            out.push_str("<ul class=\"violations\">\n");
            for violation in refused {
                violation_item(out, violation);
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</div>\n");
    }

    fn reject_form(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "<h2>Reject</h2>\n<form id=\"reject\" method=\"post\" action=\"{}\">\n\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\n\
             <p class=\"muted\">When the source cannot be used (unreadable, not what the run extracts): no value is \
             recorded, only the rejection and its reason.</p>\n\
             <label for=\"reason\">Reason</label>\n<textarea id=\"reason\" name=\"reason\" rows=\"2\" required>{}</textarea>",
            escape(&document_url(self.id, "reject")),
            escape(self.csrf),
            escape(self.reason)
        );
        reviewer_input(out, "reject-reviewer", self.reviewer);
        out.push_str(
            "<p><button type=\"submit\" class=\"secondary\">Reject document</button></p>\n</form>\n",
        );
    }

    /// The last output as JSON and the attempts' violations, folded.
    fn history(&self, out: &mut String) {
        let escalation = &self.entry.escalation;
        let last = escalation
            .last_output
            .as_ref()
            .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
            .unwrap_or_else(|| "(nothing)".into());
        let _ = writeln!(
            out,
            "<details><summary>The model's last output</summary><pre class=\"json\">{}</pre></details>",
            escape(&last)
        );
        out.push_str("<details><summary>Every attempt's violations</summary>\n<ol class=\"chain\">\n");
        for attempt in &escalation.error_chain {
            let _ = write!(out, "<li>attempt {}<ul>", attempt.attempt);
            for violation in attempt.violations.iter() {
                let _ = write!(
                    out,
                    "<li><code>{}</code> {}</li>",
                    escape(&violation.path.to_string()),
                    escape(&violation.message)
                );
            }
            out.push_str("</ul></li>\n");
        }
        out.push_str("</ol>\n</details>\n");
    }
}

fn violation_item(out: &mut String, violation: &Violation) {
    let path = violation.path.to_string();
    let _ = writeln!(
        out,
        "<li class=\"violation\" data-code=\"{}\"><code>{}</code> {}</li>",
        escape(violation.code.as_str()),
        escape(if path.is_empty() { "(whole output)" } else { &path }),
        escape(&violation.message)
    );
}

fn reviewer_input(out: &mut String, id: &str, reviewer: &str) {
    let _ = writeln!(
        out,
        "<label for=\"{id}\">Reviewer</label> <input id=\"{id}\" name=\"reviewer\" required maxlength=\"200\" \
         autocomplete=\"name\" value=\"{}\">",
        escape(reviewer)
    );
}

/// The input(s) of `input` named `path`, showing `value`; `top`: a
/// top-level field (its input gets the label's id).
fn input(out: &mut String, input: &Input, path: &str, value: &Value, nullable: bool, top: bool) {
    one_input(out, input, path, value, top);
    if nullable && top {
        let _ = write!(
            out,
            " <label class=\"null\"><input type=\"checkbox\" name=\"{}~null\"> null</label>",
            escape(path)
        );
    }
    out.push('\n');
}

/// The input(s) of `input` alone; `labelled`: it gets the id the field's label names.
fn one_input(out: &mut String, input: &Input, path: &str, value: &Value, labelled: bool) {
    let name = escape(path);
    let id = if labelled { format!(" id=\"input-{name}\"") } else { String::new() };
    match input {
        Input::Text => {
            let shown = form::shown(value);
            if shown.len() > 80 || shown.contains('\n') {
                let _ = write!(out, "<textarea name=\"{name}\"{id} rows=\"3\">{}</textarea>", escape(&shown));
            } else {
                let _ = write!(out, "<input type=\"text\" name=\"{name}\"{id} value=\"{}\">", escape(&shown));
            }
        }
        Input::Number { integer } => {
            // A value that is not a number (the model wrote text) stays visible as text.
            let (kind, step) = if value.is_number() || value.is_null() {
                ("number", if *integer { "1" } else { "any" })
            } else {
                ("text", "")
            };
            let step = if step.is_empty() { String::new() } else { format!(" step=\"{step}\"") };
            let _ = write!(
                out,
                "<input type=\"{kind}\" inputmode=\"decimal\"{step} name=\"{name}\"{id} value=\"{}\">",
                escape(&form::shown(value))
            );
        }
        Input::Date => {
            let shown = form::shown(value);
            let is_date = shown.len() == 10 && chrono::NaiveDate::parse_from_str(&shown, "%Y-%m-%d").is_ok();
            let kind = if is_date || shown.is_empty() { "date" } else { "text" };
            let _ = write!(out, "<input type=\"{kind}\" name=\"{name}\"{id} value=\"{}\">", escape(&shown));
        }
        Input::Boolean => {
            let _ = write!(out, "<select name=\"{name}\"{id}><option value=\"\"></option>");
            for option in ["true", "false"] {
                let selected = if value.as_bool().map(|b| b.to_string()).as_deref() == Some(option) {
                    " selected"
                } else {
                    ""
                };
                let _ = write!(out, "<option value=\"{option}\"{selected}>{option}</option>");
            }
            out.push_str("</select>");
        }
        Input::Choice(choices) => {
            let _ = write!(out, "<select name=\"{name}\"{id}><option value=\"\"></option>");
            let mut matched = false;
            for choice in choices {
                let selected = form::same(choice, value);
                matched |= selected;
                let _ = write!(
                    out,
                    "<option value=\"{}\"{}>{}</option>",
                    escape(&choice.to_string()),
                    if selected { " selected" } else { "" },
                    escape(&form::shown(choice))
                );
            }
            if !matched && !value.is_null() {
                // What the model wrote, though no choice: kept so the reviewer sees it and the checks name it.
                let _ = write!(
                    out,
                    "<option value=\"{}\" selected>{} (not a choice)</option>",
                    escape(&value.to_string()),
                    escape(&form::shown(value))
                );
            }
            out.push_str("</select>");
        }
        Input::Sourced(inner) => {
            let given = value.get("value").unwrap_or(&Value::Null);
            let quote = value.get("quote").and_then(Value::as_str).unwrap_or_default();
            out.push_str("<span class=\"sourced\"><span class=\"label\">value</span> ");
            one_input(out, inner, path, given, labelled);
            let _ = write!(
                out,
                " <span class=\"label\">quote</span> <input type=\"text\" class=\"quote\" name=\"{name}.quote\" value=\"{}\"></span>",
                escape(quote)
            );
        }
        Input::Object(fields) => {
            out.push_str("<fieldset class=\"object\">");
            for field in fields {
                let inner = value.get(&field.name).unwrap_or(&Value::Null);
                let _ = write!(out, "<label><span class=\"label\">{}</span> ", escape(&field.name));
                self::input(
                    out,
                    &field.input,
                    &format!("{path}.{}", field.name),
                    inner,
                    field.nullable,
                    false,
                );
                out.push_str("</label> ");
            }
            out.push_str("</fieldset>");
        }
        Input::Rows(columns) => {
            let rows = value.as_array().map(Vec::as_slice).unwrap_or_default();
            let _ = write!(
                out,
                "<input type=\"hidden\" name=\"{name}~rows\" value=\"\"><table class=\"rows\"><thead><tr>"
            );
            for column in columns {
                let _ = write!(out, "<th>{}</th>", escape(&column.name));
            }
            out.push_str("<th>remove</th></tr></thead><tbody>");
            for i in 0..rows.len() + BLANK_ROWS {
                let row = rows.get(i).unwrap_or(&Value::Null);
                out.push_str(if i < rows.len() { "<tr>" } else { "<tr class=\"blank\">" });
                for column in columns {
                    let cell = row.get(&column.name).unwrap_or(&Value::Null);
                    out.push_str("<td>");
                    self::input(
                        out,
                        &column.input,
                        &format!("{path}[{i}].{}", column.name),
                        cell,
                        column.nullable,
                        false,
                    );
                    out.push_str("</td>");
                }
                if i < rows.len() {
                    let _ = write!(
                        out,
                        "<td><input type=\"checkbox\" name=\"{name}[{i}]~remove\" title=\"remove this row\"></td>"
                    );
                } else {
                    out.push_str("<td class=\"muted\">new</td>");
                }
                out.push_str("</tr>");
            }
            out.push_str("</tbody></table>");
        }
        Input::List(item) => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
            let _ = write!(out, "<input type=\"hidden\" name=\"{name}~rows\" value=\"\"><ol class=\"list\">");
            for i in 0..items.len() + BLANK_ROWS {
                out.push_str("<li>");
                self::input(
                    out,
                    item,
                    &format!("{path}[{i}]"),
                    items.get(i).unwrap_or(&Value::Null),
                    true,
                    false,
                );
                if i < items.len() {
                    let _ = write!(
                        out,
                        " <label><input type=\"checkbox\" name=\"{name}[{i}]~remove\"> remove</label>"
                    );
                }
                out.push_str("</li>");
            }
            out.push_str("</ol>");
        }
        Input::Json => {
            let shown = if value.is_null() {
                String::new()
            } else {
                serde_json::to_string_pretty(value).unwrap_or_default()
            };
            let _ = write!(
                out,
                "<textarea class=\"json\" name=\"{name}\"{id} rows=\"3\">{}</textarea>",
                escape(&shown)
            );
        }
    }
}

/// The document's text in a `<pre>`, each found quote's span in a `<mark>`
/// linked to its field (overlapping spans: the first one marks).
fn marked_text(out: &mut String, text: &str, quotes: &[Quote]) {
    let mut spans: Vec<(usize, &Quote)> =
        quotes.iter().enumerate().filter(|(_, q)| q.span.is_some()).collect();
    spans.sort_by_key(|(_, q)| q.span.as_ref().map(|s| s.start));
    out.push_str("<pre class=\"text\">");
    let mut at = 0;
    for (i, quote) in spans {
        let span = quote.span.clone().expect("filtered above");
        if span.start < at || !text.is_char_boundary(span.start) || !text.is_char_boundary(span.end) {
            continue;
        }
        out.push_str(&escape(&text[at..span.start]));
        let _ = write!(
            out,
            "<a class=\"mark\" id=\"mark-{i}\" href=\"#field-{}\" title=\"{}\"><mark>{}</mark></a>",
            escape(&quote.field),
            escape(&quote.path),
            escape(&text[span.clone()])
        );
        at = span.end;
    }
    out.push_str(&escape(&text[at..]));
    out.push_str("</pre>\n");
}

/// Keyboard shortcuts, served as `/desk.js` (the CSP allows scripts from
/// the desk only, none inline): `n` next, `p` previous, Ctrl+Enter records
/// the fix; letters are ignored while typing in a field.
pub(crate) const SCRIPT: &str = r#""use strict";
document.addEventListener("keydown", function (event) {
  var form = document.getElementById("fix");
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && form) {
    event.preventDefault();
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    return;
  }
  var target = event.target;
  var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable);
  if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
  var rel = event.key === "n" || event.key === "j" ? "next" : event.key === "p" || event.key === "k" ? "prev" : null;
  if (rel) {
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) { event.preventDefault(); window.location.href = link.href; }
  }
});
"#;

/// The desk's style sheet, served as `/desk.css`: two columns from a
/// laptop's width, one below.
pub(crate) const STYLE: &str = "
:root { color-scheme: light; --ink: #1f2933; --muted: #52606d; --line: #d9e2ec; --bg: #f5f7fa;
  --bad: #b42318; --good: #1a7f37; --mark: #fff1a8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; }
main { max-width: 1500px; margin: 0 auto; padding: 16px 24px 40px; }
nav.bar { display: flex; gap: 16px; align-items: baseline; padding: 10px 24px; background: #fff;
  border-bottom: 1px solid var(--line); flex-wrap: wrap; }
h1 { font-size: 22px; margin: 6px 0 12px; } h1 small { color: var(--muted); font-weight: normal; }
h2 { font-size: 18px; margin: 18px 0 8px; } h3 { font-size: 15px; margin: 14px 0 6px; }
code, pre, kbd { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 13px; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; background: #fff; }
.muted, .note { color: var(--muted); }
.notice { background: #e6f4ea; border: 1px solid #b7dfc3; padding: 8px 12px; border-radius: 6px; }
.problem { color: var(--bad); font-weight: 600; }
.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 20px; }
@media (max-width: 1000px) { .columns { grid-template-columns: minmax(0, 1fr); } }
@media (min-width: 1001px) { section.source { position: sticky; top: 8px; align-self: start;
  max-height: calc(100vh - 16px); overflow: auto; } }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; min-width: 0; }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; background: #fbfcfd; border: 1px solid var(--line);
  padding: 12px; border-radius: 6px; max-height: 70vh; overflow: auto; font-size: 14px; line-height: 1.5; }
pre.json { white-space: pre-wrap; overflow-wrap: anywhere; }
mark { background: var(--mark); padding: 0 1px; border-radius: 2px; }
a.mark { color: inherit; text-decoration: none; } a.mark:target mark, a.mark:hover mark { outline: 2px solid #d4a106; }
iframe.pdf { width: 100%; height: 60vh; border: 1px solid var(--line); border-radius: 6px; }
ul.quotes li.missing { color: var(--bad); } ul.quotes li.unverified { color: var(--muted); }
ul.quotes li.found small { color: var(--good); }
dl.failed dt, dl.held dt { margin-top: 6px; } dl.failed dd { color: var(--bad); margin-left: 18px; }
dl.held dd { margin-left: 18px; }
.hint { background: #fff8e1; border: 1px solid #f1dfa4; padding: 8px 12px; border-radius: 6px; }
form { margin: 0; }
.field { padding: 8px 10px; margin: 8px 0; border-left: 4px solid var(--line); background: #fbfcfd; }
.field.failed { border-left-color: #f0b429; } .field.refused { border-left-color: var(--bad); background: #fff5f5; }
.field label.name { display: block; font-weight: 600; margin-bottom: 4px; }
input:not([type]), input[type=text], input[type=number], input[type=date], select, textarea { font: inherit; padding: 4px 6px;
  border: 1px solid #9aa5b1; border-radius: 4px; max-width: 100%; }
.field > input[type=text], .field > textarea, input.quote { width: 100%; }
textarea { width: 100%; }
table.rows { border-collapse: collapse; width: 100%; } table.rows td, table.rows th { padding: 2px 4px; text-align: left; }
table.rows input { width: 100%; } table.rows tr.blank input { background: #f8fafc; }
ul.violations { margin: 6px 0 0; padding-left: 18px; } li.violation { color: var(--bad); }
label.null { color: var(--muted); font-size: 13px; white-space: nowrap; }
.sourced .label, fieldset .label { color: var(--muted); font-size: 13px; }
button { font: inherit; padding: 6px 14px; border-radius: 5px; border: 1px solid #2458b3; background: #2f6fdf;
  color: #fff; cursor: pointer; } button.secondary { background: #fff; color: var(--bad); border-color: var(--bad); }
details.trusted { margin: 10px 0; } details summary { cursor: pointer; color: #2458b3; }
table.queue { border-collapse: collapse; width: 100%; background: #fff; }
table.queue th, table.queue td { border-bottom: 1px solid var(--line); padding: 8px 10px; text-align: left; vertical-align: top; }
table.queue ul.fields { margin: 0; padding-left: 16px; } td.hint { max-width: 420px; color: var(--muted); }
form.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 10px 0; }
form.filters select { max-width: 320px; }
";
