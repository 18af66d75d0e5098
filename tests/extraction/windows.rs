//! Long documents gathered window by window (`Extractor::windows`), against
//! the long corpus of `examples/long/` and its stand-in model
//! (`examples/common/long_stand_in.rs`): the merge keeps each item once, in
//! document order, with its page; a boundary mistake is dropped by
//! ownership; a skipped item is found by the whole check and added by a
//! patch; every call offers the same tools; an answer cut by the output
//! limit splits its window; a window's own violations are corrected in that
//! window, and an escalation's chain says which part each entry belongs to.

use std::future::Future;

use extract::model::{BlockKind, Model, ModelFuture, Prompt, Reply};
use extract::run::{PATCH_TOOL, Part};
use extract::testing::Scripted;
use extract::{ErrorKind, Extractable, Extractor, Outcome, Sourced, Validated, Windows};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::long_documents::{LongDocument, Statement, long_document};
use crate::support::long_stand_in::{Faults, LongStandIn, windows_named};

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future)
}

fn statement(model: impl Model + 'static, document: &LongDocument, windows: Windows) -> Outcome<Statement> {
    block_on(Extractor::new(model).windows(windows).extract::<Statement>(document.text.as_str())).unwrap()
}

/// Asserts that the merged list is the truth's: each item once, in document order.
fn assert_merged_exactly(valid: &Validated<Statement>, document: &LongDocument) {
    let merged = serde_json::to_value(&valid.value().transactions).unwrap();
    let quotes = |items: &[Value]| -> Vec<String> {
        items.iter().map(|item| item["description"]["quote"].as_str().unwrap().to_string()).collect()
    };
    let (got, want) = (quotes(merged.as_array().unwrap()), quotes(document.items()));
    if let Some(at) = (0..got.len().max(want.len())).find(|i| got.get(*i) != want.get(*i)) {
        panic!(
            "{}: {} items merged, {} in the truth; first difference at {at}: {:?} instead of {:?}",
            document.name,
            got.len(),
            want.len(),
            got.get(at),
            want.get(at)
        );
    }
    assert_eq!(merged.as_array().unwrap(), document.items(), "every field of every item");
}

#[test]
fn a_statement_of_40_pages_merges_to_exactly_its_800_items_with_their_pages() {
    let document = long_document("statement-40");
    assert_eq!((document.pages(), document.items().len()), (40, 800));
    let model = LongStandIn::of(Faults::exact(), &document);
    let outcome = statement(model.clone(), &document, Windows::pages(3));
    let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
    assert_merged_exactly(valid, &document);
    // One call a window, none for the whole: the merge was valid as it is.
    let windows = Windows::pages(3).split(&document.text);
    assert_eq!(windows.len(), 14);
    assert_eq!((model.calls(), valid.attempts()), (14, 14));
    let parts: Vec<Part> = model.prompts().iter().map(Prompt::part).collect();
    assert_eq!(parts, windows.iter().map(|w| w.part()).collect::<Vec<_>>());
    // Each transaction's page: where its quote starts.
    let pages: Vec<Option<u32>> = valid
        .sources()
        .iter()
        .filter(|source| source.path.to_string().starts_with("transactions["))
        .map(|source| source.page)
        .collect();
    assert_eq!(pages.len(), 800);
    let expected: Vec<Option<u32>> = document
        .items()
        .iter()
        .scan(0, |from, item| {
            let quote = item["description"]["quote"].as_str().unwrap();
            let at = *from + document.text[*from..].find(quote).unwrap();
            *from = at + 1;
            Some(Some(u32::try_from(document.text[..at].matches('\u{c}').count() + 1).unwrap()))
        })
        .collect();
    assert_eq!(pages, expected);
    assert_eq!(pages.last(), Some(&Some(40)));
    let packet = serde_json::to_value(&outcome).unwrap();
    assert_eq!(packet["sources"][800]["page"], 40, "the ok packet says the page");
}

