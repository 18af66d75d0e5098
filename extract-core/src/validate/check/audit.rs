//! The semantic walk: [`Audit`] carries the document and the current path
//! through a value, runs each type's checks and collects violations.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Range;

use crate::schema::TypeInfo;
use crate::schema::{CheckMeta, Shape};
use crate::vocabulary::pages::Pages;
use crate::{Code, FieldPath, Layer, Segment, Source, Sourced, Violation};

use super::EvalError;
use super::path::{Collection, DefaultVisit, One, Reach, Stop};
use super::quoted::Quoted;
use super::render::{Recorder, Records};

/// The state of one semantic walk over a validated value.
pub struct Audit<'d> {
    /// The text quotes are checked against; `None` when there is none (a
    /// PDF without a text layer), and quotes cannot be verified.
    text: Option<&'d str>,
    normalized: OnceCell<Normalized>,
    /// The text's pages, found at the first quote that holds.
    pages: OnceCell<Option<Pages>>,
    path: Vec<Segment>,
    violations: Vec<Violation>,
    sources: Vec<Source>,
    /// Where the quotes that held so far were placed, for identical quotes.
    repeats: Repeats,
    /// Every check the walk ran, kept only when asked for
    /// ([`with_ledger`](Audit::with_ledger)).
    ledger: Option<Vec<CheckRun>>,
}

/// One check the walk ran: where, what it read, and whether it held.
///
/// A streamed output's judge uses it to know which checks have run on
/// finished values only: a check's result depends on its fields alone.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRun {
    /// The value whose type holds the check.
    pub at: FieldPath,
    /// The fields the check reads, as JSON paths (a field over a
    /// collection names it without an index: every item is read). Empty
    /// for a `with = function` check, which reads the whole value `at`.
    pub fields: Vec<FieldPath>,
    /// Whether it held (a check that did not apply holds).
    pub held: bool,
}

impl CheckRun {
    /// What the check read: its fields, or the whole value `at`.
    pub fn read(&self) -> &[FieldPath] {
        if self.fields.is_empty() { std::slice::from_ref(&self.at) } else { &self.fields }
    }
}

impl<'d> Audit<'d> {
    /// A walk over a value extracted from a document whose text is `text`
    /// (`None`: no text to check quotes against).
    pub fn new(text: Option<&'d str>) -> Audit<'d> {
        Audit {
            text,
            normalized: OnceCell::new(),
            pages: OnceCell::new(),
            path: Vec::new(),
            violations: Vec::new(),
            sources: Vec::new(),
            repeats: Repeats::default(),
            ledger: None,
        }
    }

    /// The same walk, keeping a [`CheckRun`] of every check it runs.
    pub fn with_ledger(mut self) -> Audit<'d> {
        self.ledger = Some(Vec::new());
        self
    }

    /// Every check the walk ran (empty without [`with_ledger`](Audit::with_ledger)).
    pub fn take_ledger(&mut self) -> Vec<CheckRun> {
        self.ledger.take().unwrap_or_default()
    }

    /// The violations found, and the provenance of every quote that held.
    pub fn into_parts(self) -> (Vec<Violation>, Vec<Source>) {
        (self.violations, self.sources)
    }

    /// Steps into the field `key`; [`leave`](Self::leave) steps back out.
    /// The derived walk uses this pair rather than a method taking a
    /// closure: a closure per field is one more body for every user's crate
    /// to compile.
    #[inline]
    pub fn enter(&mut self, key: &'static str) {
        self.path.push(Segment::Key(Cow::Borrowed(key)));
    }

    /// Steps back out of the field [`enter`](Self::enter) stepped into.
    #[inline]
    pub fn leave(&mut self) {
        self.path.pop();
    }

    /// Runs `f` one map key deeper (a key the model chose).
    pub fn at_owned_key(&mut self, key: String, f: impl FnOnce(&mut Self)) {
        self.path.push(Segment::Key(Cow::Owned(key)));
        f(self);
        self.path.pop();
    }

    /// Runs `f` one index deeper.
    #[inline]
    pub fn at_index(&mut self, index: usize, f: impl FnOnce(&mut Self)) {
        self.path.push(Segment::Index(index));
        f(self);
        self.path.pop();
    }

