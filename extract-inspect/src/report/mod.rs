//! The run report: [`Report`], one self-contained HTML page over [`Stats`]
//! and a run's escalations.
//!
//! The page is a `String`: this layer touches no file, so the driver that
//! owns the run writes it where it likes. It is one file, with its CSS
//! (`report.css`, included at build time) inline and its charts drawn as
//! inline SVG by [`charts`], and no script, no font, no image and no link to
//! fetch: it opens offline.
//!
//! The page is written with maud: its templates are Rust, checked by the
//! compiler, and every value spliced into them (document ids, messages,
//! field names, fix hints, quotes: text a model or a caller wrote) is
//! escaped unless it is marked `PreEscaped`, which only the style sheet is.
//! maud over askama because both pages here (this one and the desk's) are
//! built from many small recursive pieces (a form input per schema node, a
//! bar per fingerprint) that are plain functions in maud and would be
//! macros or includes in a template language.

mod charts;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use maud::{Markup, PreEscaped, html};

use super::eval::{Comparison, Scorecard};
use crate::run::percent;
use crate::vocabulary::text::shorten;
use crate::{Escalation, Outcome, Review, ReviewDecision, Source, Stats};

/// The most characters of a quote the page shows (its span locates the rest).
const QUOTE_CHARS: usize = 400;
/// The most rows a table shows (fingerprints, escalations, quotes), the
/// rest summed up in one last row: a model that invents 20,000 keys makes
/// 20,000 fingerprints, and the page stays one a browser opens.
const TABLE_ROWS: usize = 100;
/// The most failing fields, and quotes, one escalation's row shows.
const ROW_ITEMS: usize = 12;
/// The most characters of a fix hint one escalation's row shows.
const HINT_CHARS: usize = 2_000;
/// The most messages one failing field shows.
const FIELD_MESSAGES: usize = 3;
/// The most characters of a field name or a fingerprint the page shows
/// (a model chooses keys, and a key can be any length).
const NAME_CHARS: usize = 160;

/// A self-contained HTML report of a run: one page, inline CSS and SVG, no
/// script and nothing to fetch, so it can be mailed, archived and opened
/// offline.
///
/// It shows, from the [`Stats`]: outcomes by status and reason, the
/// attempts histogram, a Pareto chart of violation fingerprints (bars by
/// count, the cumulative share as a line) with the dominant fingerprint and
/// its fix called out, and tokens by attempt. From the escalations it is
/// given: a table of document id, reason, attempts, failing fields (the keys
/// of [`Partial::failed`](crate::Partial::failed), with their messages) and
/// fix hint. Sources given for a document (each `Sourced` value's quote and
/// its byte span) appear beside its escalation, or in a table of their own
/// for documents that were valid. [`Stats`]' `Display` shows the same
/// figures as text.
///
/// Each table shows its first 100 rows (`TABLE_ROWS`) (fingerprints most
/// frequent first, escalations and quotes in the order given) and says how
/// many more there are; an escalation's row shows its first 12 (`ROW_ITEMS`)
/// failing fields and quotes, so the page stays small however many keys a
/// model invents. The packets and [`Stats`] hold everything.
///
/// `Display` writes the page; [`html`](Report::html) returns it.
///
/// ```
/// use extract::{Extractable, Extractor, Outcome, Retries, Stats, testing::Scripted};
/// use extract::report::Report;
/// use serde_json::json;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
/// struct Expense { employee: String, amount: f64 }
///
/// let mut stats = Stats::new();
/// let mut outcomes = Vec::new();
/// for (id, reply) in [("r-1", json!({"employee": "Ann", "amount": 4.5})), ("r-2", json!({"employee": "Bo"}))] {
///     let model = Scripted::new([reply.clone(), reply]);
///     let outcome = Extractor::new(model).retries(Retries::new(1)?).extract_blocking::<Expense>("receipt")?;
///     stats.record(&outcome);
///     outcomes.push((id, outcome));
/// }
/// let mut report = Report::new(&stats).title("Receipts, March");
/// for (id, outcome) in &outcomes {
///     report = report.outcome(id, outcome);
/// }
/// let page = report.html();
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains("r-2") && !page.contains("<script"));
/// // std::fs::write("report.html", page)?;  // the driver decides where
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Report<'a> {
    stats: &'a Stats,
    title: String,
    escalations: Vec<(&'a str, &'a Escalation)>,
    sources: Vec<(&'a str, &'a [Source])>,
    scorecards: Vec<&'a Scorecard>,
    comparisons: Vec<&'a Comparison>,
    reviews: &'a [Review],
}

