//! The semantic walk: [`Audit`] carries the document and the current path
//! through a value, runs each type's checks and collects violations.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::marker::PhantomData;

use crate::schema::CheckMeta;
use crate::{Code, FieldPath, Layer, Segment, Sourced, TypeInfo, Violation};

use super::EvalError;
use super::render::{Recorder, Records};

/// The state of one semantic walk over a validated value.
pub struct Audit<'d> {
    document: &'d str,
    normalized_document: OnceCell<String>,
    path: Vec<Segment>,
    violations: Vec<Violation>,
}

impl<'d> Audit<'d> {
    /// A walk over a value extracted from `document`.
    pub fn new(document: &'d str) -> Audit<'d> {
        Audit { document, normalized_document: OnceCell::new(), path: Vec::new(), violations: Vec::new() }
    }

    /// The violations found.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }

    /// Runs `f` one key deeper.
    #[inline]
    pub fn at_key(&mut self, key: &'static str, f: impl FnOnce(&mut Self)) {
        self.path.push(Segment::Key(Cow::Borrowed(key)));
        f(self);
        self.path.pop();
    }

    /// Runs `f` one map key deeper.
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

    /// Runs one `#[check]` of a value whose type is described by `info`.
    /// `eval` is run once without recording; only when the check fails is it
    /// run again to record the values for the message.
    pub fn run_check(
        &mut self,
        info: &'static TypeInfo,
        meta: &'static CheckMeta,
        mut eval: impl FnMut(&mut Recorder) -> Result<Option<bool>, EvalError>,
    ) {
        let failure = match eval(&mut Recorder::off()) {
            Ok(Some(false)) => None,
            Ok(_) => return,
            Err(e) => Some(e),
        };
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
        let fields: Vec<FieldPath> = meta.fields.iter().map(|f| self.here(&info.json_path(f))).collect();
        let path = fields.first().cloned().unwrap_or_else(|| self.here(&[]));
        let code = meta.code.map_or(Code::CHECK_FAILED, Code::new_static);
        self.report(
            Violation::new(Layer::Semantic, code, path, message)
                .with_fields(fields)
                .recoverable(meta.recoverable)
                .with_check(rule),
        );
    }

    /// Runs a `#[check(with = function)]` check.
    pub fn run_with<E: std::fmt::Display>(&mut self, meta: &'static CheckMeta, result: Result<(), E>) {
        if let Err(error) = result {
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

    /// Checks that `quote` occurs in the document and, for text, that `value`
    /// occurs in the quote. Whitespace is normalised (every run becomes one
    /// space, ends trimmed) on both sides; the quote must match the document's
    /// case, the value is matched in the quote ignoring case.
    pub fn check_quote(&mut self, quote: &str, value: Option<&str>, recoverable: bool) {
        let quote_norm = normalize_whitespace(quote);
        let message = if quote_norm.is_empty() {
            Some("the quote is empty; quote the span of the document the value was read from".to_string())
        } else if !self.normalized_document().contains(&quote_norm) {
            Some(format!(
                "quote {} does not occur in the document; quote the source text exactly",
                crate::quote_prefix(quote)
            ))
        } else if let Some(value) = value {
            let value_norm = normalize_whitespace(value).to_lowercase();
            (!quote_norm.to_lowercase().contains(&value_norm)).then(|| {
                format!(
                    "value {} does not occur in its quote {}; give the value as the quote shows it",
                    crate::quote_prefix(value),
                    crate::quote_prefix(quote)
                )
            })
        } else {
            None
        };
        if let Some(message) = message {
            let path = self.here(&["quote"]);
            self.report(
                Violation::new(Layer::Semantic, Code::QUOTE_NOT_FOUND, path, message)
                    .recoverable(recoverable),
            );
        }
    }

    fn normalized_document(&self) -> &str {
        self.normalized_document.get_or_init(|| normalize_whitespace(self.document))
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
        parts.push(format!("{} = {value}", info.render(meta.atoms[*index])));
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
        out = out.replace(&format!("{{{}}}", meta.placeholders[*index]), value);
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

/// A value the semantic walk descends into: a derived type, a `Sourced`
/// value, or an `Option`, `Box` or `Vec` of one.
pub trait Audited {
    /// Runs the checks of this value (and of everything inside it). `recoverable`
    /// is the tag of the field the value sits in.
    fn audit(&self, audit: &mut Audit<'_>, recoverable: bool);
    /// The derived type inside, if any.
    fn type_info() -> Option<&'static TypeInfo>;
    /// `path` (below a field of this type) without the steps that only
    /// select inside this container: one index of a sequence, one key of a
    /// map. What remains starts at the nested type's own fields.
    fn inner_path(path: &[Segment]) -> &[Segment] {
        path
    }
}

impl<T: Audited> Audited for Option<T> {
    fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
        if let Some(x) = self {
            x.audit(audit, recoverable)
        }
    }
    fn type_info() -> Option<&'static TypeInfo> {
        T::type_info()
    }
    fn inner_path(path: &[Segment]) -> &[Segment] {
        T::inner_path(path)
    }
}

impl<T: Audited> Audited for Box<T> {
    fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
        (**self).audit(audit, recoverable)
    }
    fn type_info() -> Option<&'static TypeInfo> {
        T::type_info()
    }
    fn inner_path(path: &[Segment]) -> &[Segment] {
        T::inner_path(path)
    }
}

macro_rules! audit_sequence {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Audited for $ty {
            fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
                for (i, x) in self.iter().enumerate() {
                    audit.at_index(i, |audit| x.audit(audit, recoverable));
                }
            }
            fn type_info() -> Option<&'static TypeInfo> {
                T::type_info()
            }
            fn inner_path(path: &[Segment]) -> &[Segment] {
                match path {
                    [Segment::Index(_), rest @ ..] => T::inner_path(rest),
                    _ => path,
                }
            }
        }
    )*};
}

