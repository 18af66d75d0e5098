//! A windowed extraction's run (DESIGN.md, "Long documents: windows owned
//! by quotes"): one [`Run`] per window, then the merged output validated
//! whole and, where it fails, corrected by one patch run over the whole.
//! The window geometry (splitting, ownership, merging) is
//! [`super::windows`]'; this is the policy over it.
//!
//! ```text
//! window 1 ─ valid ─> wave of windows 2..=5 ─> wave ... ─> merge ─ valid ───────────> Valid
//!    │ cut by the output limit: its halves join the next wave     └ invalid ─> whole ─> Valid | Escalated
//!    └ escalated (any window, at the end of its wave) ──────────────────────────────────> Escalated
//! ```
//!
//! Window 1 is asked alone (it writes the prompt cache and answers the
//! fields later windows are judged with); then windows go in waves of
//! `Windows::at_once`, judged in window order, a window that needs a
//! correction asked again in the next wave. Each part is an ordinary
//! [`Run`] (its retries, its systematic check, its corrections), so a
//! window's own violations are corrected in that window. The outer run
//! counts every call's usage and cost, weighs the document's budgets
//! between waves, and keeps every part's failed attempts, each tagged with
//! its part.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::outcome::{Escalation, FailedAttempt, Reason, Validated};
use super::patch::patch_tool;
use super::policy::{Next, Run, Validator, WholeValidator};
use super::prompt::{Correction, Windowed};
use super::windows::{Owner, Part, Window, anchor_positions, merge, owners};
use crate::validate::check::QuoteIndex;
use crate::validate::syntax;
use crate::vocabulary::pages::Pages;
use crate::{
    Code, Corrections, Document, FieldPath, Layer, Outcome, Prompt, Reply, ReplyContent, Segment, Source,
    Tool, Truncation, Violation, Violations,
};

/// The items of one list a window owns, each with the byte its anchor's
/// quote starts at, in answer order.
type Owned = Vec<(usize, Value)>;

/// What one window's answer gives: window 1's other fields, and for each
/// per-window list the items this window owns.
#[derive(Debug, Clone)]
pub(super) struct WindowAnswer {
    fields: Option<Map<String, Value>>,
    lists: Vec<Owned>,
}

/// A derived type's validation of an output, for its verdict alone.
pub(super) type Verdict = fn(&Value, &Document) -> Result<(), Violations>;

/// The type's validation, in the three forms a windowed run needs it: the
/// merge's (the value), a window answer's (the verdict), the whole's run's.
pub(super) struct Judges<T> {
    pub whole: WholeValidator<T>,
    pub verdict: Verdict,
    pub boxed: fn() -> Box<Validator<T>>,
}

/// A window being asked, with its run.
type Asking = (Window, Box<Run<WindowAnswer>>);

/// The stage a windowed run is at.
enum Stage<T> {
    /// Windows asked in waves: the calls of the current wave still
    /// unanswered (the front answers next), and the windows of the wave
    /// answered that need another call, for the next wave.
    Windows { wave: VecDeque<Asking>, again: Vec<Asking> },
    /// The patch run over the merged output.
    Whole(Box<Run<T>>),
    /// The run ended.
    Ended,
}

/// The state of a windowed run between calls.
pub(super) struct Gathering<T> {
    /// The per-window lists (JSON names) and their items' anchors.
    lists: Vec<(&'static str, &'static str)>,
    /// The document's text, indexed for quotes.
    index: Arc<QuoteIndex>,
    /// The tools every call offers: the type's, then `patch_output`.
    tools: Vec<Tool>,
    /// The type's validation.
    judges: Judges<T>,
    /// The windows not asked yet, in document order (a window cut in two
    /// puts its halves in front).
    queue: VecDeque<Window>,
    /// How many windows a wave asks at once, after window 1.
    at_once: usize,
    /// How many windows the text was split into (what numbers the halves
    /// of a window cut in two).
    count: u32,
    /// Window 1's fields besides the lists, once it is valid.
    fields: Option<Map<String, Value>>,
    /// The windows answered, each with its lists' owned items.
    gathered: Vec<(Window, Vec<Owned>)>,
    stage: Stage<T>,
    /// A window of the current wave that escalated (the first, by wave
    /// order): the run escalates as it did once the wave is answered.
    escalated: Option<(Part, Escalation)>,
    /// The failed attempts of the parts finished, tagged with their part.
    finished_chain: Vec<FailedAttempt>,
}