impl<'a> Report<'a> {
    /// A report over `stats`, titled "Extraction run report", with no escalations listed.
    pub fn new(stats: &'a Stats) -> Report<'a> {
        Report {
            stats,
            title: "Extraction run report".to_string(),
            escalations: Vec::new(),
            sources: Vec::new(),
            scorecards: Vec::new(),
            comparisons: Vec::new(),
            reviews: &[],
        }
    }

    /// Adds an evaluation against labelled documents ([`eval`](crate::eval)):
    /// its counts per document and per field, in a section of their own.
    pub fn evaluation(mut self, scorecard: &'a Scorecard) -> Report<'a> {
        self.scorecards.push(scorecard);
        self
    }

    /// Adds two configurations side by side ([`Comparison`]) to the
    /// evaluation section.
    pub fn comparison(mut self, comparison: &'a Comparison) -> Report<'a> {
        self.comparisons.push(comparison);
        self
    }

    /// Adds a section of reviewer corrections (the journal's
    /// [`reviews`](crate::Journal::reviews), or a summary's): which fields
    /// people fix most, which violations they overrode (by fingerprint), and
    /// which documents they rejected, with why. Patterns there say what to
    /// change in the prompt or the schema.
    pub fn reviews(mut self, reviews: &'a [Review]) -> Report<'a> {
        self.reviews = reviews;
        self
    }

    /// The page's title and heading.
    pub fn title(mut self, title: impl Into<String>) -> Report<'a> {
        self.title = title.into();
        self
    }

    /// Lists one escalation, under its document's id (rows keep the order given).
    pub fn escalation(mut self, document_id: &'a str, escalation: &'a Escalation) -> Report<'a> {
        self.escalations.push((document_id, escalation));
        self
    }

    /// Lists escalations, each under its document's id.
    pub fn escalations<I>(mut self, escalations: I) -> Report<'a>
    where
        I: IntoIterator<Item = (&'a str, &'a Escalation)>,
    {
        self.escalations.extend(escalations);
        self
    }

    /// Shows the sources of one document (each quote with its span): beside
    /// its escalation if it has one listed, otherwise in the table of quotes.
    /// An empty list is ignored.
    pub fn sources(mut self, document_id: &'a str, sources: &'a [Source]) -> Report<'a> {
        if !sources.is_empty() {
            self.sources.push((document_id, sources));
        }
        self
    }

    /// Adds what one outcome contributes: an escalation is listed, a valid
    /// outcome's [`sources`](crate::Validated::sources) are shown. It does
    /// not [`record`](Stats::record) the outcome: the figures are the `Stats`'.
    pub fn outcome<T>(self, document_id: &'a str, outcome: &'a Outcome<T>) -> Report<'a> {
        match outcome {
            Outcome::Valid(v) => self.sources(document_id, v.sources()),
            Outcome::Escalated(e) => self.escalation(document_id, e),
        }
    }

    /// The page, as one HTML document.
    pub fn html(&self) -> String {
        self.page().into_string()
    }

    /// Every document's sources, by id (one pass, where a lookup per row
    /// would be quadratic in a large run).
    fn sources_by_id(&self) -> BTreeMap<&'a str, Vec<&'a Source>> {
        let mut by_id: BTreeMap<&str, Vec<&Source>> = BTreeMap::new();
        for (id, sources) in &self.sources {
            by_id.entry(id).or_default().extend(sources.iter());
        }
        by_id
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.html())
    }
}

/// The report's style sheet, written inline into the page.
const STYLE: &str = include_str!("report.css");