audit_sequence! {
    [T: Audited] Vec<T>;
    [T: Audited] std::collections::VecDeque<T>;
    [T: Audited, const N: usize] [T; N];
}

macro_rules! audit_map {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Audited for $ty {
            fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
                for (key, x) in self {
                    audit.at_owned_key(key.to_string(), |audit| x.audit(audit, recoverable));
                }
            }
            fn type_info() -> Option<&'static TypeInfo> {
                T::type_info()
            }
            fn inner_path(path: &[Segment]) -> &[Segment] {
                match path {
                    [Segment::Key(_), rest @ ..] => T::inner_path(rest),
                    _ => path,
                }
            }
        }
    )*};
}

audit_map! {
    [K: std::fmt::Display, T: Audited] std::collections::BTreeMap<K, T>;
    [K: std::fmt::Display, T: Audited, S] std::collections::HashMap<K, T, S>;
}

/// The probe the walk descends fields with: `(&&AuditProbe(&field)).audit_field(...)`
/// descends when the field's type is [`Audited`] and does nothing otherwise.
pub struct AuditProbe<'a, T>(pub &'a T);

/// Descends into a field whose type is [`Audited`].
pub trait AuditRecurse {
    /// Audits the field under its JSON name.
    fn audit_field(&self, audit: &mut Audit<'_>, json_name: &'static str, recoverable: bool);
}

impl<T: Audited> AuditRecurse for &AuditProbe<'_, T> {
    fn audit_field(&self, audit: &mut Audit<'_>, json_name: &'static str, recoverable: bool) {
        audit.at_key(json_name, |audit| self.0.audit(audit, recoverable));
    }
}

/// Skips a field with nothing to check inside.
pub trait AuditSkip {
    /// Does nothing.
    fn audit_field(&self, audit: &mut Audit<'_>, json_name: &'static str, recoverable: bool);
}

impl<T> AuditSkip for AuditProbe<'_, T> {
    fn audit_field(&self, _: &mut Audit<'_>, _: &'static str, _: bool) {}
}

/// The probe `TypeInfo` finds a field's nested derived type with.
pub struct NestedProbe<T>(pub PhantomData<T>);

/// A field type with a derived type inside.
pub trait NestedSome {
    /// The nested type's description.
    fn nested(&self) -> Option<&'static TypeInfo>;
    /// See [`Audited::inner_path`].
    fn inner_path<'p>(&self, path: &'p [Segment]) -> &'p [Segment];
}

impl<T: Audited> NestedSome for &NestedProbe<T> {
    fn nested(&self) -> Option<&'static TypeInfo> {
        T::type_info()
    }
    fn inner_path<'p>(&self, path: &'p [Segment]) -> &'p [Segment] {
        T::inner_path(path)
    }
}

/// Any other field type.
pub trait NestedNone {
    /// `None`.
    fn nested(&self) -> Option<&'static TypeInfo>;
    /// `path` unchanged.
    fn inner_path<'p>(&self, path: &'p [Segment]) -> &'p [Segment];
}

impl<T> NestedNone for NestedProbe<T> {
    fn nested(&self) -> Option<&'static TypeInfo> {
        None
    }
    fn inner_path<'p>(&self, path: &'p [Segment]) -> &'p [Segment] {
        path
    }
}

// Provenance is part of the semantic walk: a `Sourced` value's quote is
// checked against the document wherever the walk meets it.
impl<T: 'static> Audited for Sourced<T> {
    fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
        audit.check_quote(&self.quote, quoted_text(&self.value), recoverable);
    }
    fn type_info() -> Option<&'static TypeInfo> {
        None
    }
}

/// The text to find in the quote, for text values (`String`, `Option<String>`,
/// `Box<str>`); `None` for any other value, whose quote alone is checked.
fn quoted_text(value: &dyn std::any::Any) -> Option<&str> {
    if let Some(text) = value.downcast_ref::<String>() {
        Some(text)
    } else if let Some(text) = value.downcast_ref::<Option<String>>() {
        text.as_deref()
    } else {
        value.downcast_ref::<Box<str>>().map(|text| &**text)
    }
}