impl<T> Gathering<T> {
    /// The gathering of `windows` (at least one; asked `at_once` at a time
    /// after the first) over `lists`, its calls offering `tools`; the first
    /// window's run made by `parent`.
    pub(super) fn start(
        parent: &Run<T>,
        lists: Vec<(&'static str, &'static str)>,
        text: &str,
        windows: (VecDeque<Window>, usize),
        judges: Judges<T>,
    ) -> Gathering<T> {
        let (queue, at_once) = windows;
        let count = u32::try_from(queue.len()).unwrap_or(u32::MAX);
        let mut gathering = Gathering {
            lists,
            index: Arc::new(QuoteIndex::new(text)),
            tools: vec![parent.tool().clone(), patch_tool()],
            judges,
            queue,
            at_once: at_once.max(1),
            count,
            fields: None,
            gathered: Vec::new(),
            stage: Stage::Ended,
            escalated: None,
            finished_chain: Vec::new(),
        };
        let wave = gathering.next_wave(parent, Vec::new());
        gathering.stage = Stage::Windows { wave, again: Vec::new() };
        gathering
    }

    /// The prompt of the call whose reply comes next.
    pub(super) fn prompt(&self) -> &Prompt {
        self.wave().next().expect("a gathering that has not ended has a call to make")
    }

    /// The prompts of the calls to make now, in the order their replies
    /// are taken: the current wave's unanswered calls (several windows at
    /// once), or the whole's one call.
    pub(super) fn wave(&self) -> impl Iterator<Item = &Prompt> {
        let (windows, whole) = match &self.stage {
            Stage::Windows { wave, .. } => (Some(wave.iter().map(|(_, run)| run.prompt())), None),
            Stage::Whole(run) => (None, Some(run.prompt())),
            Stage::Ended => (None, None),
        };
        windows.into_iter().flatten().chain(whole)
    }

    /// Every failed attempt so far, each tagged with its part.
    pub(super) fn chain(&self) -> Vec<FailedAttempt> {
        let mut chain = self.finished_chain.clone();
        match &self.stage {
            Stage::Windows { wave, again } => {
                for (window, run) in again.iter().chain(wave) {
                    let part = window.part();
                    chain.extend(run.failed_attempts().iter().map(|attempt| attempt.clone().in_part(part)));
                }
            }
            Stage::Whole(run) => {
                chain
                    .extend(run.failed_attempts().iter().map(|attempt| attempt.clone().in_part(Part::Whole)));
            }
            Stage::Ended => {}
        }
        chain
    }

    /// The next wave: the windows that need another call, then windows not
    /// asked yet, up to `at_once` (window 1 alone while its fields are not
    /// known: it writes the cache, and later windows are judged with them).
    fn next_wave(&mut self, parent: &Run<T>, again: Vec<Asking>) -> VecDeque<Asking> {
        let room = if self.fields.is_some() { self.at_once } else { 1 };
        let mut wave: VecDeque<Asking> = again.into();
        while wave.len() < room {
            let Some(window) = self.queue.pop_front() else { break };
            wave.push_back(self.window_run(parent, window));
        }
        wave
    }

    /// The window's run: its calls carry the window's task.
    fn window_run(&self, parent: &Run<T>, window: Window) -> Asking {
        let judge = WindowJudge {
            lists: self.lists.clone(),
            index: self.index.clone(),
            window: window.clone(),
            known: self.fields.clone(),
            verdict: self.judges.verdict,
        };
        let mut run = parent
            .child(parent.tool().clone(), Box::new(move |input, document| judge.judge(input, document)));
        let task = self.window_task(parent.tool(), &window);
        run.set_windowed(Windowed { part: window.part(), tools: self.tools.clone(), task });
        (window, Box::new(run))
    }

