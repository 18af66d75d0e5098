//! Numbers in checks: every numeric field or literal becomes a [`Num`] at run
//! time, and a *kind* at compile time, so that mixing a float with a `Decimal`
//! is a type error while integers promote to whatever they meet.

use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;

use super::EvalError;

/// A number as a check computes with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// Any integer, held wide so sums of narrow types never wrap.
    Int(i128),
    /// A float.
    Float(f64),
    /// A float literal, kept with its text so it can become an exact `Decimal`.
    FloatLit(f64, &'static str),
    /// An exact decimal.
    #[cfg(feature = "decimal")]
    Dec(rust_decimal::Decimal),
}

/// Kind markers: the compile-time type of a number in a check.
pub mod kind {
    /// An integer field or result.
    pub struct Integer;
    /// A float field or result.
    pub struct Float;
    /// A `rust_decimal::Decimal` field or result.
    pub struct Decimal;
    /// An integer literal: adapts to whatever it meets.
    pub struct IntegerLiteral;
    /// A float literal: becomes a float, or an exact `Decimal` when it meets one.
    pub struct FloatLiteral;
}

/// A value a check can compute with as a number.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number, so a check cannot compute with it or compare it with a number",
    label = "not a number",
    note = "arithmetic, comparisons with numbers, `sum`, `min`, `max` and `abs` take integers, floats or `Decimal`s"
)]
pub trait Number {
    /// The compile-time kind.
    type Kind;
    /// The run-time value.
    fn num(&self) -> Num;
}

/// Which kind two numbers make when they meet. There is deliberately no
/// implementation for a float meeting a `Decimal`.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` cannot meet a `{K}` in a check",
    label = "these numbers do not mix",
    note = "floats are inexact and `Decimal`s are exact, so a check never mixes them: make both fields `Decimal`, or both floats"
)]
pub trait Meet<K> {
    /// The kind of the result.
    type Out;
}

macro_rules! meet {
    ($($a:ident * $b:ident => $out:ident;)*) => {
        $(impl Meet<kind::$b> for kind::$a { type Out = kind::$out; })*
    };
}

meet! {
    Integer * Integer => Integer;
    Integer * Float => Float;
    Float * Integer => Float;
    Float * Float => Float;
    Integer * Decimal => Decimal;
    Decimal * Integer => Decimal;
    Decimal * Decimal => Decimal;
    IntegerLiteral * Integer => Integer;
    IntegerLiteral * Float => Float;
    IntegerLiteral * Decimal => Decimal;
    IntegerLiteral * IntegerLiteral => Integer;
    IntegerLiteral * FloatLiteral => Float;
    Integer * IntegerLiteral => Integer;
    Float * IntegerLiteral => Float;
    Decimal * IntegerLiteral => Decimal;
    FloatLiteral * Integer => Float;
    FloatLiteral * Float => Float;
    FloatLiteral * Decimal => Decimal;
    FloatLiteral * FloatLiteral => Float;
    FloatLiteral * IntegerLiteral => Float;
    Integer * FloatLiteral => Float;
    Float * FloatLiteral => Float;
    Decimal * FloatLiteral => Decimal;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Number for $t {
            type Kind = kind::Integer;
            #[inline]
            fn num(&self) -> Num { Num::Int(*self as i128) }
        }
    )*};
}
integer!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);

impl Number for u128 {
    type Kind = kind::Integer;
    #[inline]
    fn num(&self) -> Num {
        // Above i128::MAX a u128 cannot be held exactly; saturate and let the
        // caller see the value in the message.
        Num::Int(i128::try_from(*self).unwrap_or(i128::MAX))
    }
}

impl Number for f64 {
    type Kind = kind::Float;
    #[inline]
    fn num(&self) -> Num {
        Num::Float(*self)
    }
}

impl Number for f32 {
    type Kind = kind::Float;
    #[inline]
    fn num(&self) -> Num {
        Num::Float(f64::from(*self))
    }
}

#[cfg(feature = "decimal")]
impl Number for rust_decimal::Decimal {
    type Kind = kind::Decimal;
    #[inline]
    fn num(&self) -> Num {
        Num::Dec(*self)
    }
}

impl<T: Number + ?Sized> Number for &T {
    type Kind = T::Kind;
    #[inline]
    fn num(&self) -> Num {
        (**self).num()
    }
}

impl<T: Number + ?Sized> Number for Box<T> {
    type Kind = T::Kind;
    #[inline]
    fn num(&self) -> Num {
        (**self).num()
    }
}

