//! The run report: [`Report`], one self-contained HTML page over [`Stats`]
//! and a run's escalations.
//!
//! The page is a `String`: this layer touches no file, so the driver that
//! owns the run writes it where it likes. It is one file, with its CSS
//! inline and its charts drawn as inline SVG by the code below, and no
//! script, no font, no image and no link to fetch: it opens offline. Every
//! text that came from a model or a caller (document ids, messages, field
//! names, fix hints, quotes) goes through [`escape`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::eval::{Comparison, Scorecard};
use crate::run::{ParetoRow, percent};
use crate::vocabulary::text::shorten;
use crate::{Escalation, Outcome, Reason, Review, ReviewDecision, Source, Stats, Usage};

/// The most bars the Pareto chart draws; the rest are summed into one last bar.
const PARETO_BARS: usize = 15;
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
        self.to_string()
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
        let title = escape(&self.title);
        writeln!(
            f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>"
        )?;
        summary(f, self.stats)?;
        outcomes(f, self.stats)?;
        attempts(f, self.stats)?;
        pareto(f, self.stats)?;
        usage(f, self.stats)?;
        self.escalation_table(f)?;
        self.quote_table(f)?;
        self.corrections(f)?;
        self.evaluation_section(f)?;
        f.write_str(
            "<footer>Written by <code>extract::report::Report</code>: one file, inline CSS and SVG, \
             no script, nothing fetched.</footer>\n</main>\n</body>\n</html>\n",
        )
    }
}