    /// A window's task: window 1 answers every field, later windows their lists.
    fn window_task(&self, tool: &Tool, window: &Window) -> String {
        let lists: Vec<String> = self.lists.iter().map(|(list, _)| format!("`{list}`")).collect();
        let lists = lists.join(" and ");
        // Lines that repeat after its last line of its own (atop the next
        // page) are its too: the window ends where the next one starts.
        let end = match window.next_line.as_str() {
            "" => String::new(),
            next => format!(
                " (and the lines after its last up to, not including, the line {})",
                serde_json::to_string(next).unwrap_or_default()
            ),
        };
        let items = format!(
            "only the items {}{end}, in the order the document lists them, each quoting its own text",
            window.described()
        );
        if self.fields.is_none() {
            format!(
                "Call `{}` with every field of the document, giving in {lists} {items}: the items after \
                 them are asked for in calls of their own.",
                tool.name
            )
        } else {
            format!(
                "Call `{}` with {items} in {lists}, and no item before or after those lines. The other \
                 fields are known already: fill them as the schema requires; they are ignored.",
                tool.name
            )
        }
    }

    /// The whole's task: what each window gave, so the model can find a gap.
    fn whole_task(&self) -> String {
        let mut lines =
            vec!["The lists were gathered window by window; the merged output holds, by window:".to_string()];
        let mut gathered: Vec<&(Window, Vec<Owned>)> = self.gathered.iter().collect();
        gathered.sort_by_key(|(window, _)| window.range.start);
        for (window, lists) in gathered {
            let counts: Vec<String> = self
                .lists
                .iter()
                .zip(lists)
                .map(|((list, _), items)| {
                    let mut text = format!("{} items of `{list}`", items.len());
                    for (key, sum) in numeric_sums(items.iter().map(|(_, item)| item)) {
                        text.push_str(&format!(", `{key}` sums to {sum}"));
                    }
                    text
                })
                .collect();
            lines.push(format!("- window {}, {}: {}", window.number, window.described(), counts.join("; ")));
        }
        lines.join("\n")
    }

    /// The output merged from the windows gathered so far.
    fn merged(&self) -> Value {
        let mut merged = self.fields.clone().unwrap_or_default();
        for (i, (list, _)) in self.lists.iter().enumerate() {
            let items = merge(self.gathered.iter().map(|(_, lists)| lists[i].clone()));
            merged.insert((*list).to_string(), Value::Array(items));
        }
        Value::Object(merged)
    }
}

impl<T> Run<T> {
    /// Takes a reply to a windowed run's next call: its part's run judges
    /// it; once a wave is answered, the next wave starts, or the merge.
    pub(super) fn on_gathered_reply(
        &mut self,
        mut gathering: Box<Gathering<T>>,
        reply: Reply,
        call_cost: Option<f64>,
    ) -> Next<T> {
        let usage = reply.usage;
        let stage = std::mem::replace(&mut gathering.stage, Stage::Ended);
        // Whether the calls answered so far are all the run has made: the
        // budgets are weighed before the next calls go out, not mid-wave.
        let mut between_calls = true;
        let mut done = match stage {
            Stage::Windows { mut wave, mut again } => {
                let (window, run) = wave.pop_front().expect("a wave has a call for each reply");
                self.window_reply(&mut gathering, window, run, reply, &mut again);
                if wave.is_empty() {
                    self.next_stage(&mut gathering, again)
                } else {
                    gathering.stage = Stage::Windows { wave, again };
                    between_calls = false;
                    None
                }
            }
            Stage::Whole(mut run) => match run.on_reply(reply) {
                Next::Call(_) => {
                    gathering.stage = Stage::Whole(run);
                    None
                }
                Next::Done(Outcome::Valid(valid)) => {
                    gathering
                        .finished_chain
                        .extend(valid.failed_attempts().iter().map(|a| a.clone().in_part(Part::Whole)));
                    let sources = valid.sources().to_vec();
                    let output = run.accepted_output().cloned().unwrap_or_default();
                    Some(self.valid_parts(&gathering, valid.into_inner(), &output, Some(sources)))
                }
                Next::Done(Outcome::Escalated(escalation)) => {
                    let last_output = escalation.last_output.clone();
                    Some(self.escalate_parts(&mut gathering, Part::Whole, escalation, last_output))
                }
            },
            Stage::Ended => unreachable!("Run::on_reply was called after the run finished"),
        };
        if done.is_none()
            && between_calls
            && let Some(hint) = self.over_budget(usage, call_cost)
        {
            // The document's budget, over every part's calls.
            let last_output = gathering.fields.is_some().then(|| gathering.merged());
            done = Some(self.escalated(Reason::BudgetExhausted, gathering.chain(), last_output, Some(hint)));
            gathering.stage = Stage::Ended;
        }
        self.set_chain(gathering.chain());
        match done {
            Some(done) => {
                self.finish();
                done
            }
            None => {
                let prompt = gathering.prompt().clone();
                self.resume(gathering);
                Next::Call(prompt)
            }
        }
    }

