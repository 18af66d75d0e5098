//! A stand-in model for long documents gathered window by window (DESIGN.md,
//! "Long documents: windows owned by quotes"): it knows the right answer of
//! each document it is given (the corpus of `examples/long/`, or any text
//! with a truth whose list items quote their own text), reads which window a
//! call asks for from the prompt, and answers as a real model does, with
//! the mistakes real models make, each switchable ([`Faults`]).
//!
//! What each figure of the windowed engine's tests and bench depends on:
//!
//! - **Which window.** A call names its window as the instruction does:
//!   `from the line "<first>" through the line "<last>"` (each a JSON
//!   string; `, pages 4 to 6` may follow). The stand-in looks for that form
//!   in every block of the prompt except the document and the previous
//!   output (the engine puts it in the task block, after the document).
//!   Exactly one window named: a window call. None, or several
//!   (a correction that lists every window's count and sum): a call over
//!   the whole document.
//! - **Which items.** The window runs from the line `<first>` (the
//!   document's start for the first window: no line of its own comes
//!   before it) up to the next line after `<last>` that occurs once in the
//!   document, i.e. the next window's first line; lines are compared
//!   trimmed, as `Windows::split` compares them, so this is exactly the
//!   window's byte range. The answer holds the truth's items whose quote
//!   starts in it, in document order, and every other field of the truth.
//!   With [`Faults::reads_pages`] it reads the pages the instruction names
//!   instead, as a model that trusts the page numbers does: an item at the
//!   top of a page that belongs to the window before (its line is not the
//!   page's own) is answered twice, or not at all.
//! - **The cap** ([`ITEMS_PER_ANSWER`], 60): an answer holds at most that
//!   many items, the first ones; the rest are dropped silently, as a model
//!   does that stops a long list early. A whole-document call gets every
//!   field and the first 60 items: why one call cannot extract 800.
//! - **A skipped item** (`skip_percent` of window answers): one item left
//!   out, the rest in order; only the sum over the merged list sees it.
//! - **A boundary mistake** (`stray_percent` of window answers): the first
//!   one or two items after the window (the next page's) added at the end,
//!   items another window owns, which ownership by quote must drop.
//! - **A patch.** A patch request (`prompt.asks_for_patch()`, or a
//!   correction whose instruction names `patch_output`) gets
//!   `{"patch": [{"op": "add", "path": "/<list>/-", "value": item}, ...]}`
//!   adding the items of the truth (of the window, when one is named) that
//!   the previous output lacks, matched by where their quotes start in the
//!   document (so of two identical lines the missing one is added), at most
//!   the cap.
//! - **The prompt cache**, as the API bills it: a request's prefix (every
//!   block before the document, i.e. the system and the tool, and the
//!   document itself) is read from the cache when a request before sent the
//!   same prefix, else written; the instruction and a correction's blocks
//!   after the document are uncached input. Tokens are a quarter of the
//!   bytes: `cache_read_tokens` or `cache_write_tokens` for the prefix,
//!   `input_tokens` for what follows it, `output_tokens` for the answer's
//!   JSON. (The API's minimum cacheable length is ignored: the documents
//!   windows are for are far longer.)
//!
//! Every choice is a roll of dice seeded by [`Faults::seed`] and by the
//! call itself (its window and attempt), never by the order calls arrive
//! in, so windows answered concurrently answer the same in every run. Each
//! prompt received is recorded ([`LongStandIn::prompts`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use extract::Usage;
use extract::model::{BlockKind, Content, Model, ModelFuture, Prompt, Reply};
use extract::run::PATCH_TOOL;
use serde_json::{Value, json};

use super::dice::Dice;

/// How many items a real model writes in one answer before it stops.
pub const ITEMS_PER_ANSWER: usize = 60;

/// What the stand-in gets wrong, each switchable; all deterministic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// At most this many items in one answer (a window's, the whole
    /// document's, a patch's); the rest are dropped, in order.
    pub cap: Option<usize>,
    /// In this share (percent) of window answers, one item is left out.
    pub skip_percent: u32,
    /// In this share (percent) of window answers, the first one or two items
    /// after the window are added at the end.
    pub stray_percent: u32,
    /// Reads a window by the pages the instruction names, not its lines.
    pub reads_pages: bool,
    /// The seed of every roll.
    pub seed: u64,
}

impl Faults {
    /// A model without faults: every item of its window, without a cap.
    pub const fn exact() -> Faults {
        Faults { cap: None, skip_percent: 0, stray_percent: 0, reads_pages: false, seed: 0 }
    }

    /// What the bench runs against: 60 items an answer, one item skipped
    /// in one window answer in five, a boundary mistake in one in three.
    pub const fn realistic(seed: u64) -> Faults {
        Faults { cap: Some(ITEMS_PER_ANSWER), skip_percent: 20, stray_percent: 33, reads_pages: false, seed }
    }

