//! The stand-in model of long documents (`examples/common/long_stand_in.rs`)
//! on its own, before an engine calls it: it reads the window a prompt
//! names as `Windows::split` made it, answers that window's items in order
//! and at most 60, makes the mistakes it is told to (a skipped item, the
//! next page's first items), answers a whole-document call capped, patches
//! the items a merged output lacks, and bills the prompt cache as the API
//! does. The instruction sits where a prompt can hold it today: the system
//! block, or a correction's instruction block after the document (where the
//! engine's window instruction goes).

use std::future::Future;

use extract::model::{Model, Prompt, ReplyContent};
use extract::run::{Correction, PATCH_TOOL, Window, apply_patch, patch_tool};
use extract::{Document, Extractable, Extractor, Outcome, Retries, Tool, Usage, Windows};
use serde_json::Value;

use crate::support::long_documents::{LongDocument, LongInvoice, LongKind, Statement, long_document};
use crate::support::long_stand_in::{Faults, ITEMS_PER_ANSWER, LongStandIn, Named, windows_named};

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(future)
}

fn tool(kind: LongKind) -> Tool {
    match kind {
        LongKind::Statement => Statement::tool(),
        LongKind::Invoice => LongInvoice::tool(),
    }
}

/// The window instruction, as the design writes it.
fn instruction(document: &LongDocument, window: &Window) -> String {
    format!("Call `{}` with the {} {}.", tool(document.kind).name, document.kind.list(), window.described())
}

/// A window call with its instruction in the system block.
fn window_prompt(document: &LongDocument, window: &Window) -> Prompt {
    Prompt::new(tool(document.kind), document.text.as_str()).with_instructions(&instruction(document, window))
}

/// A window call with its instruction in a block after the document.
fn window_prompt_after_document(document: &LongDocument, window: &Window) -> Prompt {
    let mut prompt = Prompt::new(tool(document.kind), document.text.as_str());
    prompt.correction = Some(Correction {
        previous_output: String::new(),
        violations: String::new(),
        instruction: instruction(document, window),
    });
    prompt
}

/// The model's answer (a tool call's input) and its usage.
fn call(model: &LongStandIn, prompt: &Prompt) -> (Value, Usage, Option<String>) {
    let reply = block_on(model.call(prompt)).unwrap();
    let ReplyContent::ToolCall { name, input } = reply.content else { panic!("{:?}", reply.content) };
    (input, reply.usage, name)
}

/// Where each of the truth's items' quotes starts, each after the one before.
fn starts(document: &LongDocument) -> Vec<usize> {
    let mut from = 0;
    document
        .items()
        .iter()
        .map(|item| {
            let at =
                from + document.text[from..].find(item["description"]["quote"].as_str().unwrap()).unwrap();
            from = at + 1;
            at
        })
        .collect()
}

/// The truth's items whose quotes start in `window`.
fn own(document: &LongDocument, window: &Window) -> Vec<Value> {
    let starts = starts(document);
    document
        .items()
        .iter()
        .zip(&starts)
        .filter(|(_, at)| window.range.contains(at))
        .map(|(item, _)| item.clone())
        .collect()
}

fn listed<'a>(document: &LongDocument, answer: &'a Value) -> &'a [Value] {
    answer[document.kind.list()].as_array().unwrap()
}

/// The page (1-based) the byte `at` lies on.
fn page_at(text: &str, at: usize) -> usize {
    text[..at].matches('\u{c}').count() + 1
}

#[test]
fn a_window_answer_holds_that_windows_items_in_order_at_most_sixty() {
    for name in ["statement-40", "invoice-12", "invoice-08"] {
        let document = long_document(name);
        let windows = Windows::pages(3).split(&document.text);
        let capped = LongStandIn::of(Faults::exact().capped(ITEMS_PER_ANSWER), &document);
        let exact = LongStandIn::of(Faults::exact(), &document);
        let mut gathered: Vec<Value> = Vec::new();
        let mut cut = 0;
        for window in &windows {
            let prompt = window_prompt(&document, window);
            assert_eq!(
                windows_named(&prompt),
                [Named {
                    first: window.first_line.clone(),
                    last: window.last_line.clone(),
                    pages: window.pages
                }]
            );
            let own = own(&document, window);
            let (answer, _, _) = call(&capped, &prompt);
            let kept = own.len().min(ITEMS_PER_ANSWER);
            assert_eq!(listed(&document, &answer), &own[..kept], "{name}, window {}", window.number);
            cut += own.len() - kept;
            // Every other field, as the truth has it.
            for (field, value) in document.truth.as_object().unwrap() {
                if field != document.kind.list() {
                    assert_eq!(&answer[field], value, "{name}: {field}");
                }
            }
            let (answer, _, _) = call(&exact, &prompt);
            assert_eq!(listed(&document, &answer), own.as_slice());
            gathered.extend(own);
        }
        // The windows' items are the document's, each once, in order.
        assert_eq!(gathered, document.items(), "{name}");
        if name == "statement-40" {
            assert!(cut > 0, "some window of statement-40 holds more than {ITEMS_PER_ANSWER} items");
        }
    }
}

