//! Operators and functions of the check language over operands that may be absent.

use std::cmp::Ordering;

use super::EvalError;
use super::num::{ArithOp, Computed, Meet, Num, Number, Tolerance, UniqueKey};

/// An operand value: a reference to a field, or a computed value.
pub trait Val {
    /// The value's type as the check sees it.
    type T: ?Sized;
    /// The value.
    fn val(&self) -> &Self::T;
}

impl<T: ?Sized> Val for &T {
    type T = T;
    fn val(&self) -> &T {
        self
    }
}

macro_rules! owned_val {
    ($($t:ty),*) => {$(
        impl Val for $t {
            type T = $t;
            fn val(&self) -> &$t { self }
        }
    )*};
}
owned_val!(bool, super::IntLit, super::FloatLit);

impl<K> Val for Computed<K> {
    type T = Computed<K>;
    fn val(&self) -> &Computed<K> {
        self
    }
}

/// Two values a check can compare.
#[diagnostic::on_unimplemented(
    message = "cannot compare `{Self}` with `{R}` in a check",
    label = "these operands do not compare",
    note = "a check compares numbers with numbers (integers promote to floats or `Decimal`s), text with text, booleans with booleans, dates with dates, and a field with an enum variant (`status == Status::Paid`)",
    note = "a path through a collection names many values: use it inside `sum`, `count`, `min`, `max` or `unique`"
)]
pub trait Compare<R: ?Sized> {
    /// The order of `self` and `other` (`Equal` within `tolerance`).
    fn compare(&self, other: &R, tolerance: Tolerance) -> Result<Option<Ordering>, EvalError>;
}

impl<L: Number + ?Sized, R: Number + ?Sized> Compare<R> for L
where
    L::Kind: Meet<R::Kind>,
{
    fn compare(&self, other: &R, tolerance: Tolerance) -> Result<Option<Ordering>, EvalError> {
        self.num().compare(other.num(), tolerance)
    }
}

macro_rules! compare_ord {
    ($($l:ty => $r:ty),* $(,)?) => {$(
        impl Compare<$r> for $l {
            #[inline]
            fn compare(&self, other: &$r, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
                Ok(Some(<str as Ord>::cmp(self.as_ref(), other.as_ref())))
            }
        }
    )*};
}
compare_ord!(String => String, String => str, str => String, str => str);

impl Compare<bool> for bool {
    fn compare(&self, other: &bool, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
        Ok(Some(self.cmp(other)))
    }
}

#[cfg(feature = "chrono")]
macro_rules! compare_dates {
    ($($t:ty),*) => {$(
        impl Compare<$t> for $t {
            fn compare(&self, other: &$t, _: Tolerance) -> Result<Option<Ordering>, EvalError> {
                Ok(self.partial_cmp(other))
            }
        }
    )*};
}
#[cfg(feature = "chrono")]
compare_dates!(
    chrono::NaiveDate,
    chrono::NaiveDateTime,
    chrono::NaiveTime,
    chrono::DateTime<chrono::Utc>,
    chrono::DateTime<chrono::FixedOffset>
);

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// `l op r`; absent when either side is absent (or the two do not order, like NaN).
pub fn compare<A: Val, B: Val>(
    l: Option<A>,
    op: CmpOp,
    r: Option<B>,
    tolerance: Option<Num>,
) -> Result<Option<bool>, EvalError>
where
    A::T: Compare<B::T>,
{
    let (Some(l), Some(r)) = (l, r) else { return Ok(None) };
    // Tolerance is for equality only; orderings compare exactly.
    let tolerance = match (op, tolerance) {
        (CmpOp::Eq | CmpOp::Ne, Some(given)) => Tolerance::Given(given),
        (CmpOp::Eq | CmpOp::Ne, None) => Tolerance::Default,
        _ => Tolerance::Exact,
    };
    let Some(order) = l.val().compare(r.val(), tolerance)? else { return Ok(None) };
    Ok(Some(match op {
        CmpOp::Eq => order == Ordering::Equal,
        CmpOp::Ne => order != Ordering::Equal,
        CmpOp::Lt => order == Ordering::Less,
        CmpOp::Le => order != Ordering::Greater,
        CmpOp::Gt => order == Ordering::Greater,
        CmpOp::Ge => order != Ordering::Less,
    }))
}

/// `field == Enum::Variant` (or `!=`): equality through `PartialEq`.
pub fn eq_variant<A: Val, B: Val<T = A::T>>(l: Option<A>, r: Option<B>, equal: bool) -> Option<bool>
where
    A::T: PartialEq,
{
    let (Some(l), Some(r)) = (l, r) else { return None };
    Some((l.val() == r.val()) == equal)
}