    /// One window's reply: the window cut in two when the answer was cut by
    /// the output limit, else judged by its run; a window that needs
    /// another call goes to `again`.
    fn window_reply(
        &self,
        gathering: &mut Gathering<T>,
        window: Window,
        mut run: Box<Run<WindowAnswer>>,
        reply: Reply,
        again: &mut Vec<Asking>,
    ) {
        let part = window.part();
        let cut = matches!(reply.content, ReplyContent::Truncated { limit: Truncation::MaxTokens, .. })
            .then(|| window.halves(self.document_text(), gathering.count))
            .flatten();
        if let Some((head, tail)) = cut {
            // An answer longer than the output limit: the window is asked
            // again as two halves, never escalated as truncated.
            gathering.finished_chain.extend(run.failed_attempts().iter().map(|a| a.clone().in_part(part)));
            gathering.queue.push_front(tail);
            gathering.queue.push_front(head);
            return;
        }
        match run.on_reply(reply) {
            Next::Call(_) => again.push((window, run)),
            Next::Done(Outcome::Valid(answer)) => {
                gathering
                    .finished_chain
                    .extend(answer.failed_attempts().iter().map(|a| a.clone().in_part(part)));
                let answer = answer.into_inner();
                if gathering.fields.is_none() {
                    gathering.fields = answer.fields;
                }
                gathering.gathered.push((window, answer.lists));
            }
            Next::Done(Outcome::Escalated(escalation)) => {
                if gathering.escalated.is_none() {
                    gathering.escalated = Some((part, escalation));
                } else {
                    let chain = escalation.error_chain.iter().map(|a| a.clone().in_part(part));
                    gathering.finished_chain.extend(chain);
                }
            }
        }
    }

    /// After a wave: the escalation of a window of it, the next wave, or
    /// the merge (`Some` outcome when it is valid as it is; else the patch
    /// run over the whole starts).
    fn next_stage(&self, gathering: &mut Gathering<T>, again: Vec<Asking>) -> Option<Next<T>> {
        if let Some((part, escalation)) = gathering.escalated.take() {
            // The other windows in flight escalate with it: their attempts are in the chain.
            for (window, run) in &again {
                let part = window.part();
                gathering
                    .finished_chain
                    .extend(run.failed_attempts().iter().map(|a| a.clone().in_part(part)));
            }
            let last_output = match gathering.fields {
                Some(_) => Some(gathering.merged()),
                None => escalation.last_output.clone(),
            };
            return Some(self.escalate_parts(gathering, part, escalation, last_output));
        }
        let wave = gathering.next_wave(self, again);
        if !wave.is_empty() {
            gathering.stage = Stage::Windows { wave, again: Vec::new() };
            return None;
        }
        let merged = gathering.merged();
        let violations = match (gathering.judges.whole)(&merged, self.document()) {
            Ok((value, sources)) => return Some(self.valid_parts(gathering, value, &merged, sources)),
            Err(violations) => violations,
        };
        // Checks over the whole failed: one patch run over the merged output,
        // its first call a correction (the merge was its attempt 1).
        let lists = gathering.lists.clone();
        let arrange = move |output: &mut Value, text: Option<&str>| arrange_by_anchor(&lists, output, text);
        let mut run =
            self.child(self.tool().clone(), (gathering.judges.boxed)()).corrections(Corrections::Patch);
        run.correct_from(
            merged.clone(),
            Correction::patch(syntax::compact(&merged), &violations),
            Windowed { part: Part::Whole, tools: gathering.tools.clone(), task: gathering.whole_task() },
            Box::new(arrange),
        );
        gathering.stage = Stage::Whole(Box::new(run));
        None
    }

