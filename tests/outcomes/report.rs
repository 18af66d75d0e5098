//! The run report: figures in the HTML page equal those of the `Stats` it
//! was built from (outcomes, the attempts histogram, the Pareto chart and
//! table, the dominant fix, tokens by attempt), the escalations table lists
//! what each escalation holds, everything a model or a caller wrote is
//! escaped, and the page fetches nothing and runs nothing. `Stats`' text
//! table shows the same figures.

use extract::model::Reply;
use extract::report::Report;
use extract::run::FailedAttempt;
use extract::testing::Scripted;
use extract::{
    Code, Escalation, Extractable, Extractor, FieldPath, Layer, Outcome, Reason, Retries, Sourced, Stats,
    Usage, Violation, Violations,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one receipt.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(lines.amount) == total, tolerance = 0.01)]
struct Receipt {
    number: Sourced<String>,
    department: String,
    #[extract(recoverable = false)]
    cost_centre: String,
    lines: Vec<Line>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Line {
    item: String,
    amount: f64,
}

const DOCUMENT: &str =
    "Shop\n<img src=x> RECEIPT R-1 \"quoted\"\nCost centre CC-1\nTaxi 18.50\nLunch 23.00\nTotal 41.50";
const HOSTILE_ID: &str = "<script>alert(\"id\")</script>' onload='x";

fn right() -> Value {
    json!({
        "number": {"value": "R-1", "quote": "<img src=x> RECEIPT R-1 \"quoted\""},
        "department": "Sales",
        "cost_centre": "CC-1",
        "lines": [{"item": "Taxi", "amount": 18.5}, {"item": "Lunch", "amount": 23.0}],
        "total": 41.5
    })
}

fn with(field: &str, value: Value) -> Value {
    let mut output = right();
    output[field] = value;
    output
}

fn wrong_sum() -> Value {
    let mut output = right();
    output["lines"][0]["amount"] = json!(28.5);
    output
}

/// One document's replies: the first attempt writes the prompt cache, each
/// correction (the n-th spending `300 + n` input tokens) reads it.
fn script(outputs: Vec<Value>) -> Vec<Reply> {
    (0u64..)
        .zip(outputs)
        .map(|(i, output)| {
            let usage = if i == 0 {
                Usage::new(1000, 200).with_cache(0, 800)
            } else {
                Usage::new(300 + i, 150).with_cache(800, 0)
            };
            Reply::tool_call(output).with_usage(usage)
        })
        .collect()
}

struct Run {
    stats: Stats,
    outcomes: Vec<(String, Outcome<Receipt>)>,
}

/// Ten documents: three right at once, two fixed on the retry, three that
/// keep leaving the department out (systematic), one without a cost centre
/// (not recoverable), one whose violations change until the budget is spent.
fn run() -> Run {
    let scripts: Vec<(&str, Vec<Value>)> = vec![
        ("doc-01", vec![right()]),
        ("doc-02", vec![with("department", Value::Null), with("department", Value::Null)]),
        ("doc-03", vec![wrong_sum(), right()]),
        ("doc-04", vec![right()]),
        ("doc-05", vec![with("department", Value::Null), with("department", Value::Null)]),
        ("doc-06", vec![with("cost_centre", Value::Null)]),
        ("doc-07", vec![wrong_sum(), right()]),
        (HOSTILE_ID, vec![with("department", Value::Null), with("department", Value::Null)]),
        (
            "doc-09",
            vec![
                wrong_sum(),
                with("department", Value::Null),
                with("total", json!("<script>alert('total')</script>")),
            ],
        ),
        ("doc-10", vec![right()]),
    ];
    let mut stats = Stats::new();
    let mut outcomes = Vec::new();
    for (id, outputs) in scripts {
        let outcome = Extractor::new(Scripted::new(script(outputs)))
            .retries(Retries::new(2).unwrap())
            .extract_blocking::<Receipt>(DOCUMENT)
            .unwrap();
        stats.record(&outcome);
        outcomes.push((id.to_string(), outcome));
    }
    Run { stats, outcomes }
}

fn page(run: &Run) -> String {
    let mut report = Report::new(&run.stats).title("Receipts <b>&</b> \"March\"");
    for (id, outcome) in &run.outcomes {
        report = report.outcome(id, outcome);
    }
    report.html()
}

/// HTML-escaped, as the page must write every text it did not write itself.
/// A `'` stays as it is: the page writes every attribute in double quotes
/// (maud does), where a `'` opens and closes nothing.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The element that starts with `start` (unique in the page), up to the first `end` after it.
fn element<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    assert_eq!(page.matches(start).count(), 1, "`{start}` is not unique in the page");
    let from = page.find(start).unwrap();
    let to = page[from..].find(end).unwrap_or_else(|| panic!("no `{end}` after `{start}`"));
    &page[from..from + to + end.len()]
}

fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

#[test]
fn the_corpus_is_what_the_tests_below_assume() {
    let run = run();
    let stats = &run.stats;
    assert_eq!(stats.extractions(), 10);
    assert_eq!(stats.valid(), 5);
    assert_eq!(stats.first_attempt_valid(), 3);
    assert_eq!(stats.escalations(Reason::Systematic), 3);
    assert_eq!(stats.escalations(Reason::NotRecoverable), 1);
    assert_eq!(stats.escalations(Reason::BudgetExhausted), 1);
    assert_eq!(
        stats.attempts_histogram().iter().map(|(a, n)| (*a, *n)).collect::<Vec<_>>(),
        [(1, 4), (2, 5), (3, 1)]
    );
    assert_eq!(stats.failed_attempts(), 12);
    assert!(stats.dominant().is_some());
}

#[test]
fn the_summary_and_the_outcomes_table_show_the_stats_counts() {
    let run = run();
    let (stats, page) = (&run.stats, page(&run));
    let n = stats.extractions();
    for (figure, value) in [
        ("extractions", n),
        ("valid", stats.valid()),
        ("first_attempt_valid", stats.first_attempt_valid()),
        ("escalated", stats.escalated()),
        ("failed_attempts", stats.failed_attempts()),
        ("tokens", stats.usage().total()),
    ] {
        assert!(page.contains(&format!("data-figure=\"{figure}\">{value}<")), "{figure} = {value}");
    }
    let rows = [
        ("first", stats.first_attempt_valid()),
        ("retried", stats.valid() - stats.first_attempt_valid()),
        ("not_recoverable", stats.escalations(Reason::NotRecoverable)),
        ("systematic", stats.escalations(Reason::Systematic)),
        ("budget_exhausted", stats.escalations(Reason::BudgetExhausted)),
    ];
    for (key, count) in rows {
        let row = element(&page, &format!("<tr data-outcome=\"{key}\">"), "</tr>");
        let cells = format!("<td class=\"num\">{count}</td><td class=\"num\">{}</td>", percent(count, n));
        assert!(row.contains(&cells), "{row}");
        // The stacked bar draws every category that has outcomes, with its count.
        if count > 0 {
            let segment = element(&page, &format!("<rect class=\"fill-{key}\" x="), "</rect>");
            assert!(segment.contains(&format!(": {count} ({})", percent(count, n))), "{segment}");
        }
    }
    assert_eq!(rows.iter().map(|(_, c)| c).sum::<u64>(), n, "the categories partition the outcomes");
}