#[test]
fn every_call_offers_the_same_tools_system_and_document_and_names_its_window_after_it() {
    let document = long_document("statement-12");
    let model = LongStandIn::of(Faults::exact().skipping(100).seeded(3), &document);
    let outcome = statement(model.clone(), &document, Windows::pages(4));
    assert!(outcome.is_valid(), "{outcome:#?}");
    let prompts = model.prompts();
    assert!(prompts.last().unwrap().part() == Part::Whole, "a skipped item makes a whole correction");
    let first = &prompts[0];
    let names = |prompt: &Prompt| prompt.offered_tools().iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(first), [Statement::tool().name, PATCH_TOOL.to_string()]);
    for prompt in &prompts {
        assert_eq!(prompt.offered_tools(), first.offered_tools(), "tools, in order: one cached prefix");
        assert_eq!((&prompt.system, &prompt.document), (&first.system, &first.document));
        let blocks = prompt.blocks();
        let document_at = blocks.iter().position(|b| b.kind == BlockKind::Document).unwrap();
        let task_at = blocks.iter().position(|b| b.kind == BlockKind::Task).unwrap();
        assert!(task_at > document_at, "the task comes after the document");
        match prompt.part() {
            Part::Window(_) => assert_eq!(windows_named(prompt).len(), 1, "{}", blocks[task_at].text),
            Part::Whole => {
                assert!(prompt.asks_for_patch());
                assert!(
                    windows_named(prompt).len() > 1,
                    "the whole's task gives each window's count and sum"
                );
                assert!(blocks[task_at].text.contains("`amount` sums to"), "{}", blocks[task_at].text);
            }
        }
    }
    // Window 1 is asked for every field, later windows for their lists.
    assert!(prompts[0].offered_tools().len() == 2);
    let task = |prompt: &Prompt| prompt.windowed.as_ref().unwrap().task.clone();
    assert!(task(&prompts[0]).contains("every field"), "{}", task(&prompts[0]));
    assert!(task(&prompts[1]).contains("known already"), "{}", task(&prompts[1]));
}

#[test]
fn a_boundary_item_appears_once_and_a_skipped_item_is_added_by_a_patch_of_the_whole() {
    let document = long_document("statement-30");
    // Every window answer strays into the next page and skips an item.
    let model = LongStandIn::of(Faults::exact().straying(100).skipping(100).seeded(7), &document);
    let outcome = statement(model.clone(), &document, Windows::pages(2));
    let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
    assert_merged_exactly(valid, &document);
    let whole: Vec<Prompt> = model.prompts().into_iter().filter(|p| p.part() == Part::Whole).collect();
    assert!(!whole.is_empty(), "the sum over the merged list found the gaps");
    assert!(whole.iter().all(Prompt::asks_for_patch));
    assert_eq!(valid.attempts() as usize, model.calls(), "attempts count every call");
}

#[test]
fn the_whole_is_corrected_when_a_window_keeps_its_gap() {
    // Window answers hold at most 10 items: 12-page windows of a 40-page
    // statement lose most of theirs, and the patches of the whole bring
    // them back, 10 at a time, until the budget of the whole runs out.
    let document = long_document("statement-40");
    let model = LongStandIn::of(Faults::exact().capped(10), &document);
    let outcome = statement(model.clone(), &document, Windows::pages(12));
    let escalation = outcome.escalation().unwrap_or_else(|| panic!("{outcome:#?}"));
    let packet = serde_json::to_value(escalation).unwrap();
    let chain = packet["error_chain"].as_array().unwrap();
    assert!(!chain.is_empty());
    assert!(chain.iter().all(|entry| entry["window"].is_null()), "the whole's entries: {chain:#?}");
    assert!(chain.iter().all(|entry| entry.as_object().unwrap().contains_key("window")));
    // The last output is the merged list with the patches applied, in document order.
    let merged = escalation.last_output.as_ref().unwrap()["transactions"].as_array().unwrap();
    assert!(merged.len() > 40 && merged.len() < 600, "{}", merged.len());
    // In document order: the merged items are the truth's, some left out.
    let quote = |item: &Value| item["description"]["quote"].as_str().unwrap().to_string();
    let mut truth = document.items().iter().map(quote);
    assert!(merged.iter().map(quote).all(|q| truth.any(|t| t == q)), "a subsequence of the truth");
    assert!(escalation.partial.held.contains_key("account"), "{:?}", escalation.partial);
}