    /// The run ends valid with `value`, which validated from `output`.
    fn valid_parts(
        &self,
        gathering: &Gathering<T>,
        value: T,
        output: &Value,
        mut sources: Option<Vec<Source>>,
    ) -> Next<T> {
        if let Some(sources) = &mut sources {
            place_anchors(&gathering.lists, output, &gathering.index, self.document_text(), sources);
        }
        let validated = Validated::new(value, self.attempt_usage().to_vec(), gathering.chain(), sources)
            .with_cost(self.cost())
            .answered_by(self.model_name(), self.rung());
        tracing::info!(target: "extract", attempts = validated.attempts(), "extraction valid");
        Next::Done(Outcome::Valid(validated))
    }

    /// The run escalates as part `part` did, with every part's attempts.
    fn escalate_parts(
        &self,
        gathering: &mut Gathering<T>,
        part: Part,
        escalation: Escalation,
        last_output: Option<Value>,
    ) -> Next<T> {
        gathering.finished_chain.extend(escalation.error_chain.iter().map(|a| a.clone().in_part(part)));
        gathering.stage = Stage::Ended;
        let chain = gathering.finished_chain.clone();
        self.escalated(escalation.reason, chain, last_output, escalation.fix_hint)
    }

    /// The run's escalation: `chain` (every part's failed attempts), and
    /// every call's usage and cost.
    fn escalated(
        &self,
        reason: Reason,
        chain: Vec<FailedAttempt>,
        last_output: Option<Value>,
        fix_hint: Option<String>,
    ) -> Next<T> {
        let escalation = Escalation::new(reason, chain, last_output, fix_hint, self.spent())
            .with_call_usage(self.attempt_usage().to_vec())
            .with_cost(self.cost())
            .answered_by(self.model_name(), self.rung());
        tracing::info!(target: "extract", reason = escalation.reason.as_str(), "extraction escalated");
        Next::Done(Outcome::Escalated(self.over_type_fields(escalation)))
    }
}

/// Judges one window's answer as the type would judge it, keeping only
/// what is the window's own to correct.
struct WindowJudge {
    lists: Vec<(&'static str, &'static str)>,
    index: Arc<QuoteIndex>,
    window: Window,
    /// Window 1's fields, for later windows; `None` for window 1.
    known: Option<Map<String, Value>>,
    verdict: Verdict,
}