#[test]
fn the_attempts_histogram_has_one_bar_per_count_labelled_with_its_value() {
    let run = run();
    let (stats, page) = (&run.stats, page(&run));
    let histogram = stats.attempts_histogram();
    let last = *histogram.keys().next_back().unwrap();
    assert_eq!(page.matches("<g class=\"bar\" data-attempts=").count(), last as usize);
    for attempts in 1..=last {
        let count = histogram.get(&attempts).copied().unwrap_or(0);
        let bar = element(&page, &format!("data-attempts=\"{attempts}\" data-outcomes=\"{count}\">"), "</g>");
        assert!(bar.contains(&format!(">{count}</text>")), "the value label: {bar}");
        assert!(bar.contains(&format!(">{attempts}</text>")), "the axis label: {bar}");
    }
}

#[test]
fn the_pareto_chart_and_table_show_counts_shares_and_cumulative_percentages() {
    let run = run();
    let (stats, page) = (&run.stats, page(&run));
    let violations = stats.violations();
    assert!(violations.len() >= 3, "{violations:?}");
    let occurrences: u64 = violations.iter().map(|(_, n)| n).sum();
    let pareto = element(&page, "<section id=\"violations\">", "</section>");
    let table = element(pareto, "<table class=\"pareto\">", "</table>");
    let mut running = 0;
    let mut previous = u64::MAX;
    for (i, (fingerprint, count)) in violations.iter().enumerate() {
        assert!(*count <= previous, "most frequent first");
        previous = *count;
        running += count;
        let cumulative = percent(running, occurrences);
        let rank = i + 1;
        let bar = element(
            pareto,
            &format!("data-rank=\"#{rank}\" data-count=\"{count}\" data-cumulative=\"{cumulative}\">"),
            "</g>",
        );
        assert!(bar.contains(&format!(">{count}</text>")), "{bar}");
        assert!(
            bar.contains(&format!("<title>#{rank} {}: {count}</title>", escaped(&fingerprint.to_string())))
        );
        assert!(pareto.contains(&format!(">{cumulative}</text>")), "the line's label {cumulative}");
        let row = format!(
            "<td class=\"num\">{rank}</td><td><code>{}</code></td><td class=\"num\">{count}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{cumulative}</td>",
            escaped(&fingerprint.to_string()),
            percent(*count, stats.failed_attempts()),
        );
        assert!(table.contains(&row), "{row}\n{table}");
    }
    assert_eq!(percent(running, occurrences), "100.0%", "the line ends at 100%");
    assert_eq!(pareto.matches("class=\"cumulative-point\"").count(), violations.len());
}

#[test]
fn the_dominant_fingerprint_is_called_out_with_its_fix() {
    let run = run();
    let (stats, page) = (&run.stats, page(&run));
    let dominant = stats.dominant().unwrap();
    assert_eq!(dominant.fingerprint.path, "department");
    let callout = element(&page, "<div class=\"callout\" id=\"dominant\">", "</div></div>");
    assert!(callout.contains(&escaped(&dominant.fingerprint.to_string())), "{callout}");
    assert!(callout.contains(&format!(
        "in <b>{}</b> of {} failed attempts ({:.1}%)",
        dominant.count,
        stats.failed_attempts(),
        100.0 * dominant.share
    )));
    assert!(callout.contains(&escaped(&dominant.fix)), "{callout}");
    assert!(dominant.fix.contains("retry budget will not fix"));
    // Its bar and its table row are marked.
    let bar = element(&page, "data-rank=\"#1\"", "</g>");
    assert!(bar.contains("class=\"fill-dominant\""), "{bar}");
    assert_eq!(page.matches("<tr class=\"dominant\">").count(), 1);
}