/// What a whole check must evaluate to.
#[diagnostic::on_unimplemented(
    message = "a check must be true or false, not `{Self}`",
    label = "this rule is not a condition",
    note = "write a comparison, like `total >= 0`"
)]
pub trait Verdict {
    /// The result; `None` (absent) holds vacuously.
    fn verdict(self) -> Option<bool>;
}

impl Verdict for Option<bool> {
    fn verdict(self) -> Option<bool> {
        self
    }
}

impl Verdict for Option<&bool> {
    fn verdict(self) -> Option<bool> {
        self.copied()
    }
}

/// The result of a whole check.
pub fn verdict<T: Verdict>(x: T) -> Option<bool> {
    x.verdict()
}

/// `l op r` for `+ - * /`; absent when either side is absent.
#[allow(clippy::type_complexity)]
pub fn arith<A: Val, B: Val>(
    l: Option<A>,
    op: ArithOp,
    r: Option<B>,
) -> Result<Option<Computed<<<A::T as Number>::Kind as Meet<<B::T as Number>::Kind>>::Out>>, EvalError>
where
    A::T: Number,
    B::T: Number,
    <A::T as Number>::Kind: Meet<<B::T as Number>::Kind>,
{
    let (Some(l), Some(r)) = (l, r) else { return Ok(None) };
    Ok(Some(Computed::new(l.val().num().arith(op, r.val().num())?)))
}

/// `-x`.
pub fn neg<A: Val>(x: Option<A>) -> Result<Option<Computed<<A::T as Number>::Kind>>, EvalError>
where
    A::T: Number,
{
    x.map(|x| x.val().num().negate().map(Computed::new)).transpose()
}

/// `abs(x)`.
pub fn abs<A: Val>(x: Option<A>) -> Result<Option<Computed<<A::T as Number>::Kind>>, EvalError>
where
    A::T: Number,
{
    x.map(|x| x.val().num().abs().map(Computed::new)).transpose()
}

/// A value `&&`, `||` and `!` accept.
#[diagnostic::on_unimplemented(
    message = "`&&`, `||` and `!` need true or false, not `{Self}`",
    label = "not a boolean"
)]
pub trait Truth {
    /// The truth value; `None` when absent.
    fn truth(self) -> Option<bool>;
}

impl Truth for Option<bool> {
    fn truth(self) -> Option<bool> {
        self
    }
}

impl Truth for Option<&bool> {
    fn truth(self) -> Option<bool> {
        self.copied()
    }
}

/// The truth value of a logical operand.
pub fn truth<T: Truth>(x: T) -> Option<bool> {
    x.truth()
}

/// `!x`; absent stays absent.
pub fn not<T: Truth>(x: T) -> Option<bool> {
    x.truth().map(|b| !b)
}

/// `l && r` given both sides (the caller skips `r` when `l` is false).
pub fn and(l: Option<bool>, r: Option<bool>) -> Option<bool> {
    match (l, r) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// `l || r` given both sides (the caller skips `r` when `l` is true).
pub fn or(l: Option<bool>, r: Option<bool>) -> Option<bool> {
    match (l, r) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

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

/// Values `len` measures.
#[diagnostic::on_unimplemented(
    message = "`len` cannot measure `{Self}` in a check",
    label = "`len` takes text or a collection"
)]
pub trait Length {
    /// Characters of text, elements of a collection.
    fn length(&self) -> usize;
}

impl Length for String {
    fn length(&self) -> usize {
        self.chars().count()
    }
}

impl Length for str {
    fn length(&self) -> usize {
        self.chars().count()
    }
}

macro_rules! length_of_collection {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Length for $ty {
            fn length(&self) -> usize {
                self.len()
            }
        }
    )*};
}

length_of_collection! {
    [T] Vec<T>;
    [T] std::collections::VecDeque<T>;
    [T, const N: usize] [T; N];
    [K, T] std::collections::BTreeMap<K, T>;
    [K, T, S] std::collections::HashMap<K, T, S>;
}

impl<T> Length for [T] {
    fn length(&self) -> usize {
        self.len()
    }
}

impl<T: Length + ?Sized> Length for Box<T> {
    fn length(&self) -> usize {
        (**self).length()
    }
}

/// `len(x)`.
pub fn len<A: Val>(x: Option<A>) -> Option<Computed<super::kind::Integer>>
where
    A::T: Length,
{
    x.map(|x| Computed::new(Num::Int(x.val().length() as i128)))
}