    /// The current path followed by JSON names.
    fn here(&self, json_names: &[&'static str]) -> FieldPath {
        let mut segments = self.path.clone();
        segments.extend(json_names.iter().map(|k| Segment::Key(Cow::Borrowed(*k))));
        FieldPath::from_segments(segments)
    }

    /// Records a violation.
    pub fn report(&mut self, violation: Violation) {
        self.violations.push(violation);
    }

    /// Runs one `#[check]` of a value whose type is described by `info`
    /// (the type's `TYPE_INFO`, which a derived type always has: read only
    /// to report a failure, so the derived code passes the constant as is).
    /// `eval` is run once without recording; only when the check fails is it
    /// run again to record the values for the message.
    #[inline]
    pub fn run_check(
        &mut self,
        info: Option<&'static TypeInfo>,
        index: usize,
        mut eval: impl FnMut(&mut Recorder) -> Result<Option<bool>, EvalError>,
    ) {
        // The passing run is inlined into the type's walk; only a failure
        // reaches the one reporting code every check shares.
        let failure = match eval(&mut Recorder::off()) {
            Ok(Some(false)) => None,
            Ok(_) => {
                if self.ledger.is_some() {
                    self.note_check(info, index, true);
                }
                return;
            }
            Err(e) => Some(e),
        };
        if self.ledger.is_some() {
            self.note_check(info, index, false);
        }
        self.report_failed_check(info, index, failure, &mut eval)
    }

    /// The JSON paths of the fields check `index` of `info` reads, from here.
    fn check_fields(&self, info: &'static TypeInfo, index: usize) -> Vec<FieldPath> {
        let meta = &info.checks()[index];
        meta.fields.iter().map(|f| self.here(&info.json_path(&f.split('.').collect::<Vec<_>>()))).collect()
    }

    #[cold]
    #[inline(never)]
    fn note_check(&mut self, info: Option<&'static TypeInfo>, index: usize, held: bool) {
        let info = described(info);
        let fields =
            if info.checks()[index].with.is_some() { Vec::new() } else { self.check_fields(info, index) };
        let run = CheckRun { at: self.here(&[]), fields, held };
        self.ledger.get_or_insert_default().push(run);
    }

    #[cold]
    #[inline(never)]
    fn report_failed_check(
        &mut self,
        info: Option<&'static TypeInfo>,
        index: usize,
        failure: Option<EvalError>,
        eval: &mut dyn FnMut(&mut Recorder) -> Result<Option<bool>, EvalError>,
    ) {
        let info = described(info);
        // The description is read only to report a failure.
        let meta = &info.checks()[index];
        let mut recorder = Recorder::on();
        let _ = eval(&mut recorder);
        let recorder = recorder.into_records();
        let rule = info.render(meta.rule);
        let message = match (failure, meta.message) {
            (Some(error), _) => {
                format!("check could not be evaluated: {rule}: {error}{}", values_text(info, meta, &recorder))
            }
            (None, Some(template)) => fill_template(template, meta, &recorder),
            (None, None) => {
                let tolerance = meta.tolerance.map(|t| format!(" (tolerance {t})")).unwrap_or_default();
                format!("check failed: {rule}{tolerance}{}", values_text(info, meta, &recorder))
            }
        };
        let fields = self.check_fields(info, index);
        let path = fields.first().cloned().unwrap_or_else(|| self.here(&[]));
        let code = meta.code.map_or(Code::CHECK_FAILED, Code::new_static);
        self.report(
            Violation::new(Layer::Semantic, code, path, message)
                .with_fields(fields)
                .recoverable(meta.recoverable)
                .with_check(rule),
        );
    }

    /// Runs check `index` of `info`, a `#[check(with = function)]` check.
    pub fn run_with<E: std::fmt::Display>(
        &mut self,
        info: Option<&'static TypeInfo>,
        index: usize,
        result: Result<(), E>,
    ) {
        if self.ledger.is_some() {
            self.note_check(info, index, result.is_ok());
        }
        if let Err(error) = result {
            let info = described(info);
            let meta = &info.checks()[index];
            let name = meta.with.unwrap_or("check");
            let code = meta.code.map_or(Code::CHECK_FAILED, Code::new_static);
            let path = self.here(&[]);
            self.report(
                Violation::new(Layer::Semantic, code, path, format!("check `{name}` failed: {error}"))
                    .recoverable(meta.recoverable)
                    .with_check(name),
            );
        }
    }

    /// Checks that `quote` occurs in the document and that `value` occurs in
    /// the quote ([`Quoted::occurs_in`]: text ignoring case, a number or a
    /// date as written). Whitespace is normalised (every run becomes one
    /// space, ends trimmed) on both sides; the quote must match the
    /// document's case. A quote that holds is recorded as a [`Source`] with
    /// its byte range in the document's text; without a text, the quote is
    /// recorded unverified.
    ///
    /// A failure is `quote_not_found`. It takes the field's recoverability
    /// only when the document shows neither the quote nor the value: when
    /// the value is in the document, the quote was merely too short or
    /// mistyped, which a retry fixes, so it is recoverable whatever the tag,
    /// and the message asks for the passage that shows the value.
    pub fn check_quote(&mut self, quote: &str, value: Quoted<'_>, recoverable: bool) {
        let quote_norm = normalize_whitespace(quote);
        let found = if quote_norm.is_empty() { None } else { self.find(&quote_norm) };
        if let Some(ledger) = &mut self.ledger {
            // A quote check reads its sourced value whole: the value and the quote.
            let held = found.is_some() && value.occurs_in(&quote_norm);
            ledger.push(CheckRun {
                at: FieldPath::from_segments(self.path.clone()),
                fields: Vec::new(),
                held,
            });
        }
        let failure = match &found {
            _ if quote_norm.is_empty() => {
                Some("the quote is empty; quote the span of the document the value was read from".to_string())
            }
            None => Some(format!(
                "quote {} does not occur in the document; quote the source text exactly",
                crate::quote_prefix(quote)
            )),
            Some(_) if !value.occurs_in(&quote_norm) => Some(format!(
                "value {} does not occur in its quote {}; give the value as the quote shows it",
                value.shown(),
                crate::quote_prefix(quote)
            )),
            Some(_) => None,
        };
        let Some(mut message) = failure else {
            let path = self.here(&[]);
            // The second of two identical lines quoted at the same place
            // of two items (two identical transactions) is the next occurrence.
            let span = match (self.text, found.flatten()) {
                (Some(text), Some(first)) => {
                    let normalized = self.normalized.get_or_init(|| Normalized::of(text));
                    self.repeats.place(normalized, pattern_of(&path), &quote_norm).or(Some(first))
                }
                (_, span) => span,
            };
            let page = match (self.text, &span) {
                (Some(text), Some(span)) => {
                    self.pages.get_or_init(|| Pages::of(text)).as_ref().map(|pages| pages.page_at(span.start))
                }
                _ => None,
            };
            self.sources.push(Source::new(path, quote, span).on_page(page));
            return;
        };
        // What the document holds decides what the failure means.
        let mut recoverable = recoverable;
        if let Some(text) = self.text
            && value.is_checked()
        {
            if value.occurs_in(text) {
                recoverable = true;
                message.push_str(&format!(
                    ", and the document does show the value {}: quote the passage that shows it",
                    value.shown()
                ));
            } else if !recoverable {
                message
                    .push_str(&format!(", and the value {} occurs nowhere in the document", value.shown()));
            }
        }
        let path = self.here(&["quote"]);
        self.report(
            Violation::new(Layer::Semantic, Code::QUOTE_NOT_FOUND, path, message).recoverable(recoverable),
        );
    }

    /// Where the normalised `quote` is in the document's text: `Some(Some(range))`
    /// of the original bytes, `Some(None)` when there is no text to search
    /// (unverified), `None` when it is not there.
    fn find(&self, quote_norm: &str) -> Option<Option<Range<usize>>> {
        let Some(text) = self.text else { return Some(None) };
        let normalized = self.normalized.get_or_init(|| Normalized::of(text));
        let at = normalized.text.find(quote_norm)?;
        Some(Some(normalized.original(at..at + quote_norm.len())))
    }
}

/// Where identical quotes go: quoted at the same place of different items
/// (`transactions[*].description`), the first is the text's first
/// occurrence, the second its next one, and so on (the first again past
/// the last), so two identical lines each keep their own span and page.
#[derive(Debug, Default)]
struct Repeats(HashMap<(String, String), usize>);

impl Repeats {
    /// Where the quote `quote_norm` (whitespace normalised) at the place
    /// `pattern` goes in `normalized`; `None` when it does not occur.
    fn place(&mut self, normalized: &Normalized, pattern: String, quote_norm: &str) -> Option<Range<usize>> {
        let key = (pattern, quote_norm.to_string());
        let from = self.0.get(&key).map_or(0, |at| at + 1);
        let at = normalized.find_from(quote_norm, from).or_else(|| normalized.find_from(quote_norm, 0))?;
        self.0.insert(key, at);
        Some(normalized.original(at..at + quote_norm.len()))
    }
}

/// A path with its indices left out: the place of a value in every item.
fn pattern_of(path: &FieldPath) -> String {
    let keys: Vec<&str> = path
        .segments()
        .iter()
        .map(|segment| match segment {
            Segment::Key(key) => key.as_ref(),
            Segment::Index(_) => "*",
        })
        .collect();
    keys.join(".")
}

/// The byte range of each of `quotes` (each with its place, a JSON path
/// such as `transactions[3].description`) in `text`, found as the semantic
/// layer finds them and placed as its sources are: an identical quote at
/// the same place of a later item takes the next occurrence. For pages that
/// highlight the quotes of an output; `None` where absent or empty.
pub fn locate_quotes(text: &str, quotes: &[(FieldPath, &str)]) -> Vec<Option<Range<usize>>> {
    let normalized = Normalized::of(text);
    let mut repeats = Repeats::default();
    quotes
        .iter()
        .map(|(path, quote)| {
            let quote = normalize_whitespace(quote);
            if quote.is_empty() {
                return None;
            }
            repeats.place(&normalized, pattern_of(path), &quote)
        })
        .collect()
}

/// The byte range of `quote` in `text`, found as the semantic layer finds
/// it (whitespace normalised on both sides, the text's case): for pages
/// that highlight a quote the layer would accept. `None` when absent or empty.
pub fn locate_quote(text: &str, quote: &str) -> Option<Range<usize>> {
    let quote = normalize_whitespace(quote);
    if quote.is_empty() {
        return None;
    }
    let normalized = Normalized::of(text);
    let at = normalized.text.find(&quote)?;
    Some(normalized.original(at..at + quote.len()))
}

/// A text prepared once for many quotes, each looked for from a byte
/// offset on: the same whitespace-normalised match as [`locate_quote`].
pub struct QuoteIndex {
    normalized: Normalized,
}

impl QuoteIndex {
    /// The index of `text`.
    pub fn new(text: &str) -> QuoteIndex {
        QuoteIndex { normalized: Normalized::of(text) }
    }

