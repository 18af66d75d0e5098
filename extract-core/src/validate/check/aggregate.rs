//! The aggregates of the check language: `sum`, `count`, `min`, `max` and
//! `unique`, each a running state fed the values a path names.

use std::cmp::Ordering;

use super::EvalError;
use super::num::{ArithOp, Computed, Num, Number, Tolerance, UniqueKey};
use super::ops::{Compare, Truth, Val, Verdict};

/// Values `sum` accepts.
#[diagnostic::on_unimplemented(
    message = "cannot sum `{Self}` in a check",
    label = "`sum` needs numbers",
    note = "`sum` adds integers, floats or `Decimal`s; use `count` to count values"
)]
pub trait Summable {
    /// The number kind of the sum.
    type Kind;
    /// The value as a number.
    fn summand(&self) -> Num;
}

impl<T: Number + ?Sized> Summable for T {
    type Kind = T::Kind;
    fn summand(&self) -> Num {
        self.num()
    }
}

/// The running state of `sum(path)`: wide integers, overflow remembered.
pub struct Sum<K> {
    total: Result<Num, EvalError>,
    kind: std::marker::PhantomData<K>,
}

impl<K> Default for Sum<K> {
    fn default() -> Self {
        Sum { total: Ok(Num::Int(0)), kind: std::marker::PhantomData }
    }
}

impl<K> Sum<K> {
    /// Adds one value.
    #[inline]
    pub fn add<X: Summable<Kind = K> + ?Sized>(&mut self, x: &X) {
        match (&mut self.total, x.summand()) {
            // The common case, a float column, without the general promotion.
            (Ok(Num::Float(total)), Num::Float(x)) if x.is_finite() => {
                *total += x;
                if total.is_infinite() {
                    self.total = Err(EvalError::Overflow);
                }
            }
            (Ok(total), x) => self.total = total.arith(ArithOp::Add, x),
            (Err(_), _) => {}
        }
    }

    /// The sum (zero for an empty collection).
    pub fn finish(self) -> Result<Option<Computed<K>>, EvalError> {
        self.total.map(|t| Some(Computed::new(t)))
    }
}

/// Values `min` and `max` accept.
#[diagnostic::on_unimplemented(
    message = "`min` and `max` cannot order `{Self}` in a check",
    label = "`min` and `max` need numbers"
)]
pub trait Extremum {
    /// The number kind.
    type Kind;
    /// The value as a number.
    fn extremum(&self) -> Num;
}

impl<T: Number + ?Sized> Extremum for T {
    type Kind = T::Kind;
    fn extremum(&self) -> Num {
        self.num()
    }
}

/// The running state of `min(path)` or `max(path)`.
pub struct MinMax<K> {
    best: Result<Option<Num>, EvalError>,
    want: Ordering,
    kind: std::marker::PhantomData<K>,
}

impl<K> MinMax<K> {
    /// The state of `min`.
    pub fn min() -> Self {
        MinMax { best: Ok(None), want: Ordering::Less, kind: std::marker::PhantomData }
    }

    /// The state of `max`.
    pub fn max() -> Self {
        MinMax { best: Ok(None), want: Ordering::Greater, kind: std::marker::PhantomData }
    }

    /// Considers one value.
    pub fn add<X: Extremum<Kind = K> + ?Sized>(&mut self, x: &X) {
        let x = x.extremum();
        if let Ok(best) = &mut self.best {
            match best {
                None => *best = Some(x),
                Some(b) => match x.compare(*b, Tolerance::Exact) {
                    Ok(Some(order)) if order == self.want => *best = Some(x),
                    Ok(_) => {}
                    Err(e) => self.best = Err(e),
                },
            }
        }
    }

    /// The extreme value; absent for an empty collection.
    pub fn finish(self) -> Result<Option<Computed<K>>, EvalError> {
        self.best.map(|b| b.map(Computed::new))
    }
}

/// The running state of `count(path)`.
#[derive(Default)]
pub struct Count(i128);

impl Count {
    /// Counts one value.
    pub fn add<X: ?Sized>(&mut self, _: &X) {
        self.0 += 1;
    }

    /// The count.
    pub fn finish(self) -> Result<Option<Computed<super::kind::Integer>>, EvalError> {
        Ok(Some(Computed::new(Num::Int(self.0))))
    }
}