#[test]
fn a_boundary_mistake_adds_the_first_items_of_the_next_page() {
    let document = long_document("statement-12");
    let windows = Windows::pages(3).split(&document.text);
    let model = LongStandIn::of(Faults::exact().straying(100), &document);
    let starts = starts(&document);
    for window in &windows {
        let (answer, _, _) = call(&model, &window_prompt(&document, window));
        let answered = listed(&document, &answer);
        let own = own(&document, window);
        assert_eq!(&answered[..own.len()], own.as_slice());
        let strays = &answered[own.len()..];
        if window.number as usize == windows.len() {
            assert!(strays.is_empty(), "nothing comes after the last window");
            continue;
        }
        assert!((1..=2).contains(&strays.len()), "window {}: {} strays", window.number, strays.len());
        let after: Vec<usize> = (0..starts.len()).filter(|i| starts[*i] >= window.range.end).collect();
        let next_page = window.pages.unwrap().1 as usize + 1;
        for (stray, i) in strays.iter().zip(after) {
            assert_eq!(stray, &document.items()[i]);
            assert_eq!(page_at(&document.text, starts[i]), next_page, "an item of the next page");
        }
    }
}

#[test]
fn a_skipped_item_leaves_the_others_in_order() {
    let document = long_document("invoice-05");
    let model = LongStandIn::of(Faults::exact().skipping(100), &document);
    for window in Windows::pages(2).split(&document.text) {
        let (answer, _, _) = call(&model, &window_prompt(&document, &window));
        let answered = listed(&document, &answer);
        let own = own(&document, &window);
        assert_eq!(answered.len(), own.len() - 1, "window {}", window.number);
        let mut rest = own.iter();
        assert!(answered.iter().all(|item| rest.any(|o| o == item)), "the rest in order");
    }
}

#[test]
fn a_whole_document_call_gets_every_field_and_the_first_sixty_items() {
    let document = long_document("statement-40");
    let model = LongStandIn::of(Faults::realistic(3), &document);
    let prompt = Prompt::new(Statement::tool(), document.text.as_str());
    assert!(windows_named(&prompt).is_empty());
    let (answer, _, _) = call(&model, &prompt);
    let mut expected = document.truth.clone();
    expected["transactions"] = Value::Array(document.items()[..ITEMS_PER_ANSWER].to_vec());
    assert_eq!(answer, expected);

    // Several windows named (a correction listing each window's sum): the whole document.
    let windows = Windows::pages(3).split(&document.text);
    let both = format!("{}; {}", instruction(&document, &windows[0]), instruction(&document, &windows[1]));
    let prompt = Prompt::new(Statement::tool(), document.text.as_str()).with_instructions(&both);
    assert_eq!(windows_named(&prompt).len(), 2);
    assert_eq!(call(&model, &prompt).0, expected);
}

#[test]
fn a_model_reading_pages_answers_the_item_atop_a_page_the_window_before_owns() {
    // invoice-08 prints page 3's last line again as page 4's first: that
    // line is not page 4's own, so window 2 starts at page 4's second line.
    let document = long_document("invoice-08");
    let windows = Windows::pages(3).split(&document.text);
    let page_4 = document.text.split('\u{c}').nth(3).unwrap();
    let (top, second) = (page_4.lines().next().unwrap(), page_4.lines().nth(1).unwrap());
    assert_eq!(windows[1].first_line, second.trim());
    let first_quote = |model: &LongStandIn| {
        let (answer, _, _) = call(model, &window_prompt(&document, &windows[1]));
        answer["line_items"][0]["description"]["quote"].as_str().unwrap().to_string()
    };
    assert_eq!(first_quote(&LongStandIn::of(Faults::exact(), &document)), second);
    assert_eq!(first_quote(&LongStandIn::of(Faults::exact().reading_pages(), &document)), top);
}

#[test]
fn a_patch_request_adds_the_items_the_merged_output_lacks() {
    let document = long_document("statement-12");
    let quotes: Vec<&str> =
        document.items().iter().map(|item| item["description"]["quote"].as_str().unwrap()).collect();
    // Drop the second of two identical lines, and two more.
    let twin = (0..quotes.len() - 1).find(|i| quotes[*i] == quotes[i + 1]).unwrap() + 1;
    let mut dropped = [5, twin, 100];
    dropped.sort();
    let mut merged = document.truth.clone();
    merged["transactions"] = document
        .items()
        .iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, item)| item.clone())
        .collect();
    let violations = extract::validate::<Statement>(&merged, &document.text).unwrap_err();
    let mut prompt = Prompt::new(patch_tool(), document.text.as_str());
    prompt.correction = Some(Correction::patch(merged.to_string(), &violations));
    assert!(prompt.asks_for_patch());

    let model = LongStandIn::of(Faults::realistic(1), &document);
    let (patch, _, name) = call(&model, &prompt);
    assert_eq!(name.as_deref(), Some(PATCH_TOOL));
    let operations = patch["patch"].as_array().unwrap();
    let added: Vec<&Value> = operations.iter().map(|op| &op["value"]).collect();
    let expected: Vec<&Value> = dropped.iter().map(|i| &document.items()[*i]).collect();
    assert_eq!(added, expected, "the missing items, the identical line's twin among them");
    assert!(operations.iter().all(|op| op["op"] == "add" && op["path"] == "/transactions/-"));
    let patched = apply_patch(&merged, &patch).unwrap();
    assert_eq!(patched["transactions"].as_array().unwrap().len(), document.items().len());
    extract::validate::<Statement>(&patched, &document.text).unwrap();
}