#[test]
fn tokens_are_shown_by_attempt_and_add_up_to_the_total() {
    let run = run();
    let (stats, page) = (&run.stats, page(&run));
    let by_attempt = stats.usage_by_attempt();
    assert_eq!(by_attempt.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(by_attempt.values().copied().sum::<Usage>(), stats.usage(), "every token is attributed");
    // Every document's first attempt: 1000 in, 200 out, 800 written to the cache.
    assert_eq!(by_attempt[&1], Usage::new(10_000, 2_000).with_cache(0, 8_000));
    let usage = element(&page, "<section id=\"usage\">", "</section>");
    let cells = |u: &Usage| {
        format!(
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.total()
        )
    };
    for (attempt, u) in by_attempt {
        let row = element(usage, &format!("<tr data-attempt=\"{attempt}\">"), "</tr>");
        assert!(row.contains(&cells(u)), "{row}");
        let bar = element(
            usage,
            &format!("<g class=\"bar\" data-attempt=\"{attempt}\" data-tokens=\"{}\">", u.total()),
            "</g>",
        );
        assert!(bar.contains(&format!(">{}</text>", u.total())), "{bar}");
    }
    let total = element(usage, "<tr class=\"total\" data-attempt=\"all\">", "</tr>");
    assert!(total.contains(&cells(&stats.usage())), "{total}");
    assert!(!usage.contains("not attributed") && !usage.contains("account for"), "{usage}");
}

#[test]
fn the_escalations_table_lists_reason_failing_fields_and_fix_hint() {
    let run = run();
    let page = page(&run);
    let table = element(&page, "<table class=\"escalations\">", "</table>");
    let escalations: Vec<(&str, &Escalation)> =
        run.outcomes.iter().filter_map(|(id, o)| o.escalation().map(|e| (id.as_str(), e))).collect();
    assert_eq!(escalations.len(), 5);
    assert_eq!(table.matches("<tr data-document=").count(), escalations.len());
    for (id, escalation) in escalations {
        let row = element(table, &format!("<tr data-document=\"{}\">", escaped(id)), "</tr>");
        assert!(row.contains(&format!("<code>{}</code>", escaped(id))), "{row}");
        assert!(row.contains(&format!(">{}</span>", escalation.reason)), "{row}");
        assert!(row.contains(&format!("<td class=\"num\">{}</td>", escalation.attempts())), "{row}");
        assert!(!escalation.partial.failed.is_empty());
        for (field, messages) in &escalation.partial.failed {
            assert!(row.contains(&format!("<li><code>{}</code>", escaped(field))), "{field}: {row}");
            for message in messages.as_array().unwrap() {
                assert!(row.contains(&escaped(message.as_str().unwrap())), "{message}: {row}");
            }
        }
        for held in escalation.partial.held.keys() {
            assert!(!row.contains(&format!("<li><code>{held}</code>")), "{held} held, not failing: {row}");
        }
        match &escalation.fix_hint {
            Some(hint) => assert!(row.contains(&escaped(hint)), "{row}"),
            None => assert!(row.contains(">none</span>"), "{row}"),
        }
    }
}

#[test]
fn quotes_are_shown_with_their_spans() {
    let run = run();
    let page = page(&run);
    let quotes = element(&page, "<table class=\"quotes\">", "</table>");
    let mut shown = 0;
    for (id, outcome) in &run.outcomes {
        let Some(valid) = outcome.valid() else { continue };
        let source = &valid.sources()[0];
        let span = source.span.clone().unwrap();
        assert_eq!(&DOCUMENT[span.clone()], source.quote);
        let row = format!(
            "<tr data-document=\"{id}\"><td><code>{id}</code></td><td><code>number</code></td>\
             <td class=\"quote\">{}</td><td>bytes {}..{}</td></tr>",
            escaped(&source.quote),
            span.start,
            span.end
        );
        assert!(quotes.contains(&row), "{row}\n{quotes}");
        shown += 1;
    }
    assert_eq!(shown, 5);
}

#[test]
fn sources_given_for_an_escalated_document_are_shown_in_its_row() {
    let run = run();
    let (id, escalation) = run
        .outcomes
        .iter()
        .find_map(|(id, o)| o.escalation().filter(|e| e.reason == Reason::NotRecoverable).map(|e| (id, e)))
        .unwrap();
    let reviewed = extract::review::<Receipt>(escalation, DOCUMENT, json!({"cost_centre": "CC-1"})).unwrap();
    let page = Report::new(&run.stats).escalation(id, escalation).sources(id, reviewed.sources()).html();
    let row = element(&page, &format!("<tr data-document=\"{id}\">"), "</tr>");
    let source = &reviewed.sources()[0];
    let span = source.span.clone().unwrap();
    assert!(
        row.contains(&format!(
            "<q>{}</q> <span class=\"span\">bytes {}..{}</span>",
            escaped(&source.quote),
            span.start,
            span.end
        )),
        "{row}"
    );
    assert!(!page.contains("<table class=\"quotes\">"), "shown in the row, not again below");
}

#[test]
fn everything_a_model_or_a_caller_wrote_is_escaped() {
    let run = run();
    let page = page(&run);
    // The caller's title and document id.
    assert!(page.contains("<title>Receipts &lt;b&gt;&amp;&lt;/b&gt; &quot;March&quot;</title>"));
    assert!(page.contains(&format!("<code>{}</code>", escaped(HOSTILE_ID))));
    assert!(!page.contains(HOSTILE_ID));
    // The model's quote, and a value it sent in a violation's message.
    assert!(page.contains("&lt;img src=x&gt; RECEIPT R-1 &quot;quoted&quot;"));
    assert!(!page.contains("<img"));
    assert!(page.contains("got a string &quot;&lt;script&gt;alert('total')&lt;/script&gt;&quot;"));
    assert!(!page.contains("<script>alert('total')"));

    // An escalation built by a driver outside the crate: the model chose the
    // field name, the message and the hint are free text.
    let at = FieldPath::root().key("<b onmouseover='x'>field</b>");
    let violation =
        Violation::new(Layer::Structure, Code::MISSING_FIELD, at, "<script>alert(\"message\")</script>");
    let chain = vec![FailedAttempt::new(1, Violations::one(violation), Usage::new(5, 1))];
    let output = json!({"<b onmouseover='x'>field</b>": null});
    let hint = "<script>document.write('hint')</script> \"quoted\" & more";
    let escalation =
        Escalation::new(Reason::NotRecoverable, chain, Some(output), Some(hint.into()), Usage::new(5, 1));
    let mut stats = Stats::new();
    stats.record(&Outcome::<()>::Escalated(escalation.clone()));
    let page = Report::new(&stats).escalation("id\"><script>x</script>", &escalation).html();
    assert!(page.contains("&lt;script&gt;alert(&quot;message&quot;)&lt;/script&gt;"), "the message");
    assert!(
        page.contains("&lt;script&gt;document.write('hint')&lt;/script&gt; &quot;quoted&quot; &amp; more")
    );
    assert!(page.contains("<li><code>&lt;b onmouseover='x'&gt;field&lt;/b&gt;</code>"), "the field");
    assert!(page.contains("<tr data-document=\"id&quot;&gt;&lt;script&gt;x&lt;/script&gt;\">"), "the id");
    // The fingerprint's path carries the model's key too, in the chart and the table.
    assert!(!page.contains("<b onmouseover"));
    assert_no_script_and_nothing_fetched(&page);
}

fn assert_no_script_and_nothing_fetched(page: &str) {
    let lower = page.to_lowercase();
    assert!(!lower.contains("<script"), "no script");
    assert!(!lower.contains("http://") && !lower.contains("https://"), "no link to fetch");
    let tags = ["<img", "<link", "<iframe", "<object", "<embed", "<audio", "<video", "<source", "<base"];
    for fetch in tags.into_iter().chain([" src=\"", " href=\"", "url(", "@import"]) {
        assert!(!lower.contains(fetch), "nothing fetched: {fetch}");
    }
}

#[test]
fn the_page_is_one_self_contained_file() {
    let run = run();
    let page = page(&run);
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(page.ends_with("</html>\n"));
    assert_eq!(page.matches("<style>").count(), 1, "the CSS is inline");
    assert_eq!(page.matches("<svg class=\"chart\"").count(), 4, "outcomes, attempts, Pareto, tokens");
    assert_no_script_and_nothing_fetched(&page);
}

#[test]
fn stats_display_shows_the_same_figures_as_text() {
    let run = run();
    let stats = &run.stats;
    let text = stats.to_string();
    let n = stats.extractions();
    let line = |label: &str| {
        text.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no line `{label}`:\n{text}"))
    };
    let words = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        words(line("valid within budget"))[3..],
        [stats.valid().to_string(), percent(stats.valid(), n)]
    );
    assert_eq!(
        words(line("  after a correction"))[3..],
        [(stats.valid() - stats.first_attempt_valid()).to_string(), percent(2, n)]
    );
    for reason in Reason::ALL {
        let count = stats.escalations(reason);
        assert_eq!(words(line(&format!("  {reason}")))[1..], [count.to_string(), percent(count, n)]);
    }
    for (attempts, count) in stats.attempts_histogram() {
        assert_eq!(words(line(&format!("  {attempts}    ")))[1..], [count.to_string(), percent(*count, n)]);
    }
    let occurrences: u64 = stats.violations().iter().map(|(_, c)| c).sum();
    let mut running = 0;
    for (fingerprint, count) in stats.violations() {
        running += count;
        let expected = format!(
            "{count:>8}  {:>6}  {:>6}  {fingerprint}",
            percent(count, stats.failed_attempts()),
            percent(running, occurrences)
        );
        assert!(text.lines().any(|l| l == expected), "`{expected}`:\n{text}");
    }
    for (attempt, u) in stats.usage_by_attempt() {
        let expected = [
            attempt.to_string(),
            u.input_tokens.to_string(),
            u.output_tokens.to_string(),
            u.cache_read_tokens.to_string(),
            u.cache_write_tokens.to_string(),
            u.total().to_string(),
        ];
        assert!(text.lines().any(|l| l.starts_with("  ") && words(l) == expected), "{expected:?}:\n{text}");
    }
    let dominant = stats.dominant().unwrap();
    assert!(text.contains(&format!("fix: {}", dominant.fix)));
    let json = serde_json::to_value(stats).unwrap();
    assert_eq!(
        json["usage_by_attempt"]["2"]["cache_read_tokens"],
        stats.usage_by_attempt()[&2].cache_read_tokens
    );
}