impl WindowJudge {
    /// The answer, its lists reduced to the items this window owns (and
    /// those whose anchor is nowhere, which fail their quote), validated
    /// with the other fields (window 1's own, or the ones window 1 gave);
    /// violations kept when they are this window's: its items' own, window
    /// 1's other fields', the answer's syntax and the lists' shape. Checks
    /// that read a list as a whole, and its keywords, wait for the merge.
    fn judge(
        &self,
        input: &Value,
        document: &Document,
    ) -> Result<(WindowAnswer, Option<Vec<crate::Source>>), Violations> {
        let answer = input.as_object().cloned().unwrap_or_default();
        let mut candidate = match &self.known {
            Some(known) => known.clone(),
            None => answer.clone(),
        };
        // For each list: the answer's index of each item kept in the candidate.
        let mut kept: Vec<Vec<usize>> = Vec::new();
        let mut lists = Vec::new();
        for (list, anchor) in &self.lists {
            let Some(items) = answer.get(*list).and_then(Value::as_array) else {
                match answer.get(*list) {
                    Some(other) => candidate.insert((*list).to_string(), other.clone()),
                    None => candidate.remove(*list),
                };
                kept.push(Vec::new());
                lists.push(Vec::new());
                continue;
            };
            let quotes: Vec<&str> =
                items.iter().map(|item| item[*anchor]["quote"].as_str().unwrap_or_default()).collect();
            let mut indices = Vec::new();
            let mut owned = Vec::new();
            for (i, owner) in owners(&self.index, &self.window, &quotes).into_iter().enumerate() {
                match owner {
                    Owner::Here(at) => {
                        indices.push(i);
                        owned.push((at, items[i].clone()));
                    }
                    Owner::Nowhere => indices.push(i),
                    Owner::Elsewhere(_) => {}
                }
            }
            let reduced = indices.iter().map(|i| items[*i].clone()).collect();
            candidate.insert((*list).to_string(), Value::Array(reduced));
            kept.push(indices);
            lists.push(owned);
        }
        let violations = match (self.verdict)(&Value::Object(candidate), document) {
            Ok(_) => Vec::new(),
            Err(violations) => {
                violations.into_vec().into_iter().filter_map(|violation| self.own(violation, &kept)).collect()
            }
        };
        if let Some(violations) = Violations::new(violations) {
            return Err(violations);
        }
        let fields = self.known.is_none().then(|| {
            let mut fields = answer;
            for (list, _) in &self.lists {
                fields.remove(*list);
            }
            fields
        });
        Ok((WindowAnswer { fields, lists }, None))
    }

    /// `violation`, with its paths into a list pointing at the answer's own
    /// item, when it is this window's to correct; `None` when it waits for
    /// the merge (a check or keyword over a list as a whole, a check at
    /// the root) or is not this window's (another field, past window 1).
    fn own(&self, mut violation: Violation, kept: &[Vec<usize>]) -> Option<Violation> {
        if violation.layer == Layer::Syntax {
            return Some(violation);
        }
        let list_of = |path: &FieldPath| list_of(&self.lists, path);
        let mut in_lists = false;
        for path in violation.fields.iter().chain(std::iter::once(&violation.path)) {
            if path.is_root() {
                return None;
            }
            if list_of(path).is_none() {
                continue;
            }
            in_lists = true;
            if !matches!(path.segments().get(1), Some(Segment::Index(_))) {
                // The list as a whole: its shape is this window's, the rest the merge's.
                let shape = violation.layer == Layer::Structure
                    && path.segments().len() == 1
                    && (violation.code == Code::MISSING_FIELD || violation.code == Code::INVALID_TYPE);
                if !shape {
                    return None;
                }
            }
        }
        if !in_lists && self.known.is_some() {
            return None;
        }
        violation.path = self.in_answer(&violation.path, kept);
        violation.fields = violation.fields.iter().map(|path| self.in_answer(path, kept)).collect();
        Some(violation)
    }

    /// `path`, pointing at the answer's own item where it points into a
    /// list reduced to the items the window kept (`kept`: the answer's
    /// index of each, by list).
    fn in_answer(&self, path: &FieldPath, kept: &[Vec<usize>]) -> FieldPath {
        let Some(list) = list_of(&self.lists, path) else { return path.clone() };
        let mut segments = path.segments().to_vec();
        if let Some(Segment::Index(i)) = segments.get_mut(1)
            && let Some(original) = kept[list].get(*i)
        {
            *i = *original;
        }
        FieldPath::from_segments(segments)
    }
}

/// Which of `lists` `path` starts in, if one.
fn list_of(lists: &[(&'static str, &'static str)], path: &FieldPath) -> Option<usize> {
    match path.segments().first() {
        Some(Segment::Key(key)) => lists.iter().position(|(list, _)| *list == key.as_ref()),
        _ => None,
    }
}