#[test]
fn the_prompt_cache_is_read_on_a_second_call_with_the_same_prefix() {
    let document = long_document("statement-30");
    let windows = Windows::pages(3).split(&document.text);
    let model = LongStandIn::of(Faults::exact(), &document);

    // The same call twice: written, then read.
    let prompt = window_prompt(&document, &windows[0]);
    let (_, first, _) = call(&model, &prompt);
    let (_, second, _) = call(&model, &prompt);
    assert!(first.cache_write_tokens >= document.text.len() as u64 / 4, "{first:?}");
    assert_eq!(first.cache_read_tokens, 0);
    assert_eq!((second.cache_read_tokens, second.cache_write_tokens), (first.cache_write_tokens, 0));
    assert!(first.output_tokens > 0 && first.output_tokens == second.output_tokens);

    // Another instruction in the system block is another prefix: written again.
    let (_, other, _) = call(&model, &window_prompt(&document, &windows[1]));
    assert_eq!(other.cache_read_tokens, 0);
    assert!(other.cache_write_tokens > 0);

    // Instructions after the document share one prefix: the first writes,
    // every later window reads, and pays its instruction as input.
    let (_, first, _) = call(&model, &window_prompt_after_document(&document, &windows[0]));
    assert!(first.cache_write_tokens > 0 && first.cache_read_tokens == 0);
    for window in &windows[1..] {
        let prompt = window_prompt_after_document(&document, window);
        let (answer, usage, _) = call(&model, &prompt);
        assert_eq!(listed(&document, &answer), own(&document, window).as_slice(), "read after the document");
        assert_eq!((usage.cache_read_tokens, usage.cache_write_tokens), (first.cache_write_tokens, 0));
        assert!(usage.input_tokens > 0);
    }
    assert_eq!(model.calls(), 3 + windows.len());
    assert_eq!(model.prompts()[0], prompt);
}

#[test]
fn realistic_faults_are_the_same_whatever_order_windows_are_called_in() {
    // Over the windows of two statements, the realistic faults show: a
    // skip, a stray (at the end of a window of fewer than 60 items; past
    // 60 the cap cuts it, as a model that stops early never reaches the
    // next page), a cut.
    let (mut skipped, mut strayed, mut cut) = (0, 0, 0);
    for name in ["statement-40", "statement-30"] {
        let document = long_document(name);
        let windows = Windows::pages(3).split(&document.text);
        let forward = LongStandIn::of(Faults::realistic(11), &document);
        let backward = LongStandIn::of(Faults::realistic(11), &document);
        let answers: Vec<Value> =
            windows.iter().map(|window| call(&forward, &window_prompt(&document, window)).0).collect();
        for (window, answer) in windows.iter().zip(&answers).rev() {
            assert_eq!(&call(&backward, &window_prompt(&document, window)).0, answer);
        }
        for (window, answer) in windows.iter().zip(&answers) {
            let own = own(&document, window);
            let answered = listed(&document, answer);
            let kept = answered.iter().filter(|item| own.contains(item)).count();
            strayed += usize::from(kept < answered.len());
            skipped += usize::from(kept < own.len().min(ITEMS_PER_ANSWER));
            cut += usize::from(own.len() > ITEMS_PER_ANSWER && answered.len() == ITEMS_PER_ANSWER);
        }
    }
    assert!(skipped > 0 && strayed > 0 && cut > 0, "skipped {skipped}, strayed {strayed}, cut {cut}");
}

#[test]
fn through_the_extractor_one_call_holds_a_short_list_and_not_a_long_one() {
    let short = long_document("statement-05");
    let model = LongStandIn::of(Faults::exact().capped(ITEMS_PER_ANSWER), &short);
    let outcome = Extractor::new(model.clone()).extract_blocking::<Statement>(short.text.as_str()).unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!((valid.attempts(), valid.value().transactions.len()), (1, short.items().len()));
    // The same statement as its PDF, read through its text layer.
    let pdf = Document::pdf(short.pdf.clone().unwrap()).with_text_layer(short.text.as_str());
    assert!(Extractor::new(model).extract_blocking::<Statement>(pdf).unwrap().is_valid());

    let long = long_document("statement-12");
    let model = LongStandIn::of(Faults::exact().capped(ITEMS_PER_ANSWER), &long);
    let extractor = Extractor::new(model.clone()).retries(Retries::new(1).unwrap());
    let outcome = extractor.extract_blocking::<Statement>(long.text.as_str()).unwrap();
    let Outcome::Escalated(escalation) = outcome else { panic!("60 of 150 transactions cannot add up") };
    assert_eq!(model.calls(), 2);
    assert!(format!("{escalation:?}").contains("sum(transactions.amount)"), "{escalation:?}");
}