/// A model that answers like `inner`, except that a window answer of more
/// than `items` items is cut by the output limit (`max_tokens`).
#[derive(Clone)]
struct CutsLongAnswers {
    inner: LongStandIn,
    items: usize,
}

impl Model for CutsLongAnswers {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let reply = self.inner.call(prompt).await?;
            let count = match &reply.content {
                extract::model::ReplyContent::ToolCall { input, .. } => {
                    input["transactions"].as_array().map_or(0, Vec::len)
                }
                _ => 0,
            };
            let window = matches!(prompt.part(), Part::Window(_));
            Ok(if window && count > self.items { Reply::truncated() } else { reply })
        })
    }

    fn name(&self) -> &str {
        "cuts-long-answers"
    }
}

#[test]
fn an_answer_cut_by_the_output_limit_splits_its_window_in_two() {
    let document = long_document("statement-12");
    let inner = LongStandIn::of(Faults::exact(), &document);
    // Windows of 6 pages hold about 90 items; answers of more than 50 are cut.
    let model = CutsLongAnswers { inner: inner.clone(), items: 50 };
    let outcome = statement(model, &document, Windows::pages(6));
    let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
    assert_merged_exactly(valid, &document);
    let parts: Vec<Part> = inner.prompts().iter().map(Prompt::part).collect();
    let window = |n: u32| Part::Window(n.try_into().unwrap());
    // Windows 1 and 2 are cut; each is asked again as two halves, numbered
    // by the window they halve (1: 3 and 5; 2: 4 and 6), window 1's head alone.
    assert_eq!(parts, [window(1), window(3), window(5), window(2), window(4), window(6)], "{parts:?}");
    assert!(valid.failed_attempts().is_empty(), "a cut answer is no failed attempt");
    assert_eq!(valid.attempts(), 6, "but it is a call");
    let halves: Vec<String> =
        inner.prompts()[1..3].iter().map(|p| p.windowed.as_ref().unwrap().task.clone()).collect();
    assert!(halves[0].contains("pages 1 to"), "{}", halves[0]);
    assert!(halves[1].contains("to 6"), "{}", halves[1]);
}

/// The stand-in, counting the calls in flight: each call yields once
/// before it answers, so the calls a driver sends together are all in
/// flight at that moment.
#[derive(Clone)]
struct Gauge {
    inner: LongStandIn,
    state: std::sync::Arc<std::sync::Mutex<(usize, usize, Vec<usize>)>>,
}

impl Gauge {
    fn new(inner: LongStandIn) -> Gauge {
        Gauge { inner, state: Default::default() }
    }

    /// The most calls in flight at once, and how many were in flight as each call started.
    fn seen(&self) -> (usize, Vec<usize>) {
        let state = self.state.lock().unwrap();
        (state.1, state.2.clone())
    }
}

impl Model for Gauge {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            {
                let mut state = self.state.lock().unwrap();
                state.0 += 1;
                state.1 = state.1.max(state.0);
                let now = state.0;
                state.2.push(now);
            }
            tokio::task::yield_now().await;
            let reply = self.inner.call(prompt).await;
            self.state.lock().unwrap().0 -= 1;
            reply
        })
    }

    fn name(&self) -> &str {
        "gauge"
    }
}