    /// The byte range of the first occurrence of `quote` that starts at or
    /// after the byte `from` of the text.
    pub fn find_from(&self, quote: &str, from: usize) -> Option<Range<usize>> {
        let quote = normalize_whitespace(quote);
        if quote.is_empty() {
            return None;
        }
        let n = &self.normalized;
        // `from` inside a character (one byte after a quote that starts
        // with `Ü`): the search starts at the next character.
        let start = n.origin.partition_point(|origin| (*origin as usize) < from);
        let at = n.find_from(&quote, start)?;
        Some(n.original(at..at + quote.len()))
    }
}

/// A text with every run of whitespace made one space (ends trimmed), and
/// for each of its bytes the byte of the original it came from, so a match
/// in the normalised text maps back to the original bytes.
struct Normalized {
    text: String,
    /// `origin[i]`: the original byte offset of normalised byte `i` (for an
    /// inserted space, the first whitespace character it stands for).
    origin: Vec<u32>,
}

impl Normalized {
    fn of(original: &str) -> Normalized {
        let mut text = String::with_capacity(original.len());
        let mut origin = Vec::with_capacity(original.len());
        let mut pending_space = None;
        for (at, c) in original.char_indices() {
            if c.is_whitespace() {
                if !text.is_empty() && pending_space.is_none() {
                    pending_space = Some(at);
                }
                continue;
            }
            if let Some(space) = pending_space.take() {
                text.push(' ');
                origin.push(space as u32);
            }
            text.push(c);
            origin.extend((0..c.len_utf8()).map(|k| (at + k) as u32));
        }
        Normalized { text, origin }
    }