impl Report<'_> {
    fn page(&self) -> Markup {
        let body = html! {
            main {
                h1 { (self.title) }
                (summary(self.stats))
                (models(self.stats))
                (charts::outcomes(self.stats))
                (charts::attempts(self.stats))
                (charts::pareto(self.stats))
                (charts::usage(self.stats))
                (self.escalation_table())
                (self.quote_table())
                (self.corrections())
                (self.evaluation_section())
                footer {
                    "Written by " code { "extract::report::Report" }
                    ": one file, inline CSS and SVG, no script, nothing fetched."
                }
            }
        };
        crate::html::document(&self.title, html! { style { (PreEscaped(STYLE)) } }, body)
    }

    /// Each scorecard's counts, then each comparison's paired figures.
    fn evaluation_section(&self) -> Markup {
        if self.scorecards.is_empty() && self.comparisons.is_empty() {
            return html! {};
        }
        html! {
            section id="evaluation" {
                h2 { "Evaluation against labelled documents" }
                @for card in &self.scorecards { (scorecard(card)) }
                @for comparison in &self.comparisons { (paired(comparison)) }
            }
        }
    }

    fn escalation_table(&self) -> Markup {
        let listed = self.escalations.len();
        let escalated = self.stats.escalated();
        let sources = self.sources_by_id();
        let quotes = self.escalations.iter().any(|(id, _)| sources.contains_key(id));
        html! {
            section id="escalations" {
                h2 { "Escalations" }
                @if listed == 0 {
                    p class="note" {
                        @if escalated == 0 { "No escalations." } @else { "No escalation was given to the report." }
                    }
                } @else {
                    @if listed as u64 != escalated {
                        p class="note" { (listed) " escalation(s) listed; the statistics count " (escalated) "." }
                    }
                    table class="escalations" {
                        thead {
                            tr {
                                th class="col-document" { "document" }
                                th class="col-reason" { "reason" }
                                th class="num col-attempts" { "attempts" }
                                th class="col-fields" { "failing fields" }
                                th { "fix hint" }
                                @if quotes { th class="col-quotes" { "quotes" } }
                            }
                        }
                        tbody {
                            @for (id, escalation) in self.escalations.iter().take(TABLE_ROWS) {
                                tr data-document=(id) {
                                    td { code { (id) } }
                                    td { span class={ "reason " (escalation.reason) } { (escalation.reason) } }
                                    td class="num" {
                                        (escalation.attempts())
                                        @if escalation.rung > 0 && let Some(model) = &escalation.model {
                                            br; span class="muted" { "last: " (model) }
                                        }
                                    }
                                    td { (failing_fields(escalation)) }
                                    td {
                                        @match &escalation.fix_hint {
                                            Some(hint) => (shorten(hint, HINT_CHARS)),
                                            None => span class="muted" { "none" },
                                        }
                                    }
                                    @if quotes {
                                        td { (source_list(sources.get(id).map(Vec::as_slice).unwrap_or_default())) }
                                    }
                                }
                            }
                            (more_rows(listed.saturating_sub(TABLE_ROWS), "escalation", 5 + usize::from(quotes)))
                        }
                    }
                }
            }
        }
    }

    fn quote_table(&self) -> Markup {
        let escalated: BTreeSet<&str> = self.escalations.iter().map(|(id, _)| *id).collect();
        let valid: Vec<&(&str, &[Source])> =
            self.sources.iter().filter(|(id, _)| !escalated.contains(id)).collect();
        if valid.is_empty() {
            return html! {};
        }
        let quotes = valid.iter().map(|(_, sources)| sources.len()).sum::<usize>();
        let shown = valid.iter().flat_map(|(id, sources)| sources.iter().map(move |source| (id, source)));
        html! {
            section id="quotes" {
                h2 { "Quotes of valid outcomes" }
                p class="note" { "Each " code { "Sourced" } " value's quote, with its byte span in the document's text." }
                table class="quotes" {
                    thead { tr { th { "document" } th { "field" } th { "quote" } th { "span" } } }
                    tbody {
                        @for (id, source) in shown.take(TABLE_ROWS) {
                            tr data-document=(id) {
                                td { code { (id) } }
                                td { code { (shorten(&source.path.to_string(), NAME_CHARS)) } }
                                td class="quote" { (shorten(&source.quote, QUOTE_CHARS)) }
                                td { (span(source)) }
                            }
                        }
                        (more_rows(quotes.saturating_sub(TABLE_ROWS), "quote", 4))
                    }
                }
            }
        }
    }

    /// The reviewers' corrections: fields fixed, violations overridden, documents rejected.
    fn corrections(&self) -> Markup {
        if self.reviews.is_empty() {
            return html! {};
        }
        let mut fields: BTreeMap<&str, (usize, BTreeSet<&str>)> = BTreeMap::new();
        let mut overridden: BTreeMap<&str, usize> = BTreeMap::new();
        let mut rejected = Vec::new();
        let mut fixes = 0;
        for review in self.reviews {
            match &review.decision {
                ReviewDecision::Fixed { after, overrode, .. } => {
                    fixes += 1;
                    for field in after.keys() {
                        let entry = fields.entry(field).or_default();
                        entry.0 += 1;
                        entry.1.insert(&review.document);
                    }
                    for print in overrode {
                        *overridden.entry(print).or_default() += 1;
                    }
                }
                ReviewDecision::Rejected { reason } => rejected.push((review, reason)),
                // A decision of a newer kind: this report does not show it yet.
                _ => {}
            }
        }
        let mut by_count: Vec<(&str, (usize, BTreeSet<&str>))> = fields.into_iter().collect();
        by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
        let mut prints: Vec<(&str, usize)> = overridden.into_iter().collect();
        prints.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        html! {
            section id="corrections" {
                h2 { "Reviewer corrections" }
                p class="note" {
                    @if fixes == 1 { "1 fix" } @else { (fixes) " fixes" }
                    " and " (crate::vocabulary::text::count(rejected.len(), "rejection"))
                    " by reviewers: fields fixed again and again, and violations overridden, point at the prompt \
                     or the schema."
                }
                h3 { "Fields people fixed" }
                table class="corrections" {
                    thead { tr { th { "field" } th class="num" { "fixes" } th { "documents" } } }
                    tbody {
                        @for (field, (count, documents)) in by_count.iter().take(TABLE_ROWS) {
                            @let field = shorten(field, NAME_CHARS);
                            @let listed: Vec<String> =
                                documents.iter().take(ROW_ITEMS).map(|d| shorten(d, NAME_CHARS)).collect();
                            tr data-field=(field) {
                                td { code { (field) } }
                                td class="num" { (count) }
                                td { (listed.join(", ")) }
                            }
                        }
                        (more_rows(by_count.len().saturating_sub(TABLE_ROWS), "field", 3))
                    }
                }
                h3 { "Violations overridden" }
                table class="corrections" {
                    thead { tr { th { "fingerprint" } th class="num" { "fixes" } } }
                    tbody {
                        @for (print, count) in prints.iter().take(TABLE_ROWS) {
                            tr { td { code { (shorten(print, NAME_CHARS)) } } td class="num" { (count) } }
                        }
                        (more_rows(prints.len().saturating_sub(TABLE_ROWS), "fingerprint", 2))
                    }
                }
                h3 { "Documents rejected" }
                table class="corrections" {
                    thead { tr { th { "document" } th { "reviewer" } th { "when" } th { "reason" } } }
                    tbody {
                        @for (review, reason) in rejected.iter().take(TABLE_ROWS) {
                            tr data-document=(review.document) {
                                td { code { (review.document) } }
                                td { (review.reviewer.as_deref().unwrap_or("")) }
                                td { (review.at.as_deref().unwrap_or("")) }
                                td { (shorten(reason, HINT_CHARS)) }
                            }
                        }
                        @if rejected.is_empty() { tr { td colspan="4" class="muted" { "none" } } }
                        (more_rows(rejected.len().saturating_sub(TABLE_ROWS), "rejection", 4))
                    }
                }
            }
        }
    }
}