#[test]
fn windows_after_the_first_are_asked_in_waves_of_at_once() {
    let document = long_document("statement-40");
    for (windows, most) in
        [(Windows::pages(3), 4), (Windows::pages(3).at_once(6), 6), (Windows::pages(3).at_once(1), 1)]
    {
        let inner = LongStandIn::of(Faults::exact(), &document);
        let gauge = Gauge::new(inner.clone());
        let outcome = statement(gauge.clone(), &document, windows);
        let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
        assert_merged_exactly(valid, &document);
        let (seen, at_start) = gauge.seen();
        assert_eq!(seen, most, "{windows:?}");
        assert_eq!(at_start[0], 1, "window 1 alone: it writes the cache the others read");
        // The same calls, in the same order, whatever the number at once.
        let parts: Vec<Part> = inner.prompts().iter().map(Prompt::part).collect();
        let expected: Vec<Part> = Windows::pages(3).split(&document.text).iter().map(|w| w.part()).collect();
        assert_eq!(parts, expected);
    }
    let error = Extractor::new(Scripted::new([json!({})]))
        .windows(Windows::pages(3).at_once(0))
        .extract_blocking::<Ledger>(LEDGER)
        .unwrap_err();
    assert!(error.to_string().contains("at_once(0)"), "{error}");
}

/// A ledger of rows over pages: the smallest type with a per-window list.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(rows.amount) == total)]
struct Ledger {
    total: f64,
    #[extract(per_window)]
    rows: Vec<Row>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Row {
    line: Sourced<String>,
    amount: f64,
}

const LEDGER: &str = "Ledger, total 3\nrent 1\n\u{c}Page 2\nfood 2\n";

fn row(line: &str, amount: f64) -> Value {
    json!({"line": {"value": line, "quote": line}, "amount": amount})
}

fn ledger(model: &Scripted) -> Outcome<Ledger> {
    Extractor::new(model.clone()).windows(Windows::pages(1)).extract_blocking::<Ledger>(LEDGER).unwrap()
}

#[test]
fn a_windows_own_violation_is_corrected_in_that_window_at_the_answers_own_index() {
    let model = Scripted::new([
        json!({"total": 3.0, "rows": [row("rent 1", 1.0)]}),
        // Window 2: an item of window 1 (dropped), and one quoted from nowhere.
        json!({"total": 0.0, "rows": [row("rent 1", 1.0), row("fod 2", 2.0)]}),
        json!({"total": 0.0, "rows": [row("food 2", 2.0)]}),
    ]);
    let outcome = ledger(&model);
    let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
    assert_eq!(valid.value().rows.len(), 2);
    let prompts = model.prompts();
    let window_2 = Part::Window(2.try_into().unwrap());
    assert_eq!(prompts.iter().map(Prompt::part).collect::<Vec<_>>()[1..], [window_2, window_2]);
    let correction = prompts[2].correction.as_ref().unwrap();
    assert!(
        correction.violations.contains("rows[1].line"),
        "the answer's own index: {}",
        correction.violations
    );
    assert!(
        !correction.violations.contains("sum("),
        "the sum waits for the merge: {}",
        correction.violations
    );
    let failed = &valid.failed_attempts()[0];
    assert_eq!((failed.part, failed.attempt), (Some(window_2), 1));
    assert_eq!(serde_json::to_value(failed).unwrap()["window"], 2);
}

#[test]
fn an_escalation_carries_every_parts_chain_and_the_merged_fields_that_passed() {
    let wrong = json!({"total": 0.0, "rows": [row("fod 2", 2.0)]});
    let model = Scripted::new([json!({"total": 3.0, "rows": [row("rent 1", 1.0)]}), wrong.clone(), wrong]);
    let outcome = ledger(&model);
    let escalation = outcome.escalation().unwrap_or_else(|| panic!("{outcome:#?}"));
    let packet = serde_json::to_value(escalation).unwrap();
    assert_eq!(packet["reason"], "systematic");
    let windows: Vec<&Value> =
        packet["error_chain"].as_array().unwrap().iter().map(|e| &e["window"]).collect();
    assert_eq!(windows, [&json!(2), &json!(2)]);
    assert_eq!(escalation.attempts(), 3, "every call: window 1's passed, window 2's two failed");
    assert_eq!(outcome.attempts(), 3);
    assert_eq!(escalation.partial.held.get("total"), Some(&json!(3.0)), "{:?}", escalation.partial);
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Flat {
    total: f64,
}

#[test]
fn settings_windows_cannot_take_are_configuration_errors_that_say_so() {
    let model = Scripted::new([json!({"total": 1.0})]);
    let error = Extractor::new(model.clone())
        .windows(Windows::pages(2))
        .extract_blocking::<Flat>("Total 1")
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.to_string().contains("per_window"), "{error}");
    let error = Extractor::new(model.clone())
        .windows(Windows::pages(0))
        .extract_blocking::<Ledger>(LEDGER)
        .unwrap_err();
    assert!(error.to_string().contains("pages(0)"), "{error}");
    assert!(model.prompts().is_empty(), "no call was made");
    let streamed: Vec<_> =
        Extractor::new(model.clone()).windows(Windows::pages(1)).stream_blocking::<Ledger>(LEDGER).collect();
    let error = streamed[0].as_ref().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.to_string().contains("windows"), "{error}");
}