impl Report<'_> {
    /// Each scorecard's counts, then each comparison's paired figures.
    fn evaluation_section(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scorecards.is_empty() && self.comparisons.is_empty() {
            return Ok(());
        }
        f.write_str("<section id=\"evaluation\">\n<h2>Evaluation against labelled documents</h2>\n")?;
        for card in &self.scorecards {
            writeln!(
                f,
                "<h3>{label}</h3>\n<p class=\"note\">{cases} cases, {calls} calls, {input} input and {output} output tokens{cost}.</p>",
                label = escape(&card.label),
                cases = card.cases.len(),
                calls = card.calls,
                input = card.usage.input_tokens,
                output = card.usage.output_tokens,
                cost = card.cost.map(|c| format!(", cost {c:.4}")).unwrap_or_default(),
            )?;
            f.write_str(
                "<table class=\"evaluation\">\n<thead><tr><th></th><th class=\"num\">correct</th>\
                 <th class=\"num\">wrong accepted</th><th class=\"num\">escalated, present</th>\
                 <th class=\"num\">escalated, absent</th><th class=\"num\">accuracy</th></tr></thead>\n<tbody>\n",
            )?;
            let rows = std::iter::once(("documents", &card.documents))
                .chain(card.fields.iter().map(|(name, counts)| (name.as_str(), counts)));
            for (name, c) in rows.take(TABLE_ROWS) {
                writeln!(
                    f,
                    "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num{}\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td></tr>",
                    escape(name),
                    c.correct,
                    if c.wrong_accepted > 0 { " wrong" } else { "" },
                    c.wrong_accepted,
                    c.escalated_present,
                    c.escalated_absent,
                    c.accuracy() * 100.0
                )?;
            }
            more_rows(f, (card.fields.len() + 1).saturating_sub(TABLE_ROWS), "field", 6)?;
            f.write_str("</tbody>\n</table>\n")?;
        }
        for comparison in &self.comparisons {
            writeln!(
                f,
                "<h3>{b} against {a}</h3>\n<p class=\"note\">{cases} cases; accuracy in %, difference in points, \
                 with its 95% interval (paired bootstrap); <strong>bold</strong> where the interval leaves out zero.</p>",
                a = escape(&comparison.a),
                b = escape(&comparison.b),
                cases = comparison.cases,
            )?;
            f.write_str(
                "<table class=\"comparison\">\n<thead><tr><th></th><th class=\"num\">A</th><th class=\"num\">B</th>\
                 <th class=\"num\">B − A</th><th class=\"num\">better</th><th class=\"num\">worse</th>\
                 <th class=\"num\">same</th><th class=\"num\">95% interval</th></tr></thead>\n<tbody>\n",
            )?;
            let rows = std::iter::once(("documents", &comparison.documents))
                .chain(comparison.fields.iter().map(|(name, paired)| (name.as_str(), paired)));
            for (name, p) in rows.take(TABLE_ROWS) {
                let (open, close) = if p.is_clear() { ("<strong>", "</strong>") } else { ("", "") };
                writeln!(
                    f,
                    "<tr><td><code>{}</code></td><td class=\"num\">{:.1}</td><td class=\"num\">{:.1}</td>\
                     <td class=\"num\">{open}{:+.1}{close}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">[{:+.1}, {:+.1}]</td></tr>",
                    escape(name),
                    p.accuracy_a * 100.0,
                    p.accuracy_b * 100.0,
                    p.difference * 100.0,
                    p.better,
                    p.worse,
                    p.same,
                    p.interval[0] * 100.0,
                    p.interval[1] * 100.0
                )?;
            }
            more_rows(f, (comparison.fields.len() + 1).saturating_sub(TABLE_ROWS), "field", 8)?;
            f.write_str("</tbody>\n</table>\n")?;
        }
        f.write_str("</section>\n")
    }

    fn escalation_table(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "<section id=\"escalations\">\n<h2>Escalations</h2>")?;
        let listed = self.escalations.len();
        let escalated = self.stats.escalated();
        if listed == 0 {
            writeln!(
                f,
                "<p class=\"note\">{}</p>\n</section>",
                if escalated == 0 { "No escalations." } else { "No escalation was given to the report." }
            )?;
            return Ok(());
        }
        if listed as u64 != escalated {
            writeln!(
                f,
                "<p class=\"note\">{listed} escalation(s) listed; the statistics count {escalated}.</p>"
            )?;
        }
        let sources = self.sources_by_id();
        let quotes = self.escalations.iter().any(|(id, _)| sources.contains_key(id));
        f.write_str(
            "<table class=\"escalations\">\n<thead><tr><th class=\"col-document\">document</th><th class=\"col-reason\">reason</th>\
             <th class=\"num col-attempts\">attempts</th><th class=\"col-fields\">failing fields</th><th>fix hint</th>",
        )?;
        if quotes {
            f.write_str("<th class=\"col-quotes\">quotes</th>")?;
        }
        f.write_str("</tr></thead>\n<tbody>\n")?;
        for (id, escalation) in self.escalations.iter().take(TABLE_ROWS) {
            write!(
                f,
                "<tr data-document=\"{id}\"><td><code>{id}</code></td>\
                 <td><span class=\"reason {reason}\">{reason}</span></td><td class=\"num\">{attempts}</td><td>",
                id = escape(id),
                reason = escalation.reason,
                attempts = escalation.attempts(),
            )?;
            failing_fields(f, escalation)?;
            f.write_str("</td><td>")?;
            match &escalation.fix_hint {
                Some(hint) => write!(f, "{}", escape(&shorten(hint, HINT_CHARS)))?,
                None => f.write_str("<span class=\"muted\">none</span>")?,
            }
            f.write_str("</td>")?;
            if quotes {
                f.write_str("<td>")?;
                source_list(f, sources.get(id).map(Vec::as_slice).unwrap_or_default())?;
                f.write_str("</td>")?;
            }
            f.write_str("</tr>\n")?;
        }
        more_rows(f, listed.saturating_sub(TABLE_ROWS), "escalation", 5 + usize::from(quotes))?;
        f.write_str("</tbody>\n</table>\n</section>\n")
    }

    fn quote_table(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let escalated: BTreeSet<&str> = self.escalations.iter().map(|(id, _)| *id).collect();
        let valid: Vec<&(&str, &[Source])> =
            self.sources.iter().filter(|(id, _)| !escalated.contains(id)).collect();
        if valid.is_empty() {
            return Ok(());
        }
        f.write_str(
            "<section id=\"quotes\">\n<h2>Quotes of valid outcomes</h2>\n\
             <p class=\"note\">Each <code>Sourced</code> value's quote, with its byte span in the document's text.</p>\n\
             <table class=\"quotes\">\n<thead><tr><th>document</th><th>field</th><th>quote</th>\
             <th>span</th></tr></thead>\n<tbody>\n",
        )?;
        let quotes = valid.iter().map(|(_, sources)| sources.len()).sum::<usize>();
        let shown = valid.iter().flat_map(|(id, sources)| sources.iter().map(move |source| (id, source)));
        for (id, source) in shown.take(TABLE_ROWS) {
            writeln!(
                f,
                "<tr data-document=\"{id}\"><td><code>{id}</code></td><td><code>{path}</code></td>\
                 <td class=\"quote\">{quote}</td><td>{span}</td></tr>",
                id = escape(id),
                path = escape(&shorten(&source.path.to_string(), NAME_CHARS)),
                quote = escape(&shorten(&source.quote, QUOTE_CHARS)),
                span = span(source),
            )?;
        }
        more_rows(f, quotes.saturating_sub(TABLE_ROWS), "quote", 4)?;
        f.write_str("</tbody>\n</table>\n</section>\n")
    }
}

/// The keys of the escalation's `partial.failed`, each with its messages.
fn failing_fields(f: &mut fmt::Formatter<'_>, escalation: &Escalation) -> fmt::Result {
    let failed = &escalation.partial.failed;
    if failed.is_empty() {
        return f.write_str("<span class=\"muted\">none named</span>");
    }
    f.write_str("<ul class=\"fields\">")?;
    for (field, messages) in failed.iter().take(ROW_ITEMS) {
        write!(f, "<li><code>{}</code>", escape(&shorten(field, NAME_CHARS)))?;
        let messages: Vec<&str> =
            messages.as_array().into_iter().flatten().filter_map(|m| m.as_str()).collect();
        if messages.is_empty() {
            f.write_str(" <span class=\"muted\">absent</span>")?;
        }
        for message in messages.iter().take(FIELD_MESSAGES) {
            write!(f, "<div class=\"message\">{}</div>", escape(message))?;
        }
        if messages.len() > FIELD_MESSAGES {
            write!(f, "<div class=\"muted more\">and {} more</div>", messages.len() - FIELD_MESSAGES)?;
        }
        f.write_str("</li>")?;
    }
    if failed.len() > ROW_ITEMS {
        write!(f, "<li class=\"muted more\">and {} more fields</li>", failed.len() - ROW_ITEMS)?;
    }
    f.write_str("</ul>")
}