/// One scorecard's counts: the documents, then each field.
fn scorecard(card: &Scorecard) -> Markup {
    let rows = std::iter::once(("documents", &card.documents))
        .chain(card.fields.iter().map(|(name, counts)| (name.as_str(), counts)));
    html! {
        h3 { (card.label) }
        p class="note" {
            (card.cases.len()) " cases, " (card.calls) " calls, " (card.usage.input_tokens) " input and "
            (card.usage.output_tokens) " output tokens"
            @if let Some(cost) = card.cost { ", cost " (format!("${cost:.4}")) }
            ". " (super::eval::ACCURACY) "."
        }
        table class="evaluation" {
            thead {
                tr {
                    th {} th class="num" { "correct" } th class="num" { "wrong accepted" }
                    th class="num" { "escalated, present" } th class="num" { "escalated, absent" }
                    th class="num" { "accuracy" }
                }
            }
            tbody {
                @for (name, c) in rows.take(TABLE_ROWS) {
                    tr {
                        td { code { (name) } }
                        td class="num" { (c.correct) }
                        td class={ "num" @if c.wrong_accepted > 0 { " wrong" } } { (c.wrong_accepted) }
                        td class="num" { (c.escalated_present) }
                        td class="num" { (c.escalated_absent) }
                        td class="num" { (format!("{:.1}%", c.accuracy() * 100.0)) }
                    }
                }
                (more_rows((card.fields.len() + 1).saturating_sub(TABLE_ROWS), "field", 6))
            }
        }
    }
}