// ---------------------------------------------------------------------
// failing tests of defects found in review.
// ---------------------------------------------------------------------

/// Rows without a check over the whole: nothing finds a lost row.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Fees {
    #[extract(per_window)]
    rows: Vec<Row>,
}

/// A fee that repeats at the top of page 2, before the page's first line of its own.
const FEES: &str = "Fees of March\nFee 1.00\nRent 9.00\n\u{c}Fee 1.00\nFood 2.00\n";

#[test]
fn a_repeated_line_at_the_top_of_a_page_is_not_lost() {
    // Window 1 is told it ends where window 2 starts ("Food 2.00"), so it
    // answers the fee atop page 2 too; window 2 answers its page, that fee
    // included (a stray: window 1 owns it).
    let model = Scripted::new([
        json!({"rows": [row("Fee 1.00", 1.0), row("Rent 9.00", 9.0), row("Fee 1.00", 1.0)]}),
        json!({"rows": [row("Fee 1.00", 1.0), row("Food 2.00", 2.0)]}),
    ]);
    let outcome =
        Extractor::new(model.clone()).windows(Windows::pages(1)).extract_blocking::<Fees>(FEES).unwrap();
    let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
    let tasks: Vec<String> =
        model.prompts().iter().map(|p| p.windowed.as_ref().unwrap().task.clone()).collect();
    assert!(tasks[0].contains(r#"up to, not including, the line "Food 2.00""#), "{}", tasks[0]);
    assert_eq!(valid.value().rows.len(), 4, "each fee once; the tasks were {tasks:#?}");
    let pages: Vec<Option<u32>> = valid.sources().iter().map(|s| s.page).collect();
    assert_eq!(pages, [Some(1), Some(1), Some(2), Some(2)], "each fee on its own page");
}

/// A model that answers with `usage` tokens per call, from a script.
#[derive(Clone)]
struct Billed {
    replies: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<Value>>>,
    usage: extract::Usage,
}

impl Model for Billed {
    fn call<'a>(&'a self, _prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let input = self.replies.lock().unwrap().pop_front().expect("a scripted reply");
            Ok(Reply::tool_call(input).with_usage(self.usage))
        })
    }

    fn name(&self) -> &str {
        "billed"
    }
}