/// A key `unique` compares values by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key<'a> {
    /// A number (floats by total order).
    #[allow(private_interfaces)]
    Num(UniqueKey),
    /// Text.
    Str(&'a str),
    /// A boolean.
    Bool(bool),
    /// A date or time, as its ISO text.
    Date(String),
}

/// Values `unique` accepts.
#[diagnostic::on_unimplemented(
    message = "`unique` cannot compare `{Self}` values in a check",
    label = "`unique` needs numbers, text, booleans or dates"
)]
pub trait UniqueItem {
    /// The key of this value.
    fn key(&self) -> Key<'_>;
}

macro_rules! unique_num {
    ($($t:ty),*) => {$(
        impl UniqueItem for $t {
            fn key(&self) -> Key<'_> { Key::Num(self.num().unique_key()) }
        }
    )*};
}
unique_num!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
#[cfg(feature = "decimal")]
unique_num!(rust_decimal::Decimal);

impl UniqueItem for String {
    fn key(&self) -> Key<'_> {
        Key::Str(self)
    }
}

impl UniqueItem for str {
    fn key(&self) -> Key<'_> {
        Key::Str(self)
    }
}

impl UniqueItem for bool {
    fn key(&self) -> Key<'_> {
        Key::Bool(*self)
    }
}

#[cfg(feature = "chrono")]
macro_rules! unique_date {
    ($($t:ty),*) => {$(
        impl UniqueItem for $t {
            fn key(&self) -> Key<'_> { Key::Date(self.to_string()) }
        }
    )*};
}
#[cfg(feature = "chrono")]
unique_date!(chrono::NaiveDate, chrono::NaiveDateTime, chrono::NaiveTime);

/// Instants collide however their offset is written: keyed in UTC.
#[cfg(feature = "chrono")]
impl<Tz: chrono::TimeZone> UniqueItem for chrono::DateTime<Tz> {
    fn key(&self) -> Key<'_> {
        Key::Date(self.with_timezone(&chrono::Utc).to_rfc3339())
    }
}

/// The running state of `unique(path)`.
#[derive(Default)]
pub struct Unique<'a>(Vec<Key<'a>>);

impl<'a> Unique<'a> {
    /// Considers one value.
    pub fn add<X: UniqueItem + ?Sized>(&mut self, x: &'a X) {
        self.0.push(x.key());
    }

    /// Whether no two values were equal, naming a repeated value if one was.
    pub fn finish(mut self) -> Result<Option<Uniqueness>, EvalError> {
        self.0.sort_unstable();
        let repeated = self.0.windows(2).find(|w| w[0] == w[1]).map(|w| w[0].to_string());
        Ok(Some(Uniqueness { holds: repeated.is_none(), repeated }))
    }
}

/// The result of `unique(path)`: true or false, and a value that repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct Uniqueness {
    /// Whether no two values were equal.
    pub holds: bool,
    /// A value that occurs more than once, as a message shows it.
    pub repeated: Option<String>,
}

impl std::fmt::Display for Uniqueness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repeated {
            None => f.write_str("true"),
            Some(value) => write!(f, "false ({value} occurs more than once)"),
        }
    }
}

impl Val for Uniqueness {
    type T = Uniqueness;
    fn val(&self) -> &Uniqueness {
        self
    }
}

impl Compare<bool> for Uniqueness {
    fn compare(&self, other: &bool, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
        Ok(Some(self.holds.cmp(other)))
    }
}

impl Compare<Uniqueness> for bool {
    fn compare(&self, other: &Uniqueness, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
        Ok(Some(self.cmp(&other.holds)))
    }
}

impl Compare<Uniqueness> for Uniqueness {
    fn compare(&self, other: &Uniqueness, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
        Ok(Some(self.holds.cmp(&other.holds)))
    }
}

impl Truth for Option<Uniqueness> {
    fn truth(self) -> Option<bool> {
        self.map(|u| u.holds)
    }
}

impl Verdict for Option<Uniqueness> {
    fn verdict(self) -> Option<bool> {
        self.map(|u| u.holds)
    }
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Num(UniqueKey::Int(i)) => write!(f, "{i}"),
            Key::Num(UniqueKey::Float(bits)) => write!(f, "{}", Num::Float(f64::from_bits(*bits))),
            #[cfg(feature = "decimal")]
            Key::Num(UniqueKey::Dec(d)) => write!(f, "{d}"),
            Key::Str(text) => f.write_str(&crate::quote_prefix(text)),
            Key::Bool(b) => write!(f, "{b}"),
            Key::Date(text) => f.write_str(text),
        }
    }
}