    /// The original byte range of the normalised range `range` (not empty).
    /// Where `quote` (normalised) first occurs in the normalised text at
    /// or after its byte `from` (moved to the next character inside one).
    fn find_from(&self, quote: &str, mut from: usize) -> Option<usize> {
        while from < self.text.len() && !self.text.is_char_boundary(from) {
            from += 1;
        }
        Some(str::get(&self.text, from..)?.find(quote)? + from)
    }

    fn original(&self, range: Range<usize>) -> Range<usize> {
        self.origin[range.start] as usize..self.origin[range.end - 1] as usize + 1
    }
}

fn values_text(info: &'static TypeInfo, meta: &CheckMeta, recorder: &Records) -> String {
    let mut seen = Vec::new();
    let mut parts = Vec::new();
    for (index, value) in &recorder.atoms {
        if seen.contains(index) {
            continue;
        }
        seen.push(*index);
        // The lowered check records operands by their index in `meta.atoms`.
        if let Some(atom) = meta.atoms.get(*index) {
            parts.push(format!("{} = {value}", info.render(*atom)));
        }
    }
    if parts.is_empty() { String::new() } else { format!(": {}", parts.join(", ")) }
}

fn fill_template(template: &str, meta: &CheckMeta, recorder: &Records) -> String {
    let mut out = template.to_string();
    if let Some(lhs) = &recorder.lhs {
        out = out.replace("{lhs}", lhs);
    }
    if let Some(rhs) = &recorder.rhs {
        out = out.replace("{rhs}", rhs);
    }
    for (index, value) in &recorder.placeholders {
        // By slice: `Audited::get` would shadow it on a `Vec` of text.
        if let Some(name) = <[&str]>::get(&meta.placeholders, *index) {
            out = out.replace(&format!("{{{name}}}"), value);
        }
    }
    out
}

/// Every run of whitespace becomes one space; the ends are trimmed.
pub(crate) fn normalize_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A value the semantic walk knows: a derived type, a `Sourced` value, a
/// container of them, or plain data with nothing inside to check. The derive
/// walks a field by the shape it reads from the field's type; these impls
/// let a name the derive cannot see through (a type alias of `Vec<Item>`, a
/// renamed import of `Sourced`) be walked exactly as the type it names, and
/// each gives its [`SHAPE`](Self::SHAPE), so the description of a field
/// follows what its type is, not how it was written.
#[diagnostic::on_unimplemented(
    message = "the semantic walk does not know `{Self}`",
    label = "a value of this type may hold checks that would never run",
    note = "derive `Extractable` on it, use a container the walk knows (`Option`, `Box`, `Vec`, sets, maps, tuples), or declare plain data without checks with `extract::leaf!`"
)]
pub trait Audited {
    /// Runs the checks of this value (and of everything inside it). `recoverable`
    /// is the tag of the field the value sits in.
    ///
    /// `Lazy` is always [`Lazy`]: a type parameter makes the walk generic, so
    /// (as with serde's `deserialize`) its code is compiled where a type is
    /// validated, not in every crate that merely defines one.
    ///
    /// The default has nothing to check: a derived type without checks or
    /// fields to descend into writes no walk at all.
    #[inline]
    fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
        let _ = (audit, recoverable);
    }
    /// The derived type inside, if any. A constant, not a function: a
    /// function would be compiled in every crate that derives a type, a
    /// constant only where it is read.
    const TYPE_INFO: Option<&'static TypeInfo> = None;
    /// How the type holds values, for the type's description. By default a
    /// derived type's own: the type, named, with its description.
    const SHAPE: &'static Shape = match Self::TYPE_INFO {
        Some(info) => &Shape::Named(info),
        None => &Shape::Leaf,
    };

    /// The description of a derived generic type (see
    /// [`Shape::Generic`]): its `SHAPE` points here.
    #[doc(hidden)]
    fn __generic_info() -> &'static TypeInfo {
        described(Self::TYPE_INFO)
    }

    /// For check paths ([`Hop`](super::Hop)): the struct a step into this value reaches.
    /// The same impl serves the walk and the paths, so a derived type writes
    /// one impl for both.
    type Target;
    /// Whether a step into this value passes through a collection
    /// ([`One`], [`Many`](super::Many)), reaches the value itself
    /// ([`Own`](super::Own): a derived type), or [`Stop`] for a value a
    /// path cannot step into.
    type Card: Reach + DefaultVisit<Self>;
    /// Calls `f` on every struct a step into this value reaches. By default
    /// the value itself if its `Card` is [`Own`](super::Own), else nothing.
    fn visit<'a, F: FnMut(&'a Self::Target)>(&'a self, f: &mut F) {
        <Self::Card as DefaultVisit<Self>>::visit(self, f)
    }
    /// The struct a single-valued step reaches, if any: by default the first
    /// one [`visit`](Self::visit) meets, which for a single-valued step is
    /// the only one. Collections say `None`.
    fn get(&self) -> Option<&Self::Target> {
        let mut first = None;
        self.visit(&mut |target| {
            first.get_or_insert(target);
        });
        first
    }
    /// Whether this value is an absent `Option` (through `Box`es).
    fn is_absent(&self) -> bool {
        false
    }
}