fn source_list(f: &mut fmt::Formatter<'_>, sources: &[&Source]) -> fmt::Result {
    f.write_str("<ul class=\"sources\">")?;
    for source in sources.iter().take(ROW_ITEMS) {
        write!(
            f,
            "<li><code>{}</code> <q>{}</q> <span class=\"span\">{}</span></li>",
            escape(&shorten(&source.path.to_string(), NAME_CHARS)),
            escape(&shorten(&source.quote, QUOTE_CHARS)),
            span(source)
        )?;
    }
    if sources.len() > ROW_ITEMS {
        write!(f, "<li class=\"muted more\">and {} more quotes</li>", sources.len() - ROW_ITEMS)?;
    }
    f.write_str("</ul>")
}

/// The last row of a table cut at [`TABLE_ROWS`]: how many `noun`s it leaves out.
fn more_rows(f: &mut fmt::Formatter<'_>, left_out: usize, noun: &str, columns: usize) -> fmt::Result {
    if left_out == 0 {
        return Ok(());
    }
    writeln!(
        f,
        "<tr class=\"more\"><td colspan=\"{columns}\" class=\"muted\">and {}, not shown</td></tr>",
        crate::vocabulary::text::count(left_out, &format!("more {noun}"))
    )
}

/// The last `max_chars` characters of `path`, starting `…` when cut: the end
/// of a path (its field) tells bars apart where their beginnings are alike.
fn tail(path: &str, max_chars: usize) -> String {
    let count = path.chars().count();
    if count <= max_chars {
        return path.to_string();
    }
    let kept: String = path.chars().skip(count - max_chars.saturating_sub(1)).collect();
    format!("…{kept}")
}

/// A tick label: round numbers of ten thousand and more in `k` and `M`.
fn tick_label(n: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        if n.is_multiple_of(unit) {
            format!("{}{suffix}", n / unit)
        } else {
            format!("{:.1}{suffix}", n as f64 / unit as f64)
        }
    };
    if n >= 1_000_000 && n.is_multiple_of(100_000) {
        scaled(1_000_000, "M")
    } else if n >= 10_000 && n.is_multiple_of(100) {
        scaled(1_000, "k")
    } else {
        n.to_string()
    }
}

fn span(source: &Source) -> String {
    match &source.span {
        Some(range) => format!("bytes {}..{}", range.start, range.end),
        None => "unverified".to_string(),
    }
}

/// The headline figures, as cards.
fn summary(f: &mut fmt::Formatter<'_>, stats: &Stats) -> fmt::Result {
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
    ];
    f.write_str("<section id=\"summary\" class=\"cards\">\n")?;
    for (name, label, value, note) in cards {
        writeln!(
            f,
            "<div class=\"card\"><div class=\"label\">{label}</div>\
             <div class=\"value\" data-figure=\"{name}\">{value}</div><div class=\"note\">{note}</div></div>"
        )?;
    }
    f.write_str("</section>\n")
}

/// The outcome categories, in the order the stacked bar draws them.
fn categories(stats: &Stats) -> Vec<(&'static str, &'static str, String, u64)> {
    let mut all = vec![
        ("valid", "first", "on the first attempt".to_string(), stats.first_attempt_valid()),
        ("valid", "retried", "after a correction".to_string(), stats.valid_after_retry()),
    ];
    for reason in Reason::ALL {
        all.push(("escalated", reason.as_str(), reason.to_string(), stats.escalations(reason)));
    }
    all
}

fn outcomes(f: &mut fmt::Formatter<'_>, stats: &Stats) -> fmt::Result {
    let n = stats.extractions();
    f.write_str("<section id=\"outcomes\">\n<h2>Outcomes by status and reason</h2>\n")?;
    if n == 0 {
        return f.write_str("<p class=\"note\">No outcome was recorded.</p>\n</section>\n");
    }
    let (width, height) = (1000.0, 44.0);
    writeln!(
        f,
        "<svg class=\"chart\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" role=\"img\" \
         aria-label=\"outcomes by status and reason\">"
    )?;
    let mut x = 0.0;
    for (status, key, label, count) in categories(stats) {
        if count == 0 {
            continue;
        }
        let w = width * count as f64 / n as f64;
        writeln!(
            f,
            "<rect class=\"fill-{key}\" x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"{height}\">\
             <title>{status} {label}: {count} ({})</title></rect>",
            percent(count, n)
        )?;
        if w >= 28.0 {
            writeln!(
                f,
                "<text class=\"on-bar\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{count}</text>",
                x + w / 2.0,
                height / 2.0 + 5.0
            )?;
        }
        x += w;
    }
    f.write_str("</svg>\n")?;
    f.write_str(
        "<table class=\"outcomes\">\n<thead><tr><th>status</th><th>reason</th><th class=\"num\">outcomes</th>\
         <th class=\"num\">share</th></tr></thead>\n<tbody>\n",
    )?;
    for (status, key, label, count) in categories(stats) {
        writeln!(
            f,
            "<tr data-outcome=\"{key}\"><td><span class=\"swatch fill-{key}\"></span>{status}</td><td>{label}</td>\
             <td class=\"num\">{count}</td><td class=\"num\">{}</td></tr>",
            percent(count, n)
        )?;
    }
    writeln!(
        f,
        "<tr class=\"total\"><td>all</td><td></td><td class=\"num\">{n}</td><td class=\"num\">{}</td></tr>",
        percent(n, n)
    )?;
    f.write_str("</tbody>\n</table>\n</section>\n")
}

