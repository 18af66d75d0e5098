//! How a check is shown: its rule in the JSON names the model sees, and the
//! values it saw when it failed.

use std::fmt;

use crate::TypeInfo;

use super::Number;

/// One piece of a rule's text: literal text, or a field path in Rust names
/// that is shown in JSON names.
#[derive(Debug)]
pub enum RulePiece {
    /// Text shown as is.
    Text(&'static str),
    /// A field path, by Rust field names.
    Path(&'static [&'static str]),
}

/// Everything the derive knows about one `#[check]`, kept for run time.
#[derive(Debug)]
pub struct CheckMeta {
    /// The rule, e.g. `sum(line_items.amount) == stated_total`.
    pub rule: &'static [RulePiece],
    /// The operands whose values a failure shows, each as rule pieces.
    pub atoms: &'static [&'static [RulePiece]],
    /// The fields the check reads, by Rust names (a path through a collection
    /// is cut after its first step: `line_items`).
    pub fields: &'static [&'static [&'static str]],
    /// The `tolerance` option as written.
    pub tolerance: Option<&'static str>,
    /// The `message` option: `{lhs}`, `{rhs}` and field names are substituted.
    pub message: Option<&'static str>,
    /// The names `message` placeholders refer to, in the order the recorder fills them.
    pub placeholders: &'static [&'static str],
    /// The `code` option.
    pub code: Option<&'static str>,
    /// `false` when the check says `recoverable = false`.
    pub recoverable: bool,
    /// For `with = function` checks: the function's path as written.
    pub with: Option<&'static str>,
}

impl TypeInfo {
    /// Renders rule pieces in the JSON names of this type and the types it nests.
    pub fn render(&'static self, pieces: &[RulePiece]) -> String {
        let mut out = String::new();
        for piece in pieces {
            match piece {
                RulePiece::Text(text) => out.push_str(text),
                RulePiece::Path(path) => out.push_str(&self.json_path(path).join(".")),
            }
        }
        out
    }

    /// The JSON names of a path given by Rust names (a name the tables do not
    /// know is kept as written).
    pub fn json_path(&'static self, rust_path: &[&'static str]) -> Vec<&'static str> {
        let mut ty = Some(self);
        rust_path
            .iter()
            .map(|rust| {
                let field = ty.and_then(|t| t.fields.iter().find(|f| f.rust_name == *rust));
                ty = field.and_then(|f| (f.nested)());
                field.map_or(*rust, |f| f.json_name)
            })
            .collect()
    }
}

/// Collects the values a failing check saw. Off on the first (fast) run, where
/// it is one empty pointer to build and drop; on when the check is run again
/// to explain a failure.
#[derive(Debug, Default)]
pub struct Recorder(Option<Box<Records>>);

/// What a recorder that is on has collected.
#[derive(Debug, Default)]
pub(crate) struct Records {
    pub(crate) atoms: Vec<(usize, String)>,
    pub(crate) lhs: Option<String>,
    pub(crate) rhs: Option<String>,
    pub(crate) placeholders: Vec<(usize, String)>,
}

impl Recorder {
    /// A recorder that records nothing.
    #[inline]
    pub fn off() -> Recorder {
        Recorder(None)
    }

    /// A recorder that records.
    pub fn on() -> Recorder {
        Recorder(Some(Box::default()))
    }

    /// Whether values are being recorded.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// What was recorded (nothing when off).
    pub(crate) fn into_records(self) -> Records {
        self.0.map(|records| *records).unwrap_or_default()
    }

    /// Records operand `index` of the check.
    #[inline]
    pub fn atom(&mut self, index: usize, value: impl FnOnce() -> Shown) {
        if let Some(records) = &mut self.0 {
            records.atoms.push((index, value().0));
        }
    }

    /// Records the two sides of the top-level comparison.
    #[inline]
    pub fn sides(&mut self, lhs: impl FnOnce() -> Shown, rhs: impl FnOnce() -> Shown) {
        if let Some(records) = &mut self.0 {
            records.lhs = Some(lhs().0);
            records.rhs = Some(rhs().0);
        }
    }

    /// Records the value of `message` placeholder `index`.
    pub fn placeholder(&mut self, index: usize, value: impl FnOnce() -> Shown) {
        if let Some(records) = &mut self.0 {
            records.placeholders.push((index, value().0));
        }
    }
}

/// A value as a failure message shows it.
#[derive(Debug, Clone)]
pub struct Shown(pub String);

impl Shown {
    /// How an absent operand is shown.
    pub fn absent() -> Shown {
        Shown("absent".to_string())
    }

    /// Shows an operand that may be absent, choosing the best format for its type.
    pub fn of_option<A: super::Val>(value: &Option<A>, show: impl FnOnce(&A::T) -> Shown) -> Shown {
        match value {
            Some(v) => show(v.val()),
            None => Shown::absent(),
        }
    }
}

/// Numbers are shown as checks compute with them (`450.00`).
pub trait ShowNumber {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: Number + ?Sized> ShowNumber for &&&&Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(self.0.num().to_string())
    }
}

/// Text is shown quoted, and cut short when long.
pub trait ShowText {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: AsRef<str> + ?Sized> ShowText for &&&Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(crate::quote_prefix(self.0.as_ref()))
    }
}

/// Other values with `Display` (dates, booleans) are shown with it.
pub trait ShowDisplay {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: fmt::Display + ?Sized> ShowDisplay for &&Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(crate::violation::shorten(&self.0.to_string()))
    }
}

/// Other values are shown with `Debug` (enum variants).
pub trait ShowDebug {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: fmt::Debug + ?Sized> ShowDebug for &Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(crate::violation::shorten(&format!("{:?}", self.0)))
    }
}

/// Values with neither `Display` nor `Debug`.
pub trait ShowOpaque {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: ?Sized> ShowOpaque for Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown("(a value)".to_string())
    }
}

/// The probe the show traits are chosen on, by method resolution on the
/// concrete type: `(&&&&&Probe(value)).show()` picks the first that applies
/// of number, text, `Display`, `Debug`.
pub struct Probe<'a, T: ?Sized>(pub &'a T);