/// The description of a derived type (only derived types have checks).
pub(crate) fn described(info: Option<&'static TypeInfo>) -> &'static TypeInfo {
    info.expect("a derived type describes itself")
}

macro_rules! audit_wrapper {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Audited for $ty {
            fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
                if let Some(x) = Wrapper::inner(self) {
                    x.audit::<L>(audit, recoverable)
                }
            }
            const SHAPE: &'static Shape = &Shape::Wrap(T::SHAPE);
            type Target = T::Target;
            type Card = <T::Card as Reach>::Wrapped;
            fn visit<'a, F: FnMut(&'a T::Target)>(&'a self, f: &mut F) {
                if let Some(x) = Wrapper::inner(self) {
                    x.visit(f)
                }
            }
            fn get(&self) -> Option<&T::Target> {
                Wrapper::inner(self)?.get()
            }
            fn is_absent(&self) -> bool {
                Wrapper::inner(self).is_none_or(Audited::is_absent)
            }
        }
    )*};
}

audit_wrapper! {
    [T: Audited] Option<T>;
    [T: Audited + ?Sized] Box<T>;
    [T: Audited + ?Sized] std::sync::Arc<T>;
    [T: Audited + ?Sized] std::rc::Rc<T>;
    [T: Audited + ?Sized] &T;
}