    /// The same faults with at most `cap` items an answer.
    pub const fn capped(mut self, cap: usize) -> Faults {
        self.cap = Some(cap);
        self
    }

    /// The same faults, skipping an item in `percent` of window answers.
    pub const fn skipping(mut self, percent: u32) -> Faults {
        self.skip_percent = percent;
        self
    }

    /// The same faults, straying past the window in `percent` of window answers.
    pub const fn straying(mut self, percent: u32) -> Faults {
        self.stray_percent = percent;
        self
    }

    /// The same faults, reading windows by their pages.
    pub const fn reading_pages(mut self) -> Faults {
        self.reads_pages = true;
        self
    }

    /// The same faults with another seed.
    pub const fn seeded(mut self, seed: u64) -> Faults {
        self.seed = seed;
        self
    }
}

/// A window as a call names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Its first line, trimmed.
    pub first: String,
    /// Its last line, trimmed.
    pub last: String,
    /// The pages named after the lines (1-based, inclusive), if any.
    pub pages: Option<(u32, u32)>,
}

/// The windows a prompt names, in the form of the window instruction, in
/// every block but the document and the previous output; each once.
pub fn windows_named(prompt: &Prompt) -> Vec<Named> {
    let mut named: Vec<Named> = Vec::new();
    for block in prompt.blocks() {
        if matches!(block.kind, BlockKind::Document | BlockKind::PreviousOutput) {
            continue;
        }
        for (at, _) in block.text.match_indices(FROM) {
            if let Some(window) = read_named(&block.text[at + FROM.len()..])
                && !named.contains(&window)
            {
                named.push(window);
            }
        }
    }
    named
}

const FROM: &str = "from the line ";
const THROUGH: &str = " through the line ";

/// `"<first>" through the line "<last>"[, pages N to M | , page N]`.
fn read_named(text: &str) -> Option<Named> {
    let (first, rest) = json_string(text)?;
    let (last, rest) = json_string(rest.strip_prefix(THROUGH)?)?;
    let number = |text: &str| -> Option<(u32, usize)> {
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        Some((text[..digits].parse().ok()?, digits))
    };
    let pages = if let Some(rest) = rest.strip_prefix(", pages ") {
        let (from, used) = number(rest)?;
        let (to, _) = number(rest[used..].strip_prefix(" to ")?)?;
        Some((from, to))
    } else if let Some(rest) = rest.strip_prefix(", page ") {
        number(rest).map(|(page, _)| (page, page))
    } else {
        None
    };
    Some(Named { first, last, pages })
}

/// The JSON string `text` starts with, and what follows it.
fn json_string(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (at, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let string = serde_json::from_str(&text[..at + 2]).ok()?;
                return Some((string, &body[at + 1..]));
            }
            _ => {}
        }
    }
    None
}

/// A document the stand-in knows: its text and the right answer.
struct Known {
    text: String,
    truth: Value,
    list: String,
    anchor: String,
    /// Where each of the truth's items' anchor quotes starts in `text`.
    starts: Vec<usize>,
}

impl Known {
    fn items(&self) -> &[Value] {
        self.truth[&self.list].as_array().map(Vec::as_slice).unwrap_or_default()
    }

    fn quote<'v>(&self, item: &'v Value) -> &'v str {
        item[&self.anchor]["quote"].as_str().unwrap_or_default()
    }

    /// The indices of the items whose quotes start in `range`.
    fn within(&self, range: &Range<usize>) -> Vec<usize> {
        (0..self.starts.len()).filter(|i| range.contains(&self.starts[*i])).collect()
    }

    /// The truth with its list made of the items `indices`.
    fn answer(&self, indices: &[usize]) -> Value {
        let mut answer = self.truth.clone();
        answer[&self.list] = indices.iter().map(|i| self.items()[*i].clone()).collect();
        answer
    }

    /// The byte range of the window `named`, as the stand-in reads it.
    fn range(&self, named: &Named, by_pages: bool) -> Option<Range<usize>> {
        match named.pages {
            Some(pages) if by_pages && self.text.contains('\u{c}') => Some(page_range(&self.text, pages)),
            _ => line_range(&self.text, &named.first, &named.last),
        }
    }
}

/// Where each line of `text` starts (a line ends at a newline or a form feed).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices(['\n', '\u{c}']).map(|(at, _)| at + 1)).collect()
}

fn trimmed_line(text: &str, start: usize) -> &str {
    text[start..].split(['\n', '\u{c}']).next().unwrap_or_default().trim()
}

