//! How a failing check shows the values it saw.

use std::fmt;

use crate::vocabulary::text::shorten;

use super::Number;

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
    pub fn atom(&mut self, index: usize, value: Shown) {
        if let Some(records) = &mut self.0 {
            records.atoms.push((index, value.0));
        }
    }

    /// Records operand `index` when it is a number the check computed (an
    /// aggregate, `len`, `abs`): shown as [`ShowNumber`] shows it, with no
    /// probe for the derive to emit.
    #[inline]
    pub fn number<N: Number>(&mut self, index: usize, value: &Option<N>) {
        // Off on every passing run: only the test is inlined there.
        if let Some(records) = &mut self.0 {
            record_number(records, index, value);
        }
    }

    /// Records the two sides of the top-level comparison.
    #[inline]
    pub fn sides(&mut self, lhs: Shown, rhs: Shown) {
        if let Some(records) = &mut self.0 {
            records.lhs = Some(lhs.0);
            records.rhs = Some(rhs.0);
        }
    }

    /// Records the value of `message` placeholder `index`.
    pub fn placeholder(&mut self, index: usize, value: Shown) {
        if let Some(records) = &mut self.0 {
            records.placeholders.push((index, value.0));
        }
    }
}

#[cold]
#[inline(never)]
fn record_number<N: Number>(records: &mut Records, index: usize, value: &Option<N>) {
    let shown = match value {
        Some(n) => Shown::number(n),
        None => Shown::absent(),
    };
    records.atoms.push((index, shown.0));
}

/// A value as a failure message shows it.
#[derive(Debug, Clone)]
pub struct Shown(pub String);

impl Shown {
    /// How a number is shown: as checks compute with it.
    fn number<N: Number + ?Sized>(value: &N) -> Shown {
        Shown(value.num().to_string())
    }

    /// How an absent operand is shown.
    pub fn absent() -> Shown {
        Shown("absent".to_string())
    }
}

/// The JSON name of a derived enum's variant: what the model writes for
/// the value (`"high"`), and what a check shows it as. The derive
/// implements it for every enum.
pub trait VariantName {
    /// The variant's tag, as the schema writes it.
    fn variant_name(&self) -> &'static str;
}

/// A derived enum's value is shown as its JSON name, quoted (`"high"`),
/// as the schema and the model write it.
pub trait ShowVariant {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: VariantName + ?Sized> ShowVariant for &&&&&Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(format!("{:?}", self.0.variant_name()))
    }
}

/// Numbers are shown as checks compute with them (`450.00`).
pub trait ShowNumber {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: Number + ?Sized> ShowNumber for &&&&Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown::number(self.0)
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
        Shown(shorten(&self.0.to_string(), 60))
    }
}

/// Other values are shown with `Debug` (enum variants).
pub trait ShowDebug {
    /// The value as shown.
    fn show(&self) -> Shown;
}
impl<T: fmt::Debug + ?Sized> ShowDebug for &Probe<'_, T> {
    fn show(&self) -> Shown {
        Shown(shorten(&format!("{:?}", self.0), 60))
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
/// concrete type: `probe_show!(value).show()` picks the first that applies
/// of a derived enum's variant, number, text, `Display`, `Debug`.
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// The probe derived code shows an operand with: `probe_show!(value).show()`,
/// one reference deeper than the deepest show impl above (see there).
#[doc(hidden)]
#[macro_export]
macro_rules! __probe_show {
    ($value:expr) => {
        (&&&&&&$crate::__private_v2::Probe($value))
    };
}