/// A collection's items for check paths: every element (a map's values)
/// is reached, and the step passes through a collection.
macro_rules! path_through_collection {
    () => {
        type Target = T::Target;
        type Card = <T::Card as Reach>::Plural;
        fn visit<'a, F: FnMut(&'a T::Target)>(&'a self, f: &mut F) {
            for x in self.items() {
                x.visit(f)
            }
        }
        fn get(&self) -> Option<&T::Target> {
            None
        }
    };
}

macro_rules! audit_sequence {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Audited for $ty {
            fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
                audit.each(self, |x, audit| x.audit::<L>(audit, recoverable));
            }
            const SHAPE: &'static Shape = &Shape::Seq(T::SHAPE);
            path_through_collection!();
        }
    )*};
}

audit_sequence! {
    [T: Audited] std::collections::LinkedList<T>;
    [T: Audited] std::collections::BinaryHeap<T>;
    [T: Audited] Vec<T>;
    [T: Audited] std::collections::VecDeque<T>;
    [T: Audited, const N: usize] [T; N];
    [T: Audited] [T];
    [T: Audited] std::collections::BTreeSet<T>;
    [T: Audited, S] std::collections::HashSet<T, S>;
}

macro_rules! audit_map {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Audited for $ty {
            fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
                audit.each_entry(self, |x, audit| x.audit::<L>(audit, recoverable));
            }
            const SHAPE: &'static Shape = &Shape::Map(T::SHAPE);
            path_through_collection!();
        }
    )*};
}

audit_map! {
    [K: serde::Serialize, T: Audited] std::collections::BTreeMap<K, T>;
    [K: serde::Serialize, T: Audited, S] std::collections::HashMap<K, T, S>;
}

/// The type parameter of the semantic walk's methods: only [`Lazy`] has it.
/// The walk is generic over it so that a type's walk (its checks, its
/// fields) is compiled where the type is validated, as serde's derived
/// `deserialize` is compiled for the deserializer it is used with.
pub trait LazyWalk {}