/// Two configurations' paired figures: the documents, then each field.
fn paired(comparison: &Comparison) -> Markup {
    let rows = std::iter::once(("documents", &comparison.documents))
        .chain(comparison.fields.iter().map(|(name, paired)| (name.as_str(), paired)));
    html! {
        h3 { (comparison.b) " against " (comparison.a) }
        p class="note" {
            (comparison.cases) " cases; accuracy in %, difference in points, with its 95% interval (paired \
             bootstrap); " strong { "bold" } " where the interval leaves out zero."
        }
        table class="comparison" {
            thead {
                tr {
                    th {} th class="num" { "A" } th class="num" { "B" } th class="num" { "B − A" }
                    th class="num" { "better" } th class="num" { "worse" } th class="num" { "same" }
                    th class="num" { "95% interval" }
                }
            }
            tbody {
                @for (name, p) in rows.take(TABLE_ROWS) {
                    @let difference = format!("{:+.1}", p.difference * 100.0);
                    tr {
                        td { code { (name) } }
                        td class="num" { (format!("{:.1}", p.accuracy_a * 100.0)) }
                        td class="num" { (format!("{:.1}", p.accuracy_b * 100.0)) }
                        td class="num" { @if p.is_clear() { strong { (difference) } } @else { (difference) } }
                        td class="num" { (p.better) }
                        td class="num" { (p.worse) }
                        td class="num" { (p.same) }
                        td class="num" { (format!("[{:+.1}, {:+.1}]", p.interval[0] * 100.0, p.interval[1] * 100.0)) }
                    }
                }
                (more_rows((comparison.fields.len() + 1).saturating_sub(TABLE_ROWS), "field", 8))
            }
        }
    }
}

/// The keys of the escalation's `partial.failed`, each with its messages.
fn failing_fields(escalation: &Escalation) -> Markup {
    let failed = &escalation.partial.failed;
    if failed.is_empty() {
        return html! { span class="muted" { "none named" } };
    }
    html! {
        ul class="fields" {
            @for (field, messages) in failed.iter().take(ROW_ITEMS) {
                @let messages: Vec<&str> =
                    messages.as_array().into_iter().flatten().filter_map(|m| m.as_str()).collect();
                li {
                    code { (shorten(field, NAME_CHARS)) }
                    @if messages.is_empty() { " " span class="muted" { "absent" } }
                    @for message in messages.iter().take(FIELD_MESSAGES) { div class="message" { (message) } }
                    @if messages.len() > FIELD_MESSAGES {
                        div class="muted more" { "and " (messages.len() - FIELD_MESSAGES) " more" }
                    }
                }
            }
            @if failed.len() > ROW_ITEMS {
                li class="muted more" { "and " (failed.len() - ROW_ITEMS) " more fields" }
            }
        }
    }
}

