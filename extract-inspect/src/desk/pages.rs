//! The desk's HTML: the queue, a document's page and short message pages,
//! written as maud templates. maud escapes every value spliced into text or
//! an attribute, so no text from a model, a document or a request reaches a
//! page unescaped; URLs are built by [`Site`] (ids percent-encoded) and
//! nothing is written into a script or a style: the style sheet and the
//! keyboard script are the files in `assets/`, served by the desk so the
//! Content-Security-Policy allows no inline code.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use maud::{Markup, html};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use super::form::{self, BLANK_ROWS, Field, Input};
use crate::validate::check::locate_quotes;
use crate::vocabulary::pages::Pages;
use crate::vocabulary::text::shorten;
use crate::{Content, Document, FieldPath, Segment, Violation, Violations};
use extract_drive::journal::Waiting;

/// The keyboard shortcuts, served as `desk.js`: `n` next, `p` previous,
/// Ctrl+Enter records the fix; letters are ignored while typing in a field.
pub(crate) const SCRIPT: &str = include_str!("assets/desk.js");

/// The style sheet, served as `desk.css`: two columns from a laptop's width, one below.
pub(crate) const STYLE: &str = include_str!("assets/desk.css");

/// What stays as it is in a URL's path segment or query value: letters,
/// digits and `-._~`; everything else is percent-encoded.
const URL_SAFE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The most characters of a fix hint the queue shows (the page shows it whole).
const QUEUE_HINT_CHARS: usize = 240;
/// The most rows the queue shows; the rest are counted, and a filter narrows them.
const QUEUE_ROWS: usize = 200;

/// The desk's addresses, under the path it is mounted at: `""` when it
/// serves the root of its own listener, `/review` when an application
/// nested it there. Every link, form action and redirect is built here.
#[derive(Debug, Clone, Default)]
pub(crate) struct Site {
    base: String,
}

impl Site {
    /// The desk mounted at `base` (no trailing `/`; `""` for the root).
    pub fn at(base: &str) -> Site {
        Site { base: base.trim_end_matches('/').to_string() }
    }

    /// The queue's address: `/`, or the base itself (axum's `nest` does
    /// not route `/review/` to a nested router's `/`, only `/review`).
    pub fn queue(&self) -> String {
        if self.base.is_empty() { "/".to_string() } else { self.base.clone() }
    }

    /// The queue's address with `key=value`.
    pub fn queue_with(&self, key: &str, value: &str) -> String {
        with_query(&self.queue(), key, value)
    }