/// The one [`LazyWalk`].
pub enum Lazy {}

impl LazyWalk for Lazy {}

/// Declares types plain data: values with nothing inside for the semantic
/// walk to check. A type the walk does not know must be declared so before
/// it can sit inside a `Sourced` or a type alias of a container, so that no
/// check is ever skipped silently: a type that derives `Extractable` is
/// walked, a type declared a leaf is not, and any other is a compile error.
///
/// ```
/// use extract::Sourced;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// enum Currency { Eur, Usd }
/// extract::leaf!(Currency);
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
/// struct Payment { currency: Sourced<Currency> }
/// ```
#[macro_export]
macro_rules! leaf {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::__private_v2::Audited for $ty {
            type Target = ();
            type Card = $crate::__private_v2::Stop;
        }
    )*};
}

// Plain data of the standard library and the optional dependencies. These
// impls also let a type alias of a container that mixes derived values with
// plain data (`type Pair = (Part, u32)`) be walked through the impls above.
crate::leaf!(
    String,
    str,
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    std::borrow::Cow<'static, str>,
    std::path::PathBuf,
    std::time::Duration,
    std::net::IpAddr,
    std::net::Ipv4Addr,
    std::net::Ipv6Addr,
    serde_json::Value
);
#[cfg(feature = "chrono")]
crate::leaf!(chrono::NaiveDate, chrono::NaiveDateTime, chrono::NaiveTime);
#[cfg(feature = "chrono")]
impl<Tz: chrono::TimeZone> Audited for chrono::DateTime<Tz> {
    type Target = ();
    type Card = Stop;
}
#[cfg(feature = "decimal")]
crate::leaf!(rust_decimal::Decimal);

macro_rules! audit_tuple {
    ($(($($name:ident $index:tt),+);)*) => {$(
        impl<$($name: Audited),+> Audited for ($($name,)+) {
            fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
                $(audit.at_index($index, |audit| self.$index.audit::<L>(audit, recoverable));)+
            }
            const SHAPE: &'static Shape = &Shape::Tuple(&[$($name::SHAPE),+]);
            type Target = ();
            type Card = Stop;
        }
    )*};
}

audit_tuple! {
    (A 0);
    (A 0, B 1);
    (A 0, B 1, C 2);
    (A 0, B 1, C 2, D 3);
}

/// A container of one value at most, with no path step: `Option`, `Box`, `Arc`, `Rc`, `&`.
pub trait Wrapper {
    /// What it holds.
    type Inner: ?Sized;
    /// The value inside, if there is one.
    fn inner(&self) -> Option<&Self::Inner>;
}

impl<T> Wrapper for Option<T> {
    type Inner = T;
    fn inner(&self) -> Option<&T> {
        self.as_ref()
    }
}

macro_rules! wrapper_by_deref {
    ($($ty:ty),*) => {$(
        impl<T: ?Sized> Wrapper for $ty {
            type Inner = T;
            fn inner(&self) -> Option<&T> {
                Some(self)
            }
        }
    )*};
}

wrapper_by_deref!(Box<T>, std::sync::Arc<T>, std::rc::Rc<T>, &T);

/// A map whose values a path reaches by key, whatever the key's type.
pub trait Keyed {
    /// The key, shown in paths as it serializes.
    type Key: serde::Serialize;
    /// A value.
    type Value;
    /// The entries.
    fn entries(&self) -> impl Iterator<Item = (&Self::Key, &Self::Value)>;
}

impl<K: serde::Serialize, V> Keyed for std::collections::BTreeMap<K, V> {
    type Key = K;
    type Value = V;
    fn entries(&self) -> impl Iterator<Item = (&K, &V)> {
        self.iter()
    }
}

impl<K: serde::Serialize, V, S> Keyed for std::collections::HashMap<K, V, S> {
    type Key = K;
    type Value = V;
    fn entries(&self) -> impl Iterator<Item = (&K, &V)> {
        self.iter()
    }
}

/// A map key as a path shows it: the key as it serializes (a string as is,
/// anything else as its JSON text).
fn key_text<K: serde::Serialize + ?Sized>(key: &K) -> String {
    match serde_json::to_value(key) {
        Ok(serde_json::Value::String(text)) => text,
        Ok(other) => other.to_string(),
        Err(_) => "(a key that does not serialize)".to_string(),
    }
}

