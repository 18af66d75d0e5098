//! Operators and functions of the check language over operands that may be absent.

use std::cmp::Ordering;

use super::EvalError;
use super::num::{ArithOp, Computed, Meet, Num, Number, Tolerance};

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