/// The window from the line `first` up to the next line after `last` that
/// occurs once in `text` (the next window's first line): the window's
/// range, as `Windows::split` made it. `None` when a line is not in the text.
fn line_range(text: &str, first: &str, last: &str) -> Option<Range<usize>> {
    let starts = line_starts(text);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for start in &starts {
        *counts.entry(trimmed_line(text, *start)).or_default() += 1;
    }
    let once = |start: &usize| {
        let line = trimmed_line(text, *start);
        !line.is_empty() && counts[line] == 1
    };
    let line_at = |wanted: &str| starts.iter().position(|start| trimmed_line(text, *start) == wanted);
    let start = if first.is_empty() { 0 } else { line_at(first)? };
    // The first window starts at the document's start.
    let from = if starts[..start].iter().any(once) { starts[start] } else { 0 };
    let end = if last.is_empty() {
        text.len()
    } else {
        let last = line_at(last)?;
        starts[last + 1..].iter().find(|start| once(start)).copied().unwrap_or(text.len())
    };
    Some(from..end.max(from))
}

/// Pages `first` to `last` (1-based, inclusive) of a text with form feeds.
fn page_range(text: &str, (first, last): (u32, u32)) -> Range<usize> {
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\u{c}').map(|(at, _)| at + 1)).collect();
    let start = |page: u32| starts.get(page.saturating_sub(1) as usize).copied().unwrap_or(text.len());
    start(first)..start(last.saturating_add(1)).max(start(first))
}

impl Dice {
    /// Dice for one decision of one call: the seed, what the call asks for
    /// and its attempt, and which decision.
    fn for_call(seed: u64, call: &str, attempt: u32, decision: u64) -> Dice {
        // FNV-1a: the same on every platform and in every Rust version.
        let hash = call.bytes().fold(0xCBF2_9CE4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01B3)
        });
        Dice(seed ^ hash ^ u64::from(attempt).rotate_left(32) ^ decision.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn percent(&mut self, percent: u32) -> bool {
        self.roll(100) < u64::from(percent)
    }
}

/// A request's cached prefix: the blocks before the document, and the document.
#[derive(Clone, PartialEq)]
struct Prefix {
    head: String,
    document: Content,
    title: Option<String>,
}

#[derive(Default)]
struct State {
    prompts: Vec<Prompt>,
    written: Vec<Prefix>,
}

struct Inner {
    faults: Faults,
    documents: Vec<Known>,
    state: Mutex<State>,
}

/// The stand-in: cheap to clone (clones share the documents, the cache and
/// the record of prompts), so a test keeps one after handing one over.
#[derive(Clone)]
pub struct LongStandIn {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LongStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LongStandIn").field("faults", &self.inner.faults).finish_non_exhaustive()
    }
}