fn source_list(sources: &[&Source]) -> Markup {
    html! {
        ul class="sources" {
            @for source in sources.iter().take(ROW_ITEMS) {
                li {
                    code { (shorten(&source.path.to_string(), NAME_CHARS)) } " "
                    q { (shorten(&source.quote, QUOTE_CHARS)) } " "
                    span class="span" { (span(source)) }
                }
            }
            @if sources.len() > ROW_ITEMS {
                li class="muted more" { "and " (sources.len() - ROW_ITEMS) " more quotes" }
            }
        }
    }
}

/// The last row of a table cut at [`TABLE_ROWS`]: how many `noun`s it leaves out.
fn more_rows(left_out: usize, noun: &str, columns: usize) -> Markup {
    html! {
        @if left_out > 0 {
            tr class="more" {
                td colspan=(columns) class="muted" {
                    "and " (crate::vocabulary::text::count(left_out, &format!("more {noun}"))) ", not shown"
                }
            }
        }
    }
}

fn span(source: &Source) -> String {
    match (&source.span, source.page) {
        (Some(range), Some(page)) => format!("page {page}, bytes {}..{}", range.start, range.end),
        (Some(range), None) => format!("bytes {}..{}", range.start, range.end),
        (None, _) => "unverified".to_string(),
    }
}

/// The headline figures, as cards.
/// What each model of a ladder answered, settled and cost (nothing for a
/// run of one model: the summary says it all).
fn models(stats: &Stats) -> Markup {
    let models = stats.by_model();
    if models.len() < 2 {
        return html! {};
    }
    html! {
        section id="models" {
            h2 { "By model" }
            table {
                thead {
                    tr {
                        th { "model" }
                        th class="num" { "attempts" }
                        th class="num" { "settled" }
                        th class="num" { "tokens" }
                        th class="num" { "cost" }
                    }
                }
                tbody {
                    @for (name, spend) in models {
                        tr data-model=(name) {
                            td { code { (name) } }
                            td class="num" { (spend.attempts) }
                            td class="num" { (spend.settled) }
                            td class="num" { (spend.usage.total()) }
                            td class="num" {
                                @if spend.unpriced == 0 { (format!("${:.4}", spend.cost)) } @else { "unknown" }
                            }
                        }
                    }
                }
            }
            p class="note" {
                "A document settled by a stronger model also paid for the attempts of the models before it."
            }
        }
    }
}

fn summary(stats: &Stats) -> Markup {
    let n = stats.extractions();
    let cards = [
        ("extractions", "extractions", n.to_string(), "documents".to_string()),
        ("valid", "valid", stats.valid().to_string(), format!("{} within budget", percent(stats.valid(), n))),
        (
            "first_attempt_valid",
            "valid at once",
            stats.first_attempt_valid().to_string(),
            format!("{} on the first attempt", percent(stats.first_attempt_valid(), n)),
        ),
        (
            "escalated",
            "escalated",
            stats.escalated().to_string(),
            format!("{} to a human", percent(stats.escalated(), n)),
        ),
        (
            "failed_attempts",
            "failed attempts",
            stats.failed_attempts().to_string(),
            "valid outcomes' too".to_string(),
        ),
        ("tokens", "tokens", stats.usage().total().to_string(), "every attempt".to_string()),
        match stats.priced_cost() {
            (cost, 0) => ("cost", "cost", format!("${cost:.4}"), "in US dollars".to_string()),
            (_, unpriced) if unpriced == n => {
                ("cost", "cost", "unknown".to_string(), "no price for the model".to_string())
            }
            (cost, unpriced) => {
                ("cost", "cost", format!("${cost:.4}"), format!("{unpriced} outcome(s) without a price"))
            }
        },
    ];
    html! {
        section id="summary" class="cards" {
            @for (name, label, value, note) in cards {
                div class="card" {
                    div class="label" { (label) }
                    div class="value" data-figure=(name) { (value) }
                    div class="note" { (note) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_report_renders_without_charts_to_draw() {
        let stats = Stats::new();
        let page = Report::new(&stats).html();
        assert!(page.contains("No outcome was recorded."));
        assert!(page.contains("No attempt failed."));
        assert!(page.contains("No escalations."));
        assert!(page.ends_with("</html>\n"));
    }
}