    /// A file the desk serves (`desk.css`, `desk.js`).
    pub fn asset(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    /// The address of `action` (`""`: the page, `"pdf"`, `"fix"`,
    /// `"reject"`) on document `id`: `/document/<id>/<action>`, the id
    /// percent-encoded as a path segment. An id that is a dot segment (`.`
    /// or `..`, which a browser collapses however it is escaped) goes in the
    /// query instead: `/by-id/<action>?id=..`.
    pub fn document(&self, id: &str, action: &str) -> String {
        let base = &self.base;
        if id == "." || id == ".." {
            return format!("{base}/by-id/{action}?id={}", query_value(id));
        }
        let segment = utf8_percent_encode(id, URL_SAFE);
        if action.is_empty() {
            format!("{base}/document/{segment}")
        } else {
            format!("{base}/document/{segment}/{action}")
        }
    }

    /// `path` (a path within the desk) as a redirect's target when it is
    /// one (one `/` first, not `//` nor `/\`, which a browser reads as
    /// another host); else the queue.
    pub fn redirect(&self, path: &str) -> String {
        let own = path.starts_with('/') && !path[1..].starts_with(['/', '\\']);
        if own && path != "/" { format!("{}{path}", self.base) } else { self.queue() }
    }

    /// The `Path` of the desk's cookies: the desk's own paths only.
    pub fn cookie_path(&self) -> &str {
        if self.base.is_empty() { "/" } else { &self.base }
    }
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

/// A whole page of the desk: its style sheet and script, then `body`.
fn page(site: &Site, title: &str, body: Markup) -> Markup {
    let head = html! {
        link rel="stylesheet" href=(site.asset("desk.css"));
        script src=(site.asset("desk.js")) defer {}
    };
    crate::html::document(title, head, body)
}

/// A page that says one thing (a refusal, an error), with a way back.
pub(crate) fn message(site: &Site, title: &str, text: &str) -> Markup {
    let body = html! {
        main class="message" {
            h1 { (title) }
            p { (text) }
            p { a href=(site.queue()) { "Back to the queue" } }
        }
    };
    page(site, title, body)
}

/// The page of a document the journal has but the desk was not given.
pub(crate) fn missing_document(site: &Site, id: &str) -> Markup {
    message(
        site,
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
    pub site: &'a Site,
    pub waiting: &'a [Waiting],
    pub reviewed: u64,
    pub rejected: u64,
    pub filters: &'a Filters,
    pub known: &'a BTreeMap<String, Document>,
}

impl QueuePage<'_> {
    pub fn render(&self) -> Markup {
        let (site, filters) = (self.site, self.filters);
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut fields: BTreeMap<String, usize> = BTreeMap::new();
        let mut prints: BTreeMap<String, usize> = BTreeMap::new();
        for entry in self.waiting {
            *reasons.entry(entry.escalation.reason.as_str().to_string()).or_default() += 1;
            for field in entry.escalation.partial.failed.keys() {
                *fields.entry(field.clone()).or_default() += 1;
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
        let body = html! {
            main class="queue" {
                h1 { "Review desk" }
                p class="counts" {
                    strong id="waiting" { (self.waiting.len()) } " waiting · "
                    span id="reviewed" { (self.reviewed) } " reviewed · "
                    span id="rejected" { (self.rejected) } " rejected"
                }
                @for (said, id) in [("fix", &filters.recorded), ("rejection", &filters.rejected)] {
                    @if !id.is_empty() {
                        p class="notice" { "Recorded the " (said) " of document " (id) "." }
                    }
                }
                form class="filters" method="get" action=(site.queue()) {
                    (select("reason", "Reason", &reasons, &filters.reason))
                    (select("field", "Failing field", &fields, &filters.field))
                    (select("fingerprint", "Violation", &prints, &filters.fingerprint))
                    button type="submit" { "Filter" } " " a href=(site.queue()) { "Clear" }
                }
                p class="muted" { "Showing " span id="shown" { (shown.len()) } " of " (self.waiting.len()) "." }
                @if shown.is_empty() {
                    p class="empty" { "Nothing waits for a reviewer here." }
                } @else {
                    table class="queue" {
                        thead { tr { th { "Document" } th { "Reason" } th { "Failing fields" } th { "Fix hint" } } }
                        tbody {
                            @for entry in shown.iter().take(QUEUE_ROWS) { (self.row(entry)) }
                        }
                    }
                    @if shown.len() > QUEUE_ROWS {
                        p class="more muted" {
                            "and " (shown.len() - QUEUE_ROWS)
                            " more, not shown: filter by reason, field or violation to see them."
                        }
                    }
                }
                p class="keys muted" {
                    "Keys on a document's page: " kbd { "n" } " next, " kbd { "p" } " previous, "
                    kbd { "Ctrl" } "+" kbd { "Enter" } " record the fix."
                }
            }
        };
        page(site, "Review desk", body)
    }

    /// One waiting document's row.
    fn row(&self, entry: &Waiting) -> Markup {
        let escalation = &entry.escalation;
        let hint = escalation.fix_hint.as_deref().unwrap_or("");
        html! {
            tr {
                td {
                    a class="document" data-document-id=(entry.id) href=(self.site.document(&entry.id, "")) { (entry.id) }
                    @if let Some(title) = self.known.get(&entry.id).and_then(Document::title) {
                        br; small { (title) }
                    }
                    @if !self.known.contains_key(&entry.id) {
                        br; small class="problem" { "not given to the desk" }
                    }
                }
                td { (escalation.reason.as_str()) br; small { (escalation.attempts()) " attempt(s)" } }
                td {
                    ul class="fields" {
                        @for (field, messages) in &escalation.partial.failed {
                            @let first = messages.as_array().and_then(|m| m.first()).and_then(Value::as_str);
                            li { code { (field) } ": " (shorten(first.unwrap_or("absent"), 160)) }
                        }
                    }
                }
                td class="hint" { (shorten(hint, QUEUE_HINT_CHARS)) }
            }
        }
    }
}

/// A `<select>` of one filter: every value with its count, `chosen` selected.
fn select(name: &str, label: &str, options: &BTreeMap<String, usize>, chosen: &str) -> Markup {
    html! {
        label {
            (label) " "
            select name=(name) {
                option value="" { "any" }
                @for (option, count) in options {
                    option value=(option) selected[option == chosen] { (shorten(option, 100)) " (" (count) ")" }
                }
            }
        }
    }
}

/// A document's page: the source beside the review.
pub(crate) struct DocumentPage<'a> {
    pub site: &'a Site,
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

/// Every `{ "value", "quote" }` object in `values` (the shape of a `Sourced`),
/// each found in `text` as the validator places its sources (an identical
/// quote at the same place of a later item at the next occurrence).
fn quotes_in(values: &Map<String, Value>, text: Option<&str>) -> Vec<Quote> {
    fn walk(value: &Value, path: FieldPath, field: &str, out: &mut Vec<(FieldPath, Quote)>) {
        match value {
            Value::Object(object) => {
                if let (Some(Value::String(quote)), true, 2) =
                    (object.get("quote"), object.contains_key("value"), object.len())
                {
                    let shown = path.to_string();
                    let found =
                        Quote { path: shown, field: field.to_string(), quote: quote.clone(), span: None };
                    out.push((path, found));
                    return;
                }
                for (key, inner) in object {
                    walk(inner, path.clone().key(key.clone()), field, out);
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, path.clone().index(i), field, out);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for (name, value) in values {
        walk(value, FieldPath::root().key(name.clone()), name, &mut found);
    }
    let spans = match text {
        Some(text) => {
            let quotes: Vec<(FieldPath, &str)> =
                found.iter().map(|(path, quote)| (path.clone(), quote.quote.as_str())).collect();
            locate_quotes(text, &quotes)
        }
        None => vec![None; found.len()],
    };
    found.into_iter().zip(spans).map(|((_, quote), span)| Quote { span, ..quote }).collect()
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
    pub fn render(&self) -> Markup {
        let (site, id) = (self.site, self.id);
        let escalation = &self.entry.escalation;
        let (previous, next, place, of) = self.neighbours;
        let text = self.document.and_then(Document::searchable_text);
        let quotes = quotes_in(&self.values, text);
        let body = html! {
            nav class="bar" {
                a href=(site.queue()) id="queue" { "Queue" }
                " " span class="muted" { "document " (place) " of " (of) }
                @if let Some(previous) = previous {
                    " " a rel="prev" href=(site.document(previous, "")) { "← Previous" }
                }
                @if let Some(next) = next {
                    " " a rel="next" href=(site.document(next, "")) { "Next →" }
                }
                " " span class="keys muted" {
                    kbd { "p" } " previous · " kbd { "n" } " next · " kbd { "Ctrl" } "+" kbd { "Enter" } " record"
                }
            }
            main data-document-id=(id) {
                h1 {
                    "Document " code { (id) }
                    @if let Some(title) = self.document.and_then(Document::title) { " " small { (title) } }
                }
                @if let Some(notice) = &self.notice { p class="notice" { (notice) } }
                @if let Some(problem) = &self.problem { p class="problem" role="alert" { (problem) } }
                @if self.violations.is_some() {
                    p class="problem" role="alert" {
                        "The fix does not pass the checks: nothing was recorded. The violations are shown beside \
                         their fields."
                    }
                }
                p class="reason" {
                    "Escalated: " strong { (escalation.reason.as_str()) } " after " (escalation.attempts()) " attempt(s)."
                }
                div class="columns" {
                    (self.source(text, &quotes))
                    section class="review" {
                        (self.failed())
                        (self.fix_form(&quotes))
                        (self.trusted())
                        (self.reject_form())
                        (self.history())
                    }
                }
            }
        };
        page(site, &format!("Review {id}"), body)
    }

    /// The document: its PDF where there is one, its text with every found quote marked.
    fn source(&self, text: Option<&str>, quotes: &[Quote]) -> Markup {
        let Some(document) = self.document else {
            return html! {
                section class="source" {
                    h2 { "Document" }
                    p class="problem" {
                        "The desk was not given this document: its text cannot be shown and a fix cannot be \
                         checked against it. Start the desk with the run's documents."
                    }
                }
            };
        };
        let pdf = matches!(document.content(), Content::Pdf { .. });
        html! {
            section class="source" {
                h2 { "Document" }
                @if pdf {
                    iframe class="pdf" src=(self.site.document(self.id, "pdf"))
                        title={ "The PDF of document " (self.id) } {}
                    @if text.is_some() {
                        h3 { "Text layer" }
                    } @else {
                        p class="note" {
                            "This PDF has no text layer: its quotes cannot be checked against the document, so \
                             they are shown unverified (a fix is not refused for them). Read the values off the PDF."
                        }
                    }
                }
                @if let Some(text) = text { (marked_text(text, quotes)) }
                @if !quotes.is_empty() {
                    h3 { "Quotes" }
                    ul class="quotes" {
                        @for (i, quote) in quotes.iter().enumerate() {
                            @let (class, said) = match (&quote.span, text) {
                                (_, None) => ("unverified", "unverified: no text to check it against".to_string()),
                                (Some(span), Some(text)) => ("found", match Pages::of(text) {
                                    Some(pages) => format!("found on page {} at bytes {}–{}", pages.page_at(span.start), span.start, span.end),
                                    None => format!("found at bytes {}–{}", span.start, span.end),
                                }),
                                (None, Some(_)) => ("missing", "not found in the document".to_string()),
                            };
                            li id={ "quote-" (i) } class=(class) {
                                a href={ "#field-" (quote.field) } { code { (quote.path) } }
                                ": “" (shorten(&quote.quote, 400)) "” " small { (said) }
                                @if quote.span.is_some() && text.is_some() {
                                    " " a href={ "#mark-" (i) } { "show" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The failed fields with their messages, and the fix hint.
    fn failed(&self) -> Markup {
        let escalation = &self.entry.escalation;
        html! {
            h2 { "What failed" }
            dl class="failed" {
                @for (field, messages) in &escalation.partial.failed {
                    @let messages: Vec<&str> =
                        messages.as_array().map(|m| m.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
                    dt { a href={ "#field-" (field) } { code { (field) } } }
                    @if messages.is_empty() { dd { "absent from the output" } }
                    @for message in messages { dd { (message) } }
                }
            }
            @if let Some(hint) = &escalation.fix_hint {
                p class="hint" { strong { "Fix hint:" } " " (hint) }
            }
        }
    }

    /// The held fields, read-only: what the reviewer can trust as it is.
    fn trusted(&self) -> Markup {
        let held = &self.entry.escalation.partial.held;
        html! {
            @if !held.is_empty() {
                h3 { "Trusted fields" }
                p class="muted" { "They passed every check that ran." }
                dl class="held" {
                    @for (field, value) in held {
                        // A `Sourced` value shows as its value and its quote.
                        @let shown = match (value.get("value"), value.get("quote").and_then(Value::as_str)) {
                            (Some(given), Some(quote)) => format!("{} (quote “{quote}”)", form::shown(given)),
                            _ => form::shown(value),
                        };
                        dt { code { (field) } } dd { (shorten(&shown, 400)) }
                    }
                }
            }
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

    fn fix_form(&self, quotes: &[Quote]) -> Markup {
        let by_field = self.violations_by_field();
        let held = &self.entry.escalation.partial.held;
        let (trusted, open): (Vec<&Field>, Vec<&Field>) =
            self.fields.iter().partition(|f| held.contains_key(&f.name));
        let refused_here = trusted.iter().any(|f| by_field.contains_key(&f.name));
        html! {
            h2 { "Fix" }
            form id="fix" method="post" action=(self.site.document(self.id, "fix")) {
                input type="hidden" name="csrf" value=(self.csrf);
                @if let Some(general) = by_field.get("") {
                    ul class="violations" { @for violation in general { (violation_item(violation)) } }
                }
                @for field in open { (self.field(field, "failed", &by_field, quotes)) }
                @if !trusted.is_empty() {
                    details class="trusted" open[refused_here] {
                        summary { "Edit trusted fields (" (trusted.len()) ")" }
                        @for field in &trusted { (self.field(field, "held", &by_field, quotes)) }
                    }
                }
                (reviewer_input("fix-reviewer", self.reviewer))
                p {
                    button type="submit" id="record" { "Record fix" } " "
                    small class="muted" {
                        "The fix is checked by every layer first; nothing is recorded unless it passes."
                    }
                }
            }
        }
    }

    /// One field's block: label, input(s), its violations beside it.
    fn field(
        &self,
        field: &Field,
        class: &str,
        by_field: &BTreeMap<String, Vec<&Violation>>,
        quotes: &[Quote],
    ) -> Markup {
        let name = &field.name;
        let refused = by_field.get(name);
        let value = self.values.get(name).unwrap_or(&Value::Null);
        html! {
            div class={ "field " (class) @if refused.is_some() { " refused" } } id={ "field-" (name) } {
                label class="name" for={ "input-" (name) } { code { (name) } }
                (input(&field.input, name, value, field.nullable, true))
                @for (i, quote) in quotes.iter().enumerate() {
                    @if quote.field == *name && quote.span.is_some() {
                        a class="see" href={ "#mark-" (i) } { "see quote in the document" } " "
                    }
                }
                @if let Some(refused) = refused {
                    ul class="violations" { @for violation in refused { (violation_item(violation)) } }
                }
            }
        }
    }

    fn reject_form(&self) -> Markup {
        html! {
            h2 { "Reject" }
            form id="reject" method="post" action=(self.site.document(self.id, "reject")) {
                input type="hidden" name="csrf" value=(self.csrf);
                p class="muted" {
                    "When the source cannot be used (unreadable, not what the run extracts): no value is \
                     recorded, only the rejection and its reason."
                }
                label for="reason" { "Reason" }
                textarea id="reason" name="reason" rows="2" required { (self.reason) }
                (reviewer_input("reject-reviewer", self.reviewer))
                p { button type="submit" class="secondary" { "Reject document" } }
            }
        }
    }

    /// The last output as JSON and the attempts' violations, folded.
    fn history(&self) -> Markup {
        let escalation = &self.entry.escalation;
        let last = escalation
            .last_output
            .as_ref()
            .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
            .unwrap_or_else(|| "(nothing)".into());
        html! {
            details { summary { "The model's last output" } pre class="json" { (last) } }
            details {
                summary { "Every attempt's violations" }
                ol class="chain" {
                    @for attempt in &escalation.error_chain {
                        li {
                            "attempt " (attempt.attempt)
                            ul {
                                @for violation in attempt.violations.iter() {
                                    li { code { (violation.path.to_string()) } " " (violation.message) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn violation_item(violation: &Violation) -> Markup {
    let path = violation.path.to_string();
    html! {
        li class="violation" data-code=(violation.code.as_str()) {
            code { @if path.is_empty() { "(whole output)" } @else { (path) } } " " (violation.message)
        }
    }
}

fn reviewer_input(id: &str, reviewer: &str) -> Markup {
    html! {
        label for=(id) { "Reviewer" } " "
        input id=(id) name="reviewer" required maxlength="200" autocomplete="name" value=(reviewer);
    }
}

/// The input(s) of `input` named `path`, showing `value`; `top`: a
/// top-level field (its input gets the label's id).
fn input(input: &Input, path: &str, value: &Value, nullable: bool, top: bool) -> Markup {
    html! {
        (one_input(input, path, value, top))
        @if nullable && top {
            " " label class="null" { input type="checkbox" name={ (path) "~null" }; " null" }
        }
    }
}

/// The input(s) of `field`, a member of the object `of`, named `path`:
/// an object's member, or a row's cell.
fn member(field: &Field, path: &str, of: &Value) -> Markup {
    input(&field.input, path, of.get(&field.name).unwrap_or(&Value::Null), field.nullable, false)
}

/// The input(s) of `input` alone; `labelled`: it gets the id the field's label names.
fn one_input(input: &Input, path: &str, value: &Value, labelled: bool) -> Markup {
    let id = labelled.then(|| format!("input-{path}"));
    match input {
        Input::Text => {
            let shown = form::shown(value);
            if shown.len() > 80 || shown.contains('\n') {
                html! { textarea name=(path) id=[id] rows="3" { (shown) } }
            } else {
                html! { input type="text" name=(path) id=[id] value=(shown); }
            }
        }
        Input::Number { integer } => {
            // A value that is not a number (the model wrote text) stays visible as text.
            let number = value.is_number() || value.is_null();
            let (kind, step) = match (number, integer) {
                (true, true) => ("number", Some("1")),
                (true, false) => ("number", Some("any")),
                (false, _) => ("text", None),
            };
            html! {
                input type=(kind) inputmode="decimal" step=[step] name=(path) id=[id] value=(form::shown(value));
            }
        }
        Input::Date => {
            let shown = form::shown(value);
            let is_date = shown.len() == 10 && chrono::NaiveDate::parse_from_str(&shown, "%Y-%m-%d").is_ok();
            let kind = if is_date || shown.is_empty() { "date" } else { "text" };
            html! { input type=(kind) name=(path) id=[id] value=(shown); }
        }
        Input::Boolean => {
            let given = value.as_bool().map(|b| b.to_string());
            html! {
                select name=(path) id=[id] {
                    option value="" {}
                    @for option in ["true", "false"] {
                        option value=(option) selected[given.as_deref() == Some(option)] { (option) }
                    }
                }
            }
        }
        Input::Choice(choices) => {
            let matched = choices.iter().any(|choice| form::same(choice, value));
            html! {
                select name=(path) id=[id] {
                    option value="" {}
                    @for choice in choices {
                        option value=(choice.to_string()) selected[form::same(choice, value)] { (form::shown(choice)) }
                    }
                    @if !matched && !value.is_null() {
                        // What the model wrote, though no choice: kept so the reviewer sees it and the checks name it.
                        option value=(value.to_string()) selected { (form::shown(value)) " (not a choice)" }
                    }
                }
            }
        }
        Input::Sourced(inner) => {
            let given = value.get("value").unwrap_or(&Value::Null);
            let quote = value.get("quote").and_then(Value::as_str).unwrap_or_default();
            html! {
                span class="sourced" {
                    span class="label" { "value" } " "
                    (one_input(inner, path, given, labelled))
                    " " span class="label" { "quote" } " "
                    input type="text" class="quote" name={ (path) ".quote" } value=(quote);
                }
            }
        }
        Input::Object(fields) => html! {
            fieldset class="object" {
                @for field in fields {
                    label {
                        span class="label" { (field.name) } " "
                        (member(field, &format!("{path}.{}", field.name), value))
                    }
                    " "
                }
            }
        },
        Input::Rows(columns) => {
            let rows = value.as_array().map(Vec::as_slice).unwrap_or_default();
            html! {
                input type="hidden" name={ (path) "~rows" } value="";
                table class="rows" {
                    thead { tr { @for column in columns { th { (column.name) } } th { "remove" } } }
                    tbody {
                        @for i in 0..rows.len() + BLANK_ROWS {
                            @let row = rows.get(i).unwrap_or(&Value::Null);
                            tr class=[(i >= rows.len()).then_some("blank")] {
                                @for column in columns {
                                    td {
                                        (member(column, &format!("{path}[{i}].{}", column.name), row))
                                    }
                                }
                                @if i < rows.len() {
                                    td { input type="checkbox" name={ (path) "[" (i) "]~remove" } title="remove this row"; }
                                } @else {
                                    td class="muted" { "new" }
                                }
                            }
                        }
                    }
                }
            }
        }
        Input::List(item) => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
            html! {
                input type="hidden" name={ (path) "~rows" } value="";
                ol class="list" {
                    @for i in 0..items.len() + BLANK_ROWS {
                        li {
                            (self::input(item, &format!("{path}[{i}]"), items.get(i).unwrap_or(&Value::Null), true, false))
                            @if i < items.len() {
                                " " label { input type="checkbox" name={ (path) "[" (i) "]~remove" }; " remove" }
                            }
                        }
                    }
                }
            }
        }
        Input::Json => {
            let shown = if value.is_null() {
                String::new()
            } else {
                serde_json::to_string_pretty(value).unwrap_or_default()
            };
            html! { textarea class="json" name=(path) id=[id] rows="3" { (shown) } }
        }
    }
}

/// A piece of the document's text: plain, or a found quote's span.
enum Piece<'t> {
    Plain(&'t str),
    /// The span of quote number `index`.
    Marked {
        index: usize,
        quote: &'t Quote,
        text: &'t str,
    },
}

/// The document's text in a `<pre>`, each found quote's span in a `<mark>`
/// linked to its field (overlapping spans: the first one marks).
fn marked_text(text: &str, quotes: &[Quote]) -> Markup {
    let mut spans: Vec<(usize, &Quote)> =
        quotes.iter().enumerate().filter(|(_, q)| q.span.is_some()).collect();
    spans.sort_by_key(|(_, q)| q.span.as_ref().map(|s| s.start));
    let mut pieces = Vec::new();
    let mut at = 0;
    for (index, quote) in spans {
        let Some(span) = quote.span.clone() else { continue };
        if span.start < at || !text.is_char_boundary(span.start) || !text.is_char_boundary(span.end) {
            continue;
        }
        pieces.push(Piece::Plain(&text[at..span.start]));
        pieces.push(Piece::Marked { index, quote, text: &text[span.clone()] });
        at = span.end;
    }
    pieces.push(Piece::Plain(&text[at..]));
    html! {
        pre class="text" {
            @for piece in pieces {
                @match piece {
                    Piece::Plain(plain) => (plain),
                    Piece::Marked { index, quote, text } => {
                        a class="mark" id={ "mark-" (index) } href={ "#field-" (quote.field) } title=(quote.path) {
                            mark { (text) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_lines_quoted_by_two_items_are_marked_each_on_its_own_page() {
        let text = "Fee 1.00\nRent 9.00\n\u{c}Fee 1.00\n";
        let quoted = |quote: &str| serde_json::json!({"value": quote, "quote": quote});
        let values =
            serde_json::json!({"fees": [{"line": quoted("Fee 1.00")}, {"line": quoted("Fee 1.00")}]});
        let quotes = quotes_in(values.as_object().unwrap(), Some(text));
        let spans: Vec<_> = quotes.iter().map(|q| (q.path.as_str(), q.span.clone())).collect();
        assert_eq!(
            spans,
            [("fees[0].line", Some(0..8)), ("fees[1].line", Some(20..28))],
            "the second after the form feed"
        );
    }

    #[test]
    fn a_redirect_stays_on_the_desk_wherever_it_is_mounted() {
        for (base, queue) in [("", "/"), ("/review", "/review"), ("/review/", "/review")] {
            let site = Site::at(base);
            let own = format!("{}/document/inv-001", base.trim_end_matches('/'));
            assert_eq!(site.redirect("/document/inv-001"), own);
            assert_eq!(site.redirect("/"), queue);
            for elsewhere in
                ["//evil.example/", "/\\evil.example/", "", "evil.example", "https://evil.example/"]
            {
                assert_eq!(site.redirect(elsewhere), queue, "{base:?} {elsewhere:?}");
            }
        }
    }

    #[test]
    fn document_addresses_encode_the_id_and_keep_the_base() {
        let site = Site::at("/review");
        assert_eq!(site.document("a/b c", ""), "/review/document/a%2Fb%20c");
        assert_eq!(site.document("inv-1", "fix"), "/review/document/inv-1/fix");
        assert_eq!(site.document("..", "pdf"), "/review/by-id/pdf?id=..");
        assert_eq!(site.asset("desk.css"), "/review/desk.css");
        assert_eq!(Site::at("").cookie_path(), "/");
        assert_eq!(site.cookie_path(), "/review");
        assert_eq!(site.queue_with("recorded", "a&b"), "/review?recorded=a%26b");
    }
}