impl LongStandIn {
    /// A stand-in with `faults` that knows `documents`: each its text, its
    /// right answer, the name of the list gathered window by window and of
    /// its items' anchor field (whose `quote` is exact text of the
    /// document). Panics when a quote is not in its text.
    pub fn new<'a>(
        faults: Faults,
        documents: impl IntoIterator<Item = (&'a str, &'a Value, &'a str, &'a str)>,
    ) -> LongStandIn {
        let documents = documents
            .into_iter()
            .map(|(text, truth, list, anchor)| {
                let mut known = Known {
                    text: text.to_string(),
                    truth: truth.clone(),
                    list: list.to_string(),
                    anchor: anchor.to_string(),
                    starts: Vec::new(),
                };
                // Each quote at its first occurrence after the one before,
                // so identical lines keep their own positions.
                let mut from = 0;
                known.starts = known
                    .items()
                    .iter()
                    .map(|item| {
                        let quote = known.quote(item);
                        let at = text[from..].find(quote).map(|at| at + from).unwrap_or_else(|| {
                            panic!("the quote {quote:?} is not in the document after byte {from}")
                        });
                        from = at + next_char(quote);
                        at
                    })
                    .collect();
                known
            })
            .collect();
        LongStandIn { inner: Arc::new(Inner { faults, documents, state: Mutex::default() }) }
    }

    /// A stand-in that knows one document of `examples/long/`.
    pub fn of(faults: Faults, document: &super::long_documents::LongDocument) -> LongStandIn {
        LongStandIn::new(
            faults,
            [(document.text.as_str(), &document.truth, document.kind.list(), document.kind.anchor())],
        )
    }

    /// Every prompt received so far, in the order they arrived.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.lock().prompts.clone()
    }

    /// How many calls so far.
    pub fn calls(&self) -> usize {
        self.lock().prompts.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The answer to `prompt`, with its usage.
    fn reply(&self, prompt: &Prompt) -> Reply {
        let faults = self.inner.faults;
        let text = prompt.document.searchable_text().unwrap_or_default();
        let known =
            self.inner.documents.iter().find(|known| known.text == text).unwrap_or_else(|| {
                panic!("the stand-in does not know the document {}", prompt.document.id())
            });
        let named = windows_named(prompt);
        let window = match named.as_slice() {
            [one] => Some(one),
            _ => None,
        };
        let call = window.map_or_else(|| "whole".to_string(), |w| format!("{}\u{0}{}", w.first, w.last));
        let cap = |indices: &mut Vec<usize>| indices.truncate(faults.cap.unwrap_or(usize::MAX));
        let range = window.map(|named| known.range(named, faults.reads_pages).unwrap_or(0..0));
        let reply = if asks_for_patch(prompt) {
            let previous: Value = prompt
                .correction
                .as_ref()
                .and_then(|correction| serde_json::from_str(&correction.previous_output).ok())
                .unwrap_or(Value::Null);
            let present = present_at(known, &previous);
            let expected =
                range.as_ref().map_or_else(|| (0..known.starts.len()).collect(), |r| known.within(r));
            let mut missing: Vec<usize> =
                expected.into_iter().filter(|i| !present.contains(&known.starts[*i])).collect();
            cap(&mut missing);
            let path = format!("/{}/-", known.list.replace('~', "~0").replace('/', "~1"));
            let operations: Vec<Value> = missing
                .iter()
                .map(|i| json!({"op": "add", "path": path, "value": known.items()[*i]}))
                .collect();
            Reply::named_tool_call(PATCH_TOOL, json!({ "patch": operations }))
        } else if let Some(range) = range {
            let mut items = known.within(&range);
            let mut skip = Dice::for_call(faults.seed, &call, prompt.attempt, 1);
            if !items.is_empty() && skip.percent(faults.skip_percent) {
                items.remove(skip.roll(items.len() as u64) as usize);
            }
            let mut stray = Dice::for_call(faults.seed, &call, prompt.attempt, 2);
            if stray.percent(faults.stray_percent) {
                let after = known.starts.partition_point(|start| *start < range.end);
                let count = 1 + stray.roll(2) as usize;
                items.extend((after..known.starts.len()).take(count));
            }
            cap(&mut items);
            Reply::tool_call(known.answer(&items))
        } else {
            let mut items: Vec<usize> = (0..known.starts.len()).collect();
            cap(&mut items);
            Reply::tool_call(known.answer(&items))
        };
        let usage = self.bill(prompt, &reply);
        reply.with_usage(usage)
    }

    /// The usage of answering `prompt` with `reply`: the prefix read from the
    /// cache or written to it, the rest uncached.
    fn bill(&self, prompt: &Prompt, reply: &Reply) -> Usage {
        let blocks = prompt.blocks();
        let document =
            blocks.iter().position(|block| block.kind == BlockKind::Document).unwrap_or(blocks.len());
        let head: String = blocks[..document].iter().map(|block| block.fenced(block.kind.label())).collect();
        let after: usize = blocks.iter().skip(document + 1).map(|block| block.text.len()).sum();
        let prefix = Prefix {
            head,
            document: prompt.document.content().clone(),
            title: prompt.document.title().map(str::to_string),
        };
        let prefix_tokens = (prefix.head.len() + prompt.document.len()) as u64 / 4;
        let output = match &reply.content {
            extract::model::ReplyContent::ToolCall { input, .. } => input.to_string().len() as u64 / 4,
            _ => 0,
        };
        let mut state = self.lock();
        let (read, write) = if state.written.contains(&prefix) {
            (prefix_tokens, 0)
        } else {
            state.written.push(prefix);
            (0, prefix_tokens)
        };
        Usage::new(after as u64 / 4, output).with_cache(read, write)
    }
}

/// The length of `quote`'s first character: where the search for the next
/// occurrence resumes, one character on.
fn next_char(quote: &str) -> usize {
    quote.chars().next().map_or(1, char::len_utf8)
}

/// Whether `prompt` asks for a patch: `patch_output` is its tool, or its
/// correction's instruction names it.
fn asks_for_patch(prompt: &Prompt) -> bool {
    prompt.asks_for_patch()
        || prompt.correction.as_ref().is_some_and(|correction| correction.instruction.contains(PATCH_TOOL))
}

/// Where the quotes of `output`'s items start in the document, located as
/// the engine locates them (each at its first occurrence after the one
/// before, else from the start).
fn present_at(known: &Known, output: &Value) -> HashSet<usize> {
    let mut from = 0;
    let mut present = HashSet::new();
    for item in output[&known.list].as_array().into_iter().flatten() {
        let quote = known.quote(item);
        if quote.is_empty() {
            continue;
        }
        let found = known.text[from..].find(quote).map(|at| at + from).or_else(|| known.text.find(quote));
        if let Some(at) = found {
            if at >= from {
                from = at + next_char(quote);
            }
            present.insert(at);
        }
    }
    present
}

impl Model for LongStandIn {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        self.lock().prompts.push(prompt.clone());
        let reply = self.reply(prompt);
        Box::pin(async move { Ok(reply) })
    }

    fn name(&self) -> &str {
        "long-stand-in"
    }
}