impl Audit<'_> {
    /// Walks the value inside a wrapper, if there is one.
    #[inline]
    pub fn wrapped<W: Wrapper + ?Sized>(&mut self, wrapper: &W, walk: impl FnOnce(&W::Inner, &mut Self)) {
        if let Some(inner) = wrapper.inner() {
            walk(inner, self);
        }
    }

    /// Walks every element of a sequence or set, each one index deeper.
    pub fn each<S: Collection + ?Sized>(&mut self, sequence: &S, mut walk: impl FnMut(&S::Item, &mut Self)) {
        // One step for the whole sequence, its index set in place per
        // element: a walk leaves the path as it found it.
        self.path.push(Segment::Index(0));
        let at = self.path.len() - 1;
        for (i, item) in sequence.items().enumerate() {
            self.path[at] = Segment::Index(i);
            walk(item, self);
        }
        self.path.pop();
    }

    /// Walks every value of a map, each one key deeper.
    pub fn each_entry<M: Keyed + ?Sized>(&mut self, map: &M, mut walk: impl FnMut(&M::Value, &mut Self)) {
        for (key, value) in map.entries() {
            self.at_owned_key(key_text(key), |audit| walk(value, audit));
        }
    }
}

/// The probe the walk meets a named type with: `AuditProbe(value).audit_value(...)`
/// descends when the type is [`Audited`] (the inherent method, whose bound
/// method resolution checks before it settles on it) and does nothing
/// otherwise ([`AuditSkip`]'s: a leaf such as an enum, a newtype, text).
/// One step of method resolution, where autoref probes take one per level.
pub struct AuditProbe<'a, T: ?Sized>(pub &'a T);

impl<T: Audited + ?Sized> AuditProbe<'_, T> {
    /// Audits the value.
    #[inline]
    pub fn audit_value<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
        self.0.audit::<L>(audit, recoverable);
    }
}

/// Skips a value with nothing to check inside.
pub trait AuditSkip {
    /// Does nothing.
    fn audit_value<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool);
}

impl<T: ?Sized> AuditSkip for AuditProbe<'_, T> {
    #[inline]
    fn audit_value<L: LazyWalk>(&self, _: &mut Audit<'_>, _: bool) {}
}

/// The probe a field's [`Shape`] is found with, in a constant:
/// `NestedProbe::<T>::SHAPE` is the inherent constant below when `T` is
/// [`Audited`], else [`NestedNone`]'s (a leaf the walk does not know, which
/// the derive has judged to hold no derived value). Path resolution passes
/// over an inherent item whose bounds do not hold, so the choice is made
/// where `derived_items!` writes it, with no function for the user's crate
/// to compile.
pub struct NestedProbe<T: ?Sized>(PhantomData<T>);

impl<T: Audited + ?Sized> NestedProbe<T> {
    /// The type's shape.
    pub const SHAPE: &'static Shape = T::SHAPE;
}

/// Any other type: a leaf.
pub trait NestedNone {
    /// [`Shape::Leaf`].
    const SHAPE: &'static Shape = &Shape::Leaf;
}

impl<T: ?Sized> NestedNone for NestedProbe<T> {}

// Provenance is part of the semantic walk: a `Sourced` value's quote is
// checked against the document wherever the walk meets it, and its value is
// walked like any other (`Sourced<T>` demands `T: Audited`, so a value with
// checks is never one the walk cannot enter).
impl<T: Audited + 'static> Audited for Sourced<T> {
    fn audit<L: LazyWalk>(&self, audit: &mut Audit<'_>, recoverable: bool) {
        audit.check_quote(&self.quote, Quoted::of(&self.value), recoverable);
        audit.enter("value");
        self.value.audit::<L>(audit, recoverable);
        audit.leave();
    }
    const SHAPE: &'static Shape = &Shape::Sourced(T::SHAPE);
    // A check path steps into `value` and `quote`. Its card is `One`, not
    // `Own`: `Own` is what makes a derived type `Extractable`.
    type Target = Sourced<T>;
    type Card = One;
    fn visit<'a, F: FnMut(&'a Self)>(&'a self, f: &mut F) {
        f(self)
    }
}