/// The value axis of a bar chart: from 0 to `top` in steps of `step`.
struct Axis {
    top: u64,
    step: u64,
}

impl Axis {
    /// An axis over `0..=max` with about four round steps (1, 2 or 5 times a power of ten).
    fn over(max: u64) -> Axis {
        let mut unit = 1u64;
        loop {
            for m in [1, 2, 5] {
                let step = unit.saturating_mul(m);
                if step.saturating_mul(4) >= max {
                    let top = max.div_ceil(step).max(1).saturating_mul(step);
                    return Axis { top, step };
                }
            }
            unit = unit.saturating_mul(10);
        }
    }

    fn ticks(&self) -> impl Iterator<Item = u64> + '_ {
        (0..=self.top / self.step).map(|i| i * self.step)
    }
}

/// A chart's plot area inside its SVG.
struct Plot {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Plot {
    fn inner_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    fn base(&self) -> f64 {
        self.height - self.bottom
    }

    /// The y of `value` on `axis`.
    fn y(&self, axis: &Axis, value: u64) -> f64 {
        self.base() - (self.height - self.top - self.bottom) * value as f64 / axis.top as f64
    }

    /// The centre of slot `i` of `n` and a bar's width in it.
    fn slot(&self, i: usize, n: usize) -> (f64, f64) {
        let slot = self.inner_width() / n.max(1) as f64;
        (self.left + slot * (i as f64 + 0.5), (slot * 0.62).min(90.0))
    }

    fn open(&self, f: &mut fmt::Formatter<'_>, label: &str) -> fmt::Result {
        writeln!(
            f,
            "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" role=\"img\" aria-label=\"{label}\">",
            w = self.width,
            h = self.height
        )
    }

