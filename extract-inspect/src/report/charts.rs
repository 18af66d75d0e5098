//! The report's charts, drawn as inline SVG: the outcomes' stacked bar, the
//! attempts histogram, the Pareto chart of violation fingerprints and the
//! tokens by attempt, each with the table of its figures. Every empty SVG
//! element is written with its closing tag (`<line ...></line>`): inside
//! HTML, an SVG element without one would swallow its siblings.

use maud::{Markup, html};

use super::{NAME_CHARS, TABLE_ROWS, more_rows};
use crate::run::{ParetoRow, percent};
use crate::vocabulary::text::shorten;
use crate::{Reason, Stats, Usage};

/// The most bars the Pareto chart draws; the rest are summed into one last bar.
const PARETO_BARS: usize = 15;

/// `x` with one decimal: a coordinate.
fn at(x: f64) -> String {
    format!("{x:.1}")
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

/// Outcomes by status and reason: one stacked bar and its table.
pub(super) fn outcomes(stats: &Stats) -> Markup {
    let n = stats.extractions();
    let (width, height) = (1000.0, 44.0);
    let mut x = 0.0;
    let mut segments = Vec::new();
    for (status, key, label, count) in categories(stats) {
        if count == 0 {
            continue;
        }
        let w = width * count as f64 / n as f64;
        segments.push((status, key, label, count, x, w));
        x += w;
    }
    html! {
        section id="outcomes" {
            h2 { "Outcomes by status and reason" }
            @if n == 0 {
                p class="note" { "No outcome was recorded." }
            } @else {
                svg class="chart" viewBox={ "0 0 " (width) " " (height) } width=(width) role="img"
                    aria-label="outcomes by status and reason" {
                    @for (status, key, label, count, x, w) in &segments {
                        rect class={ "fill-" (key) } x=(at(*x)) y="0" width=(at(*w)) height=(height) {
                            title { (status) " " (label) ": " (count) " (" (percent(*count, n)) ")" }
                        }
                        @if *w >= 28.0 {
                            text class="on-bar" x=(at(x + w / 2.0)) y=(at(height / 2.0 + 5.0)) text-anchor="middle" {
                                (count)
                            }
                        }
                    }
                }
                table class="outcomes" {
                    thead {
                        tr { th { "status" } th { "reason" } th class="num" { "outcomes" } th class="num" { "share" } }
                    }
                    tbody {
                        @for (status, key, label, count) in categories(stats) {
                            tr data-outcome=(key) {
                                td { span class={ "swatch fill-" (key) } {} (status) }
                                td { (label) }
                                td class="num" { (count) }
                                td class="num" { (percent(count, n)) }
                            }
                        }
                        tr class="total" {
                            td { "all" } td {} td class="num" { (n) } td class="num" { (percent(n, n)) }
                        }
                    }
                }
            }
        }
    }
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

    /// The chart: `inner` in an SVG of this plot's size, named `label`.
    fn chart(&self, label: &str, inner: Markup) -> Markup {
        html! {
            svg class="chart" viewBox={ "0 0 " (self.width) " " (self.height) } width=(self.width) role="img"
                aria-label=(label) {
                (inner)
            }
        }
    }

    /// Gridlines and tick labels of `axis` on the left, and the axis title.
    fn grid(&self, axis: &Axis, title: &str) -> Markup {
        html! {
            @for tick in axis.ticks() {
                @let y = self.y(axis, tick);
                line class="grid" x1=(at(self.left)) y1=(at(y)) x2=(at(self.width - self.right)) y2=(at(y)) {}
                text class="tick" x=(at(self.left - 8.0)) y=(at(y + 4.0)) text-anchor="end" { (tick_label(tick)) }
            }
            text class="axis-title" transform={ "translate(14 " (at((self.top + self.base()) / 2.0)) ") rotate(-90)" }
                text-anchor="middle" { (title) }
            line class="axis" x1=(at(self.left)) y1=(at(self.base())) x2=(at(self.width - self.right))
                y2=(at(self.base())) {}
        }
    }

    /// The title under the plot area.
    fn x_title(&self, title: &str) -> Markup {
        html! {
            text class="axis-title" x=(at(self.left + self.inner_width() / 2.0)) y=(at(self.height - 6.0))
                text-anchor="middle" { (title) }
        }
    }
}

/// The histogram of attempts per extraction.
pub(super) fn attempts(stats: &Stats) -> Markup {
    let histogram = stats.attempts_histogram();
    let (Some(first), Some(last)) = (histogram.keys().next(), histogram.keys().next_back()) else {
        return html! {
            section id="attempts" { h2 { "Attempts per extraction" } p class="note" { "No outcome was recorded." } }
        };
    };
    // Every number of attempts from one (or none) to the most, a bar of 0 included.
    let bars: Vec<(u32, u64)> =
        ((*first).min(1)..=*last).map(|a| (a, histogram.get(&a).copied().unwrap_or(0))).collect();
    let axis = Axis::over(bars.iter().map(|(_, n)| *n).max().unwrap_or(0));
    let plot = Plot { width: 1000.0, height: 260.0, left: 56.0, right: 24.0, top: 24.0, bottom: 46.0 };
    let n = stats.extractions();
    let inner = html! {
        (plot.grid(&axis, "outcomes"))
        @for (i, (attempt, count)) in bars.iter().enumerate() {
            @let (x, w) = plot.slot(i, bars.len());
            @let y = plot.y(&axis, *count);
            g class="bar" data-attempts=(attempt) data-outcomes=(count) {
                rect class="fill-attempts" x=(at(x - w / 2.0)) y=(at(y)) width=(at(w)) height=(at(plot.base() - y)) {
                    title { (attempt) " attempt(s): " (count) " outcome(s), " (percent(*count, n)) }
                }
                text class="value" x=(at(x)) y=(at(y - 6.0)) text-anchor="middle" { (count) }
                text class="label" x=(at(x)) y=(at(plot.base() + 18.0)) text-anchor="middle" { (attempt) }
            }
        }
        (plot.x_title("attempts (model calls)"))
    };
    html! {
        section id="attempts" {
            h2 { "Attempts per extraction" }
            (plot.chart("attempts histogram", inner))
        }
    }
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

/// A point of the Pareto chart's cumulative line, and where its label goes.
struct Point {
    x: f64,
    y: f64,
    label_y: f64,
    label: String,
}

/// The violation fingerprints: the dominant one called out, the Pareto chart and its table.
pub(super) fn pareto(stats: &Stats) -> Markup {
    let failed = stats.failed_attempts();
    let rows = stats.pareto();
    let dominant = stats.dominant();
    let intro = html! {
        h2 { "Violation fingerprints" }
        p class="note" {
            (failed) " failed attempt(s), over every outcome (valid ones included). Bars: the failed attempts each \
             fingerprint appeared in, most frequent first; line: the cumulative share of all fingerprint occurrences."
        }
    };
    if rows.is_empty() {
        return html! { section id="violations" { (intro) p class="note" { "No attempt failed." } } };
    }
    let plot = Plot { width: 1000.0, height: 320.0, left: 56.0, right: 56.0, top: 30.0, bottom: 58.0 };
    let slots = rows.len().min(PARETO_BARS + 1);
    // About 6.5 units a character at the labels' 11px, with a gap between neighbours.
    let path_chars = ((plot.inner_width() / slots as f64 - 12.0) / 6.5).clamp(4.0, 28.0) as usize;
    let bars = pareto_bars(&rows, dominant.as_ref().map(|d| &d.fingerprint), path_chars);
    let axis = Axis::over(bars.iter().map(|b| b.count).max().unwrap_or(0));
    let mut drawn = Vec::new();
    let mut points = Vec::new();
    for (i, bar) in bars.iter().enumerate() {
        let (x, w) = plot.slot(i, bars.len());
        let y = plot.y(&axis, bar.count);
        // Inside the bar's top when it is tall enough, otherwise above it.
        let count_y = if plot.base() - y >= 24.0 { y + 16.0 } else { y - 6.0 };
        let cy = plot.base() - (plot.base() - plot.top) * bar.running as f64 / bar.occurrences.max(1) as f64;
        // The share's label goes above its point, or below it where it would cover the count.
        let clear = |label_y: f64| (label_y - count_y).abs() >= 14.0;
        let (above, below) = (cy - 9.0, cy + 18.0);
        let label_y = if clear(above) || !clear(below) || below > plot.base() - 2.0 { above } else { below };
        points.push(Point { x, y: cy, label_y, label: percent(bar.running, bar.occurrences) });
        drawn.push((bar, x, w, y, count_y));
    }
    let line: Vec<String> = points.iter().map(|p| format!("{},{}", at(p.x), at(p.y))).collect();
    let inner = html! {
        (plot.grid(&axis, "failed attempts"))
        // The right axis: the cumulative share.
        @for pct in [0u64, 25, 50, 75, 100] {
            text class="tick cumulative" x=(at(plot.width - plot.right + 8.0))
                y=(at(plot.base() - (plot.base() - plot.top) * pct as f64 / 100.0 + 4.0)) { (pct) "%" }
        }
        text class="axis-title cumulative"
            transform={ "translate(" (at(plot.width - 10.0)) " " (at((plot.top + plot.base()) / 2.0)) ") rotate(90)" }
            text-anchor="middle" { "cumulative share" }
        @for (bar, x, w, y, count_y) in &drawn {
            g class="bar" data-rank=(bar.rank) data-count=(bar.count)
                data-cumulative=(percent(bar.running, bar.occurrences)) {
                rect class=(if bar.dominant { "fill-dominant" } else { "fill-fingerprint" }) x=(at(x - w / 2.0))
                    y=(at(*y)) width=(at(*w)) height=(at(plot.base() - y)) {
                    title { (bar.tip) ": " (bar.count) }
                }
                text class="value" x=(at(*x)) y=(at(*count_y)) text-anchor="middle" { (bar.count) }
                text class="label" x=(at(*x)) y=(at(plot.base() + 18.0)) text-anchor="middle" { (bar.rank) }
                text class="label path" x=(at(*x)) y=(at(plot.base() + 34.0)) text-anchor="middle" { (bar.path) }
            }
        }
        polyline class="cumulative-line" points=(line.join(" ")) {}
        @for point in &points {
            circle class="cumulative-point" cx=(at(point.x)) cy=(at(point.y)) r="3.5" {}
            text class="cumulative-label" x=(at(point.x)) y=(at(point.label_y)) text-anchor="middle" { (point.label) }
        }
    };
    html! {
        section id="violations" {
            (intro)
            @match &dominant {
                Some(d) => div class="callout" id="dominant" {
                    div class="label" { "Dominant failure" }
                    div {
                        code { (shorten(&d.fingerprint.to_string(), NAME_CHARS)) }
                        ": in " b { (d.count) } " of " (failed) " failed attempts (" (format!("{:.1}", 100.0 * d.share)) "%)"
                    }
                    div class="fix" { b { "Fix:" } " " (d.fix) }
                },
                None => p class="note" id="dominant" {
                    "No fingerprint accounts for enough of the failed attempts to be called dominant."
                },
            }
            (plot.chart("Pareto chart of violation fingerprints", inner))
            table class="pareto" {
                thead {
                    tr {
                        th class="num" { "#" } th { "fingerprint" } th class="num" { "failed attempts" }
                        th class="num" { "share" } th class="num" { "cumulative" }
                    }
                }
                tbody {
                    @for (i, row) in rows.iter().enumerate().take(TABLE_ROWS) {
                        @let is_dominant = dominant.as_ref().is_some_and(|d| &d.fingerprint == row.fingerprint);
                        tr class=[is_dominant.then_some("dominant")] {
                            td class="num" { (i + 1) }
                            td { code { (shorten(&row.fingerprint.to_string(), NAME_CHARS)) } }
                            td class="num" { (row.count) }
                            td class="num" { (percent(row.count, failed)) }
                            td class="num" { (percent(row.running, row.occurrences)) }
                        }
                    }
                    (more_rows(rows.len().saturating_sub(TABLE_ROWS), "fingerprint", 5))
                }
            }
        }
    }
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

/// Tokens by attempt: stacked bars of their parts, and the table.
pub(super) fn usage(stats: &Stats) -> Markup {
    let by_attempt = stats.usage_by_attempt();
    let total = stats.usage();
    let attributed = by_attempt.values().map(Usage::total).fold(0, u64::saturating_add);
    let axis = Axis::over(by_attempt.values().map(Usage::total).max().unwrap_or(0));
    let plot = Plot { width: 1000.0, height: 260.0, left: 72.0, right: 24.0, top: 24.0, bottom: 46.0 };
    let inner = html! {
        (plot.grid(&axis, "tokens"))
        @for (i, (attempt, u)) in by_attempt.iter().enumerate() {
            @let (x, w) = plot.slot(i, by_attempt.len());
            g class="bar" data-attempt=(attempt) data-tokens=(u.total()) {
                @for (key, label, tokens, below) in stacked(u) {
                    @let (y0, y1) = (plot.y(&axis, below), plot.y(&axis, below.saturating_add(tokens)));
                    rect class={ "fill-" (key) } x=(at(x - w / 2.0)) y=(at(y1)) width=(at(w)) height=(at(y0 - y1)) {
                        title { "attempt " (attempt) ": " (tokens) " " (label) " tokens" }
                    }
                }
                text class="value" x=(at(x)) y=(at(plot.y(&axis, u.total()) - 6.0)) text-anchor="middle" { (u.total()) }
                text class="label" x=(at(x)) y=(at(plot.base() + 18.0)) text-anchor="middle" { (attempt) }
            }
        }
        (plot.x_title("attempt number"))
    };
    let row = |name: String, u: &Usage| {
        html! {
            td { (name) }
            @for (_, _, tokens) in parts(u) { td class="num" { (tokens) } }
            td class="num" { (u.total()) }
        }
    };
    html! {
        section id="usage" {
            h2 { "Tokens by attempt" }
            @if total.total() == 0 {
                p class="note" { "No tokens were recorded (the model reported no usage)." }
            } @else {
                (plot.chart("tokens by attempt", inner))
                p class="legend" {
                    @for (key, label, _) in parts(&total) { span { span class={ "swatch fill-" (key) } {} (label) } }
                }
            }
            table class="usage" {
                thead {
                    tr {
                        th { "attempt" } th class="num" { "input" } th class="num" { "output" }
                        th class="num" { "cache read" } th class="num" { "cache write" } th class="num" { "total" }
                    }
                }
                tbody {
                    @for (attempt, u) in by_attempt.iter() { tr data-attempt=(attempt) { (row(attempt.to_string(), u)) } }
                    tr class="total" data-attempt="all" { (row("all attempts".to_string(), &total)) }
                }
            }
            @if attributed != total.total() {
                p class="note" {
                    "The attempts account for " (attributed) " of the " (total.total()) " tokens: some escalations \
                     carry usage their error chain does not."
                }
            }
        }
    }
}

/// The parts of `u` that are not zero, each with the tokens stacked below it.
fn stacked(u: &Usage) -> Vec<(&'static str, &'static str, u64, u64)> {
    let mut below = 0u64;
    let mut out = Vec::new();
    for (key, label, tokens) in parts(u) {
        if tokens > 0 {
            out.push((key, label, tokens, below));
            below = below.saturating_add(tokens);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