/// A model that invents 20,000 keys, twice: 20,000 fingerprints, an
/// escalation failing 20,000 fields, listed beside 5,000 other escalations
/// and 5,000 documents' quotes. Every table is cut and says by how much.
#[test]
fn a_model_inventing_20_000_keys_does_not_make_a_huge_page() {
    const KEYS: usize = 20_000;
    let invented: serde_json::Map<String, Value> =
        (0..KEYS).map(|i| (format!("invented_key_{i:05}"), json!(i))).collect();
    let tool = Receipt::tool();
    // The validator refuses every key by name, as the structure layer does an unknown field.
    let refuse_every_key = |output: &Value, _: &str| -> Result<(), Violations> {
        let keys = output.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        let all = keys.into_iter().map(|key| {
            let message = format!("unknown field `{key}`");
            Violation::new(Layer::Structure, Code::UNKNOWN_FIELD, FieldPath::root().key(key), message)
        });
        Err(Violations::new(all.collect()).expect("keys were invented"))
    };
    let model = Scripted::new([Value::Object(invented.clone()), Value::Object(invented)]);
    let outcome = Extractor::new(model)
        .retries(Retries::new(1).unwrap())
        .extract_with_blocking(tool, DOCUMENT, refuse_every_key)
        .unwrap();
    let Outcome::Escalated(big) = &outcome else { panic!("the keys are refused") };
    assert_eq!(big.partial.failed.len(), KEYS);
    let hint = big.fix_hint.as_deref().unwrap();
    assert_eq!(hint.lines().count(), 9, "eight repeated keys and a count of the rest: {hint}");
    assert!(hint.ends_with(&format!(
        "and {} more that repeat: the last attempt's violations list them all",
        KEYS - 8
    )));

    let corpus = run();
    let mut stats = Stats::new();
    stats.record(&outcome);
    assert_eq!(stats.violations().len(), KEYS);
    let small = corpus.outcomes.iter().find_map(|(_, o)| o.escalation()).unwrap();
    let sources = corpus.outcomes.iter().find_map(|(_, o)| o.valid().map(|v| v.sources())).unwrap();
    assert!(!sources.is_empty());
    let ids: Vec<String> = (0..5_000).map(|i| format!("doc-{i:05}")).collect();
    let quoted: Vec<String> = (0..5_000).map(|i| format!("valid-{i:05}")).collect();
    let mut report = Report::new(&stats).escalation("big", big);
    for id in &ids {
        report = report.escalation(id, small);
    }
    for id in &quoted {
        report = report.sources(id, sources);
    }
    let page = report.html();

    // About 110 KB; uncapped, this corpus makes a page of megabytes.
    assert!(page.len() < 256 * 1024, "the page is {} bytes", page.len());
    let pareto = element(&page, "<table class=\"pareto\">", "</table>");
    assert_eq!(
        pareto.matches("<tr><td class=\"num\">").count() + pareto.matches("<tr class=\"dominant\">").count(),
        100
    );
    assert!(pareto.contains(&format!("and {} more fingerprints, not shown", KEYS - 100)), "{pareto}");
    let escalations = element(&page, "<table class=\"escalations\">", "</table>");
    assert_eq!(escalations.matches("<tr data-document=").count(), 100);
    assert!(escalations.contains(&format!("and {} more escalations, not shown", 5_001 - 100)));
    let big_row = element(escalations, "<tr data-document=\"big\">", "</tr>");
    assert_eq!(big_row.matches("<li><code>").count(), 12);
    assert!(big_row.contains(&format!("and {} more fields", KEYS - 12)), "{big_row}");
    let quotes = element(&page, "<table class=\"quotes\">", "</table>");
    assert_eq!(quotes.matches("<tr data-document=").count(), 100);
    assert!(quotes.contains(&format!("and {} more quotes, not shown", 5_000 * sources.len() - 100)));
    assert_no_script_and_nothing_fetched(&page);
}