    /// Gridlines and tick labels of `axis` on the left, and the axis title.
    fn grid(&self, f: &mut fmt::Formatter<'_>, axis: &Axis, title: &str) -> fmt::Result {
        for tick in axis.ticks() {
            let y = self.y(axis, tick);
            writeln!(
                f,
                "<line class=\"grid\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                self.left,
                self.width - self.right,
                self.left - 8.0,
                y + 4.0,
                tick_label(tick)
            )?;
        }
        writeln!(
            f,
            "<text class=\"axis-title\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{title}</text>",
            (self.top + self.base()) / 2.0
        )?;
        writeln!(
            f,
            "<line class=\"axis\" x1=\"{l:.1}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\"/>",
            l = self.left,
            r = self.width - self.right,
            b = self.base()
        )
    }
}

fn attempts(f: &mut fmt::Formatter<'_>, stats: &Stats) -> fmt::Result {
    let histogram = stats.attempts_histogram();
    f.write_str("<section id=\"attempts\">\n<h2>Attempts per extraction</h2>\n")?;
    let (Some(first), Some(last)) = (histogram.keys().next(), histogram.keys().next_back()) else {
        return f.write_str("<p class=\"note\">No outcome was recorded.</p>\n</section>\n");
    };
    // Every number of attempts from one (or none) to the most, a bar of 0 included.
    let bars: Vec<(u32, u64)> =
        ((*first).min(1)..=*last).map(|a| (a, histogram.get(&a).copied().unwrap_or(0))).collect();
    let axis = Axis::over(bars.iter().map(|(_, n)| *n).max().unwrap_or(0));
    let plot = Plot { width: 1000.0, height: 260.0, left: 56.0, right: 24.0, top: 24.0, bottom: 46.0 };
    plot.open(f, "attempts histogram")?;
    plot.grid(f, &axis, "outcomes")?;
    let n = stats.extractions();
    for (i, (attempt, count)) in bars.iter().enumerate() {
        let (x, w) = plot.slot(i, bars.len());
        let y = plot.y(&axis, *count);
        writeln!(
            f,
            "<g class=\"bar\" data-attempts=\"{attempt}\" data-outcomes=\"{count}\">\
             <rect class=\"fill-attempts\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\">\
             <title>{attempt} attempt(s): {count} outcome(s), {}</title></rect>\
             <text class=\"value\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{count}</text>\
             <text class=\"label\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{attempt}</text></g>",
            x - w / 2.0,
            plot.base() - y,
            percent(*count, n),
            y - 6.0,
            plot.base() + 18.0,
        )?;
    }
    writeln!(
        f,
        "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">attempts (model calls)</text>",
        plot.left + plot.inner_width() / 2.0,
        plot.height - 6.0
    )?;
    f.write_str("</svg>\n</section>\n")
}

/// One bar of the Pareto chart: a fingerprint, or the sum of those past [`PARETO_BARS`].
struct ParetoBar {
    /// `#1`, `#2`, ...; `+4` for the four fingerprints summed into the last bar.
    rank: String,
    /// The fingerprint's path, shortened to fit under its bar.
    path: String,
    tip: String,
    count: u64,
    running: u64,
    occurrences: u64,
    dominant: bool,
}

/// The bars of the Pareto chart; a path is shortened to `path_chars` characters to fit under its bar.
fn pareto_bars(
    rows: &[ParetoRow<'_>],
    dominant: Option<&crate::Fingerprint>,
    path_chars: usize,
) -> Vec<ParetoBar> {
    let mut bars: Vec<ParetoBar> = rows
        .iter()
        .take(PARETO_BARS)
        .enumerate()
        .map(|(i, row)| {
            let path = if row.fingerprint.path.is_empty() { "(root)" } else { &row.fingerprint.path };
            ParetoBar {
                rank: format!("#{}", i + 1),
                path: tail(path, path_chars),
                tip: format!("#{} {}", i + 1, shorten(&row.fingerprint.to_string(), NAME_CHARS)),
                count: row.count,
                running: row.running,
                occurrences: row.occurrences,
                dominant: dominant == Some(row.fingerprint),
            }
        })
        .collect();
    if let Some(last) = rows.last().filter(|_| rows.len() > PARETO_BARS) {
        let rest = &rows[PARETO_BARS..];
        let count = rest.iter().map(|r| r.count).sum();
        bars.push(ParetoBar {
            rank: format!("+{}", rest.len()),
            path: "others".to_string(),
            tip: format!("{} other fingerprints", rest.len()),
            count,
            running: last.running,
            occurrences: last.occurrences,
            dominant: false,
        });
    }
    bars
}

fn pareto(f: &mut fmt::Formatter<'_>, stats: &Stats) -> fmt::Result {
    let failed = stats.failed_attempts();
    writeln!(
        f,
        "<section id=\"violations\">\n<h2>Violation fingerprints</h2>\n\
         <p class=\"note\">{failed} failed attempt(s), over every outcome (valid ones included). Bars: the \
         failed attempts each fingerprint appeared in, most frequent first; line: the cumulative share of \
         all fingerprint occurrences.</p>"
    )?;
    let rows = stats.pareto();
    if rows.is_empty() {
        return f.write_str("<p class=\"note\">No attempt failed.</p>\n</section>\n");
    }
    let dominant = stats.dominant();
    match &dominant {
        Some(d) => writeln!(
            f,
            "<div class=\"callout\" id=\"dominant\"><div class=\"label\">Dominant failure</div>\
             <div><code>{}</code>: in <b>{}</b> of {} failed attempts ({:.1}%)</div>\
             <div class=\"fix\"><b>Fix:</b> {}</div></div>",
            escape(&shorten(&d.fingerprint.to_string(), NAME_CHARS)),
            d.count,
            failed,
            100.0 * d.share,
            escape(&d.fix)
        )?,
        None => f.write_str(
            "<p class=\"note\" id=\"dominant\">No fingerprint accounts for enough of the failed attempts \
             to be called dominant.</p>\n",
        )?,
    }
    let plot = Plot { width: 1000.0, height: 320.0, left: 56.0, right: 56.0, top: 30.0, bottom: 58.0 };
    let slots = rows.len().min(PARETO_BARS + 1);
    // About 6.5 units a character at the labels' 11px, with a gap between neighbours.
    let path_chars = ((plot.inner_width() / slots as f64 - 12.0) / 6.5).clamp(4.0, 28.0) as usize;
    let bars = pareto_bars(&rows, dominant.as_ref().map(|d| &d.fingerprint), path_chars);
    let axis = Axis::over(bars.iter().map(|b| b.count).max().unwrap_or(0));
    plot.open(f, "Pareto chart of violation fingerprints")?;
    plot.grid(f, &axis, "failed attempts")?;
    // The right axis: the cumulative share.
    for pct in [0u64, 25, 50, 75, 100] {
        let y = plot.base() - (plot.base() - plot.top) * pct as f64 / 100.0;
        writeln!(
            f,
            "<text class=\"tick cumulative\" x=\"{:.1}\" y=\"{:.1}\">{pct}%</text>",
            plot.width - plot.right + 8.0,
            y + 4.0
        )?;
    }
    writeln!(
        f,
        "<text class=\"axis-title cumulative\" transform=\"translate({:.1} {:.1}) rotate(90)\" \
         text-anchor=\"middle\">cumulative share</text>",
        plot.width - 10.0,
        (plot.top + plot.base()) / 2.0
    )?;
    let mut points = Vec::new();
    for (i, bar) in bars.iter().enumerate() {
        let (x, w) = plot.slot(i, bars.len());
        let y = plot.y(&axis, bar.count);
        let cumulative = percent(bar.running, bar.occurrences);
        // Inside the bar's top when it is tall enough, otherwise above it.
        let count_y = if plot.base() - y >= 24.0 { y + 16.0 } else { y - 6.0 };
        let class = if bar.dominant { "fill-dominant" } else { "fill-fingerprint" };
        writeln!(
            f,
            "<g class=\"bar\" data-rank=\"{rank}\" data-count=\"{count}\" data-cumulative=\"{cumulative}\">\
             <rect class=\"{class}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\">\
             <title>{tip}: {count}</title></rect>\
             <text class=\"value\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{count}</text>\
             <text class=\"label\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{rank}</text>\
             <text class=\"label path\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{path}</text></g>",
            x - w / 2.0,
            plot.base() - y,
            count_y,
            plot.base() + 18.0,
            plot.base() + 34.0,
            rank = bar.rank,
            count = bar.count,
            tip = escape(&bar.tip),
            path = escape(&bar.path),
        )?;
        let cy = plot.base() - (plot.base() - plot.top) * bar.running as f64 / bar.occurrences.max(1) as f64;
        // The share's label goes above its point, or below it where it would cover the count.
        let clear = |label_y: f64| (label_y - count_y).abs() >= 14.0;
        let (above, below) = (cy - 9.0, cy + 18.0);
        let label_y = if clear(above) || !clear(below) || below > plot.base() - 2.0 { above } else { below };
        points.push((x, cy, label_y, cumulative));
    }
    let line: Vec<String> = points.iter().map(|(x, y, _, _)| format!("{x:.1},{y:.1}")).collect();
    writeln!(f, "<polyline class=\"cumulative-line\" points=\"{}\"/>", line.join(" "))?;
    for (x, y, label_y, label) in &points {
        writeln!(
            f,
            "<circle class=\"cumulative-point\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\"/>\
             <text class=\"cumulative-label\" x=\"{x:.1}\" y=\"{label_y:.1}\" text-anchor=\"middle\">{label}</text>"
        )?;
    }
    f.write_str("</svg>\n")?;
    f.write_str(
        "<table class=\"pareto\">\n<thead><tr><th class=\"num\">#</th><th>fingerprint</th>\
         <th class=\"num\">failed attempts</th><th class=\"num\">share</th><th class=\"num\">cumulative</th>\
         </tr></thead>\n<tbody>\n",
    )?;
    for (i, row) in rows.iter().enumerate().take(TABLE_ROWS) {
        let is_dominant = dominant.as_ref().is_some_and(|d| &d.fingerprint == row.fingerprint);
        writeln!(
            f,
            "<tr{}><td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            if is_dominant { " class=\"dominant\"" } else { "" },
            i + 1,
            escape(&shorten(&row.fingerprint.to_string(), NAME_CHARS)),
            row.count,
            percent(row.count, failed),
            percent(row.running, row.occurrences)
        )?;
    }
    more_rows(f, rows.len().saturating_sub(TABLE_ROWS), "fingerprint", 5)?;
    f.write_str("</tbody>\n</table>\n</section>\n")
}

/// The parts of a usage, in the order the stacked bars draw them.
fn parts(u: &Usage) -> [(&'static str, &'static str, u64); 4] {
    [
        ("input", "uncached input", u.input_tokens),
        ("output", "output", u.output_tokens),
        ("cache-read", "cache read", u.cache_read_tokens),
        ("cache-write", "cache write", u.cache_write_tokens),
    ]
}

fn usage(f: &mut fmt::Formatter<'_>, stats: &Stats) -> fmt::Result {
    let by_attempt = stats.usage_by_attempt();
    let total = stats.usage();
    f.write_str("<section id=\"usage\">\n<h2>Tokens by attempt</h2>\n")?;
    let attributed = by_attempt.values().map(Usage::total).fold(0, u64::saturating_add);
    if total.total() == 0 {
        f.write_str("<p class=\"note\">No tokens were recorded (the model reported no usage).</p>\n")?;
    } else {
        let axis = Axis::over(by_attempt.values().map(Usage::total).max().unwrap_or(0));
        let plot = Plot { width: 1000.0, height: 260.0, left: 72.0, right: 24.0, top: 24.0, bottom: 46.0 };
        plot.open(f, "tokens by attempt")?;
        plot.grid(f, &axis, "tokens")?;
        for (i, (attempt, u)) in by_attempt.iter().enumerate() {
            let (x, w) = plot.slot(i, by_attempt.len());
            let mut below = 0;
            write!(f, "<g class=\"bar\" data-attempt=\"{attempt}\" data-tokens=\"{}\">", u.total())?;
            for (key, label, tokens) in parts(u) {
                if tokens == 0 {
                    continue;
                }
                let (y0, y1) = (plot.y(&axis, below), plot.y(&axis, below.saturating_add(tokens)));
                write!(
                    f,
                    "<rect class=\"fill-{key}\" x=\"{:.1}\" y=\"{y1:.1}\" width=\"{w:.1}\" height=\"{:.1}\">\
                     <title>attempt {attempt}: {tokens} {label} tokens</title></rect>",
                    x - w / 2.0,
                    y0 - y1
                )?;
                below = below.saturating_add(tokens);
            }
            writeln!(
                f,
                "<text class=\"value\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
                 <text class=\"label\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{attempt}</text></g>",
                plot.y(&axis, u.total()) - 6.0,
                u.total(),
                plot.base() + 18.0
            )?;
        }
        writeln!(
            f,
            "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">attempt number</text>",
            plot.left + plot.inner_width() / 2.0,
            plot.height - 6.0
        )?;
        f.write_str("</svg>\n<p class=\"legend\">")?;
        for (key, label, _) in parts(&total) {
            write!(f, "<span><span class=\"swatch fill-{key}\"></span>{label}</span>")?;
        }
        f.write_str("</p>\n")?;
    }
    f.write_str(
        "<table class=\"usage\">\n<thead><tr><th>attempt</th><th class=\"num\">input</th>\
         <th class=\"num\">output</th><th class=\"num\">cache read</th><th class=\"num\">cache write</th>\
         <th class=\"num\">total</th></tr></thead>\n<tbody>\n",
    )?;
    let row = |f: &mut fmt::Formatter<'_>, attr: &str, name: &str, u: &Usage| {
        write!(f, "<tr{attr}><td>{name}</td>")?;
        for (_, _, tokens) in parts(u) {
            write!(f, "<td class=\"num\">{tokens}</td>")?;
        }
        writeln!(f, "<td class=\"num\">{}</td></tr>", u.total())
    };
    for (attempt, u) in by_attempt {
        row(f, &format!(" data-attempt=\"{attempt}\""), &attempt.to_string(), u)?;
    }
    row(f, " class=\"total\" data-attempt=\"all\"", "all attempts", &total)?;
    f.write_str("</tbody>\n</table>\n")?;
    if attributed != total.total() {
        writeln!(
            f,
            "<p class=\"note\">The attempts account for {attributed} of the {} tokens: some escalations \
             carry usage their error chain does not.</p>",
            total.total()
        )?;
    }
    f.write_str("</section>\n")
}