/// Each list of `output` sorted by where its items' anchors start in
/// `text` ([`anchor_positions`]): a patch appends at the end, and the
/// merged list stays in document order.
fn arrange_by_anchor(lists: &[(&'static str, &'static str)], output: &mut Value, text: Option<&str>) {
    let Some(text) = text else { return };
    let index = QuoteIndex::new(text);
    for (list, anchor) in lists {
        let Some(items) = output.get_mut(*list).and_then(Value::as_array_mut) else { continue };
        let at = anchor_positions(&index, &anchor_quotes(items, anchor));
        let mut keyed: Vec<(usize, Value)> =
            at.into_iter().map(|at| at.unwrap_or(usize::MAX)).zip(items.drain(..)).collect();
        keyed.sort_by_key(|(at, _)| *at);
        items.extend(keyed.into_iter().map(|(_, item)| item));
    }
}

/// The anchor quote of each item (`""` where it has none).
fn anchor_quotes<'v>(items: &'v [Value], anchor: &str) -> Vec<&'v str> {
    items.iter().map(|item| item[anchor]["quote"].as_str().unwrap_or_default()).collect()
}

/// `sources` with each per-window list item's `Sourced` values where the
/// merge placed the item ([`anchor_positions`]), not at their quotes' first
/// occurrence: an identical line on another page is another item's. The
/// anchor is at its own position; the item's other quotes at their first
/// occurrence from the start of the anchor's line (a date printed before
/// the description).
fn place_anchors(
    lists: &[(&'static str, &'static str)],
    output: &Value,
    index: &QuoteIndex,
    text: &str,
    sources: &mut [Source],
) {
    let pages = Pages::of(text);
    let place = |source: &mut Source, from: usize| {
        if let Some(range) = index.find_from(&source.quote, from) {
            source.page = pages.as_ref().map(|pages| pages.page_at(range.start));
            source.span = Some(range);
        }
    };
    for (list, anchor) in lists {
        let Some(items) = output.get(*list).and_then(Value::as_array) else { continue };
        let quotes = anchor_quotes(items, anchor);
        for (i, at) in anchor_positions(index, &quotes).into_iter().enumerate() {
            let Some(at) = at else { continue };
            let item = FieldPath::root().key(*list).index(i);
            let anchor_path = item.clone().key(*anchor);
            let line_start =
                text.get(..at).and_then(|before| before.rfind(['\n', '\u{c}'])).map_or(0, |n| n + 1);
            for source in
                sources.iter_mut().filter(|source| source.path.segments().starts_with(item.segments()))
            {
                let from = if source.path == anchor_path { at } else { line_start };
                place(source, from);
            }
        }
    }
}

/// The sum of each numeric field of `items`, by key, in first-seen order.
fn numeric_sums<'a>(items: impl Iterator<Item = &'a Value>) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for item in items {
        let Some(object) = item.as_object() else { continue };
        for (key, value) in object {
            let Some(number) = value.as_f64() else { continue };
            match sums.iter_mut().find(|(known, _)| known == key) {
                Some((_, sum)) => *sum += number,
                None => sums.push((key.clone(), number)),
            }
        }
    }
    // Rounded to a millionth: float sums print no noise digits.
    sums.into_iter().map(|(key, sum)| (key, (sum * 1e6).round() / 1e6)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // An anchor's span is its own occurrence's, where the merge placed it:
    // two occurrences that differ in whitespace (the match is whitespace-
    // normalised) differ in length, and `&text[span]` is the quoted passage.
    #[test]
    fn a_placed_anchor_spans_its_own_occurrence() {
        let text = "Fee    1.00\nRent 9.00\n\u{c}Fee 1.00\nEnd\n";
        let index = QuoteIndex::new(text);
        let line = |quote: &str| json!({"line": {"value": quote, "quote": quote}});
        let output = json!({"rows": [line("Fee 1.00"), line("Rent 9.00"), line("Fee 1.00")]});
        let path = |i: usize| FieldPath::root().key("rows").index(i).key("line");
        let mut sources: Vec<Source> =
            (0..3).map(|i| Source::new(path(i), "Fee 1.00", Some(0..11))).collect();
        place_anchors(&[("rows", "line")], &output, &index, text, &mut sources);
        let span = sources[2].span.clone().unwrap();
        assert_eq!(sources[2].page, Some(2));
        assert_eq!(text.get(span.clone()), Some("Fee 1.00"), "span {span:?} of the second fee");
    }
}