#[test]
fn the_summary_shows_the_runs_cost_or_says_it_is_unknown() {
    #[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
    struct Total {
        total: f64,
    }
    let reply = || Reply::tool_call(json!({"total": 4.5})).with_usage(Usage::new(10_000, 1_000));
    let prices = extract::cost::PriceTable::new()
        .with("scripted", extract::cost::Prices::per_million(3.0, 15.0, 0.3, 3.75));
    let mut stats = Stats::new();
    for _ in 0..2 {
        let outcome = Extractor::new(Scripted::new([reply()]))
            .prices(prices.clone())
            .extract_blocking::<Total>("Total 4.50")
            .unwrap();
        stats.record(&outcome);
    }
    // Two outcomes of 10,000 × $3 + 1,000 × $15 per million: $0.045 each.
    let page = Report::new(&stats).html();
    let card = element(&page, "data-figure=\"cost\"", "</div>");
    assert!(card.contains(">$0.0900</div>"), "{card}");

    let unpriced = Extractor::new(Scripted::new([reply()])).extract_blocking::<Total>("Total 4.50").unwrap();
    stats.record(&unpriced);
    let page = Report::new(&stats).html();
    assert!(page.contains("1 outcome(s) without a price"), "a partial sum says so");
    let mut none = Stats::new();
    none.record(&unpriced);
    let page = Report::new(&none).html();
    assert!(element(&page, "data-figure=\"cost\"", "</div>").contains(">unknown</div>"));
}