/// An integer literal of a check.
#[derive(Debug, Clone, Copy)]
pub struct IntLit(pub i128);

impl Number for IntLit {
    type Kind = kind::IntegerLiteral;
    #[inline]
    fn num(&self) -> Num {
        Num::Int(self.0)
    }
}

/// A float literal of a check, with its source text for exact `Decimal`s.
#[derive(Debug, Clone, Copy)]
pub struct FloatLit(pub f64, pub &'static str);

impl Number for FloatLit {
    type Kind = kind::FloatLiteral;
    #[inline]
    fn num(&self) -> Num {
        Num::FloatLit(self.0, self.1)
    }
}

/// A computed number of kind `K`.
pub struct Computed<K>(pub Num, PhantomData<K>);

impl<K> Computed<K> {
    /// Wraps a computed value.
    pub fn new(num: Num) -> Self {
        Computed(num, PhantomData)
    }
}

impl<K> Clone for Computed<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Computed<K> {}

impl<K> Number for Computed<K> {
    type Kind = K;
    #[inline]
    fn num(&self) -> Num {
        self.0
    }
}

impl<K> fmt::Display for Computed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The two operands promoted to one representation.
enum Pair {
    Int(i128, i128),
    Float(f64, f64),
    #[cfg(feature = "decimal")]
    Dec(rust_decimal::Decimal, rust_decimal::Decimal),
}

impl Num {
    #[inline]
    fn as_f64(self) -> f64 {
        match self {
            // Through i64 when it fits: converting an i128 to f64 is a slow
            // library call, and check values are almost always small.
            Num::Int(i) => i64::try_from(i).map_or(i as f64, |i| i as f64),
            Num::Float(f) | Num::FloatLit(f, _) => f,
            #[cfg(feature = "decimal")]
            Num::Dec(d) => rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap_or(f64::NAN),
        }
    }

    #[cfg(feature = "decimal")]
    #[inline]
    fn as_dec(self) -> Result<rust_decimal::Decimal, EvalError> {
        use std::str::FromStr;
        match self {
            Num::Int(i) => {
                rust_decimal::Decimal::try_from_i128_with_scale(i, 0).map_err(|_| EvalError::Overflow)
            }
            Num::FloatLit(_, text) => rust_decimal::Decimal::from_str_exact(text)
                .or_else(|_| rust_decimal::Decimal::from_str(text))
                .map_err(|_| EvalError::Overflow),
            Num::Dec(d) => Ok(d),
            // The type system keeps floats away from decimals.
            Num::Float(f) => rust_decimal::Decimal::try_from(f).map_err(|_| EvalError::Overflow),
        }
    }

    #[inline]
    fn pair(self, other: Num) -> Result<Pair, EvalError> {
        #[cfg(feature = "decimal")]
        if matches!(self, Num::Dec(_)) || matches!(other, Num::Dec(_)) {
            return Ok(Pair::Dec(self.as_dec()?, other.as_dec()?));
        }
        Ok(match (self, other) {
            (Num::Int(a), Num::Int(b)) => Pair::Int(a, b),
            (a, b) => Pair::Float(a.as_f64(), b.as_f64()),
        })
    }

    /// `self + other`, `None` on overflow.
    #[inline]
    pub fn arith(self, op: ArithOp, other: Num) -> Result<Num, EvalError> {
        Ok(match self.pair(other)? {
            // Integer division is exact: a quotient that is not whole is a float,
            // so `total / count == 2.5` means what it says.
            Pair::Int(_, 0) if op == ArithOp::Div => return Err(EvalError::DivisionByZero),
            Pair::Int(a, b) if op == ArithOp::Div && a.checked_rem(b).is_some_and(|r| r != 0) => {
                Num::Float(a as f64 / b as f64)
            }
            Pair::Int(a, b) => Num::Int(
                match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => a.checked_div(b),
                }
                .ok_or(EvalError::Overflow)?,
            ),
            Pair::Float(a, b) => {
                if op == ArithOp::Div && b == 0.0 {
                    return Err(EvalError::DivisionByZero);
                }
                let r = match op {
                    ArithOp::Add => a + b,
                    ArithOp::Sub => a - b,
                    ArithOp::Mul => a * b,
                    ArithOp::Div => a / b,
                };
                if r.is_infinite() && a.is_finite() && b.is_finite() {
                    return Err(EvalError::Overflow);
                }
                Num::Float(r)
            }
            #[cfg(feature = "decimal")]
            Pair::Dec(a, b) => Num::Dec(
                match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div if b.is_zero() => return Err(EvalError::DivisionByZero),
                    ArithOp::Div => a.checked_div(b),
                }
                .ok_or(EvalError::Overflow)?,
            ),
        })
    }

    /// `|self|`.
    #[inline]
    pub fn abs(self) -> Result<Num, EvalError> {
        Ok(match self {
            Num::Int(i) => Num::Int(i.checked_abs().ok_or(EvalError::Overflow)?),
            Num::Float(f) | Num::FloatLit(f, _) => Num::Float(f.abs()),
            #[cfg(feature = "decimal")]
            Num::Dec(d) => Num::Dec(d.abs()),
        })
    }

    /// `-self`.
    #[inline]
    pub fn negate(self) -> Result<Num, EvalError> {
        Ok(match self {
            Num::Int(i) => Num::Int(i.checked_neg().ok_or(EvalError::Overflow)?),
            Num::Float(f) => Num::Float(-f),
            Num::FloatLit(f, _) => Num::Float(-f),
            #[cfg(feature = "decimal")]
            Num::Dec(d) => Num::Dec(-d),
        })
    }

    /// Compares two numbers, `Equal` within `tolerance`.
    #[inline]
    pub fn compare(self, other: Num, tolerance: Tolerance) -> Result<Option<Ordering>, EvalError> {
        Ok(match self.pair(other)? {
            Pair::Int(a, b) => match tolerance {
                Tolerance::Given(t) if (a.abs_diff(b) as f64) <= t.as_f64() => Some(Ordering::Equal),
                _ => Some(a.cmp(&b)),
            },
            Pair::Float(a, b) => {
                let tol = match tolerance {
                    Tolerance::Exact => 0.0,
                    Tolerance::Default => DEFAULT_RELATIVE_TOLERANCE * 1f64.max(a.abs()).max(b.abs()),
                    Tolerance::Given(t) => t.as_f64(),
                };
                if (a - b).abs() <= tol { Some(Ordering::Equal) } else { a.partial_cmp(&b) }
            }
            #[cfg(feature = "decimal")]
            Pair::Dec(a, b) => match tolerance {
                Tolerance::Given(t) => {
                    // A difference beyond `Decimal`'s range is certainly beyond the tolerance.
                    match a.checked_sub(b) {
                        Some(diff) if diff.abs() <= t.as_dec()? => Some(Ordering::Equal),
                        _ => Some(a.cmp(&b)),
                    }
                }
                _ => Some(a.cmp(&b)),
            },
        })
    }

    /// A key under which equal numbers of one kind collide, floats by total order.
    pub(crate) fn unique_key(self) -> UniqueKey {
        match self {
            Num::Int(i) => UniqueKey::Int(i),
            Num::Float(f) | Num::FloatLit(f, _) => {
                // Total order, with -0.0 and 0.0 one value, so `unique` agrees with `==`.
                let f = if f == 0.0 { 0.0 } else { f };
                UniqueKey::Float(f.to_bits())
            }
            #[cfg(feature = "decimal")]
            Num::Dec(d) => UniqueKey::Dec(d.normalize()),
        }
    }
}

/// How close two numbers must be for `==` and `!=` to count them equal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// Exactly equal: orderings (`<`, `<=`, ...), `min` and `max`.
    Exact,
    /// `==`/`!=` without a `tolerance` option: floats within
    /// [`DEFAULT_RELATIVE_TOLERANCE`], integers and `Decimal`s exactly.
    Default,
    /// The check's `tolerance` option.
    Given(Num),
}

/// How close two floats must be to count as equal when the check names no
/// tolerance: 1e-9 of the larger magnitude (at least 1e-9).
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum UniqueKey {
    Int(i128),
    Float(u64),
    #[cfg(feature = "decimal")]
    Dec(rust_decimal::Decimal),
}

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl fmt::Display for Num {
    /// Floats with two decimals when that loses nothing visible for money-like
    /// values, otherwise their shortest exact form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) | Num::FloatLit(x, _) => {
                let two = format!("{x:.2}");
                if two.parse::<f64>().is_ok_and(|back| back == x) {
                    f.write_str(&two)
                } else {
                    write!(f, "{x}")
                }
            }
            #[cfg(feature = "decimal")]
            Num::Dec(d) => write!(f, "{d}"),
        }
    }
}