#[test]
fn the_token_budget_caps_the_whole_document_not_each_window() {
    // 400 tokens a call, a budget of 1000 per extraction: after window 1
    // (400) and window 2's failed attempt (400), another call would spend
    // 1200. Without windows the run ends `BudgetExhausted` there.
    let replies = [
        json!({"total": 3.0, "rows": [row("rent 1", 1.0)]}),
        json!({"total": 0.0, "rows": [row("fod 2", 2.0)]}),
        json!({"total": 0.0, "rows": [row("food 2", 2.0)]}),
    ];
    let model = Billed {
        replies: std::sync::Arc::new(std::sync::Mutex::new(replies.into())),
        usage: extract::Usage::new(400, 0),
    };
    let outcome = Extractor::new(model)
        .token_budget(1000)
        .windows(Windows::pages(1))
        .extract_blocking::<Ledger>(LEDGER)
        .unwrap();
    assert!(
        outcome.usage().total() <= 1000 || outcome.escalation().is_some(),
        "a budget of 1000 tokens per extraction spent {} and ended {}",
        outcome.usage().total(),
        if outcome.is_valid() { "valid" } else { "escalated" }
    );
}

/// Twelve lines of their own, with no check over the whole.
const TWELVE: &str =
    "row 1\nrow 2\nrow 3\nrow 4\nrow 5\nrow 6\nrow 7\nrow 8\nrow 9\nrow 10\nrow 11\nrow 12\n";

/// The window a task names: its first and last line.
fn named(task: &str) -> (String, String) {
    let json_string = |text: &str| -> (String, usize) {
        let mut strings = serde_json::Deserializer::from_str(text).into_iter::<String>();
        let string = strings.next().unwrap().unwrap();
        (string, strings.byte_offset())
    };
    let after = task.split_once("from the line ").unwrap().1;
    let (first, used) = json_string(after);
    let last = json_string(after[used..].split_once("through the line ").unwrap().1).0;
    (first, last)
}

/// The window each part named: its first and last line.
type Asked = Vec<(Part, (String, String))>;

/// Answers a window of one line with that line's row; any longer window
/// is cut by the output limit. Records the window each part named.
#[derive(Clone, Default)]
struct OneLineAnswers {
    asked: std::sync::Arc<std::sync::Mutex<Asked>>,
}

impl Model for OneLineAnswers {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let windowed = prompt.windowed.as_ref().expect("a windowed call");
            let (first, last) = named(&windowed.task);
            self.asked.lock().unwrap().push((prompt.part(), (first.clone(), last.clone())));
            Ok(if first == last {
                Reply::tool_call(json!({"rows": [row(&first, 1.0)]}))
            } else {
                Reply::truncated()
            })
        })
    }

    fn name(&self) -> &str {
        "one-line-answers"
    }
}

#[test]
fn a_windows_number_names_the_same_window_whatever_at_once_says() {
    // The journal keys a reply by its part (the window's number) under the
    // windows setting, which leaves `at_once` out ("changes no call"), and
    // replays by key. The halves of cut windows are numbered in the order
    // they are cut, which depends on how many windows a wave asks.
    let mut asked = Vec::new();
    for at_once in [1, 4] {
        let model = OneLineAnswers::default();
        let outcome = Extractor::new(model.clone())
            .windows(Windows::lines(4).at_once(at_once))
            .extract_blocking::<Fees>(TWELVE)
            .unwrap();
        let valid = outcome.valid().unwrap_or_else(|| panic!("{outcome:#?}"));
        assert_eq!(valid.value().rows.len(), 12);
        let by_part: std::collections::BTreeMap<Part, (String, String)> =
            model.asked.lock().unwrap().iter().cloned().collect();
        asked.push(by_part);
    }
    let differing: Vec<_> = asked[0]
        .iter()
        .filter_map(|(part, window)| {
            let other = asked[1].get(part)?;
            (other != window).then(|| (*part, window.clone(), other.clone()))
        })
        .collect();
    assert!(differing.is_empty(), "a window's number names another window under at_once(4): {differing:#?}");
}