impl Report<'_> {
    /// The reviewers' corrections: fields fixed, violations overridden, documents rejected.
    fn corrections(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reviews.is_empty() {
            return Ok(());
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
        writeln!(
            f,
            "<section id=\"corrections\">\n<h2>Reviewer corrections</h2>\n<p class=\"note\">{} and {} by reviewers: \
             fields fixed again and again, and violations overridden, point at the prompt or the schema.</p>",
            if fixes == 1 { "1 fix".to_string() } else { format!("{fixes} fixes") },
            crate::vocabulary::text::count(rejected.len(), "rejection"),
        )?;
        let mut by_count: Vec<(&str, (usize, BTreeSet<&str>))> = fields.into_iter().collect();
        by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
        f.write_str(
            "<h3>Fields people fixed</h3>\n<table class=\"corrections\">\n<thead><tr><th>field</th>\
             <th class=\"num\">fixes</th><th>documents</th></tr></thead>\n<tbody>\n",
        )?;
        for (field, (count, documents)) in by_count.iter().take(TABLE_ROWS) {
            let listed: Vec<String> =
                documents.iter().take(ROW_ITEMS).map(|d| escape(&shorten(d, NAME_CHARS))).collect();
            writeln!(
                f,
                "<tr data-field=\"{field}\"><td><code>{field}</code></td><td class=\"num\">{count}</td><td>{}</td></tr>",
                listed.join(", "),
                field = escape(&shorten(field, NAME_CHARS)),
            )?;
        }
        more_rows(f, by_count.len().saturating_sub(TABLE_ROWS), "field", 3)?;
        f.write_str("</tbody>\n</table>\n")?;
        let mut prints: Vec<(&str, usize)> = overridden.into_iter().collect();
        prints.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        f.write_str(
            "<h3>Violations overridden</h3>\n<table class=\"corrections\">\n<thead><tr><th>fingerprint</th>\
             <th class=\"num\">fixes</th></tr></thead>\n<tbody>\n",
        )?;
        for (print, count) in prints.iter().take(TABLE_ROWS) {
            writeln!(
                f,
                "<tr><td><code>{}</code></td><td class=\"num\">{count}</td></tr>",
                escape(&shorten(print, NAME_CHARS))
            )?;
        }
        more_rows(f, prints.len().saturating_sub(TABLE_ROWS), "fingerprint", 2)?;
        f.write_str("</tbody>\n</table>\n")?;
        f.write_str(
            "<h3>Documents rejected</h3>\n<table class=\"corrections\">\n<thead><tr><th>document</th>\
             <th>reviewer</th><th>when</th><th>reason</th></tr></thead>\n<tbody>\n",
        )?;
        for (review, reason) in rejected.iter().take(TABLE_ROWS) {
            writeln!(
                f,
                "<tr data-document=\"{id}\"><td><code>{id}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(review.reviewer.as_deref().unwrap_or("")),
                escape(review.at.as_deref().unwrap_or("")),
                escape(&shorten(reason, HINT_CHARS)),
                id = escape(&review.document),
            )?;
        }
        if rejected.is_empty() {
            f.write_str("<tr><td colspan=\"4\" class=\"muted\">none</td></tr>\n")?;
        }
        more_rows(f, rejected.len().saturating_sub(TABLE_ROWS), "rejection", 4)?;
        f.write_str("</tbody>\n</table>\n</section>\n")
    }
}

/// `text` escaped for HTML text and for attribute values in double or single
/// quotes: `&`, `<`, `>`, `"` and `'` become character references, so a
/// document id or a model's message can never open a tag, close an
/// attribute or start a script.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light; --ink: #1f2933; --muted: #616e7c; --line: #d9e2ec; --bg: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 32px 40px; }
h1 { font-size: 26px; margin: 0 0 18px; }
h2 { font-size: 19px; margin: 0 0 10px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 18px 20px;
  margin: 0 0 18px; }
code { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 13px;
  overflow-wrap: anywhere; }
.note, .muted { color: var(--muted); }
p.note { margin: 0 0 10px; font-size: 14px; }
.cards { display: grid; grid-template-columns: repeat(6, 1fr); gap: 10px; background: none; border: 0;
  padding: 0; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 26px; font-weight: 650; }
.card .note { font-size: 12px; color: var(--muted); }
svg.chart { display: block; width: 100%; height: auto; margin: 6px 0 12px; }
svg text { font-family: system-ui, 'DejaVu Sans', sans-serif; font-size: 13px; fill: var(--ink); }
svg .tick { fill: var(--muted); font-size: 12px; }
svg .axis-title { fill: var(--muted); font-size: 12px; }
svg .grid { stroke: #e4e7eb; stroke-width: 1; }
svg .axis { stroke: #9aa5b1; stroke-width: 1; }
svg .value { font-weight: 600; }
svg .label.path { fill: var(--muted); font-size: 11px; }
svg .on-bar { fill: #fff; font-weight: 650; }
svg .cumulative, svg .cumulative-label { fill: #b42318; }
svg .cumulative-label { font-size: 12px; font-weight: 600; paint-order: stroke; stroke: #fff;
  stroke-width: 3px; }
.cumulative-line { fill: none; stroke: #b42318; stroke-width: 2; }
.cumulative-point { fill: #fff; stroke: #b42318; stroke-width: 2; }
.fill-first { fill: #2e7d32; background: #2e7d32; }
.fill-retried { fill: #81c784; background: #81c784; }
.fill-not_recoverable { fill: #c62828; background: #c62828; }
.fill-systematic { fill: #ef6c00; background: #ef6c00; }
.fill-budget_exhausted { fill: #7b1fa2; background: #7b1fa2; }
.fill-attempts { fill: #1565c0; }
.fill-fingerprint { fill: #9fb3c8; }
.fill-dominant { fill: #ef6c00; }
.fill-input { fill: #1565c0; background: #1565c0; }
.fill-output { fill: #43a047; background: #43a047; }
.fill-cache-read { fill: #90caf9; background: #90caf9; }
.fill-cache-write { fill: #ffb74d; background: #ffb74d; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 7px;
  vertical-align: -1px; }
.legend { display: flex; gap: 18px; font-size: 13px; color: var(--muted); margin: 0 0 10px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); }
table.escalations { table-layout: fixed; }
th.col-document { width: 12%; }
th.col-reason { width: 14%; }
th.col-attempts { width: 9%; }
th.col-fields { width: 22%; }
th.col-quotes { width: 16%; }
td { overflow-wrap: anywhere; }
th { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
h3 { font-size: 16px; margin: 14px 0 6px; }
td.wrong { color: #b42318; font-weight: 650; }
tr.total td { font-weight: 650; border-bottom: 0; }
tr.dominant td { background: #fff3e0; }
.callout { border-left: 4px solid #ef6c00; background: #fff3e0; padding: 10px 14px; border-radius: 4px;
  margin: 0 0 10px; }
.callout .label { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #b54708;
  font-weight: 650; }
.callout .fix { margin-top: 4px; }
.reason { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px;
  white-space: nowrap; }
.reason.not_recoverable { background: #c62828; }
.reason.systematic { background: #ef6c00; }
.reason.budget_exhausted { background: #7b1fa2; }
ul.fields, ul.sources { margin: 0; padding-left: 16px; }
.message { color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
.span { color: var(--muted); font-size: 12px; white-space: nowrap; }
td.quote, q { overflow-wrap: anywhere; }
footer { color: var(--muted); font-size: 12px; text-align: center; }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_tags_quotes_and_ampersands() {
        assert_eq!(escape("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
        assert_eq!(escape("a\" onmouseover=\"x"), "a&quot; onmouseover=&quot;x");
        assert_eq!(escape("&lt; stays text"), "&amp;lt; stays text");
        assert_eq!(escape("plain ünïcode"), "plain ünïcode");
    }

    #[test]
    fn labels_keep_the_end_of_a_path_and_round_ticks_short() {
        assert_eq!(tail("total", 8), "total");
        assert_eq!(tail("line_items[*].amount", 8), "….amount");
        assert_eq!(tick_label(2_500), "2500");
        assert_eq!(tick_label(25_000), "25k");
        assert_eq!(tick_label(1_500_000), "1.5M");
        assert_eq!(tick_label(12_345), "12345");
    }

    #[test]
    fn axes_are_round_and_cover_the_maximum() {
        for (max, top, step) in [(0, 1, 1), (1, 1, 1), (3, 3, 1), (4, 4, 1), (5, 6, 2), (8, 8, 2), (9, 10, 5)]
        {
            let axis = Axis::over(max);
            assert_eq!((axis.top, axis.step), (top, step), "max {max}");
        }
        let axis = Axis::over(12_345);
        assert!(axis.top >= 12_345 && axis.top / axis.step <= 5, "{}/{}", axis.top, axis.step);
    }

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
