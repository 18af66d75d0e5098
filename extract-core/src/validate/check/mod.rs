//! The run-time half of the check language. `#[check(...)]` expressions are
//! lowered by the derive into calls of the items here; the traits carry
//! `#[diagnostic::on_unimplemented]` messages so a type error in a check reads
//! as an error about the check, on the user's token.
//!
//! Semantics (also in the facade's guide, `extract::guide`): an absent
//! operand (`None`, or `min`/`max` of an empty collection) makes a
//! comparison *absent*, and a check whose result is absent holds vacuously;
//! `&&`, `||` and `!` treat absent like SQL's unknown, so `false && absent`
//! is `false`.

mod aggregate;
mod audit;
mod num;
mod ops;
mod path;
mod quoted;
mod render;

pub use aggregate::*;
pub(crate) use audit::described;
pub use audit::{
    Audit, AuditProbe, AuditSkip, Audited, Keyed, Lazy, LazyWalk, NestedNone, NestedProbe, Wrapper,
};
pub use audit::{CheckRun, QuoteIndex, locate_quote, locate_quotes};
pub use num::{
    ArithOp, Computed, DEFAULT_RELATIVE_TOLERANCE, FloatLit, IntLit, Meet, Num, Number, Tolerance, kind,
};
pub use ops::*;
pub use path::*;
pub use quoted::Quoted;
pub use render::{
    Probe, Recorder, ShowDebug, ShowDisplay, ShowNumber, ShowOpaque, ShowText, ShowVariant, Shown,
    VariantName,
};

/// What a derived `audit` imports with one `use probes::*` (one import
/// per body, where a list would be one per name, each a separate item for
/// the user's crate to resolve and hash): every trait the derived code calls
/// a probe's method through, imported without a name, and this module as
/// `__extract`, so the derived code names the runtime in one token where
/// `::extract::__private_v2` is six.
pub mod probes {
    pub use super::{
        AuditSkip as _, LeafEachMany as _, LeafEachManyOptions as _, LeafEachOption as _,
        LeafEachOptionalMany as _, LeafEachPlain as _, LeafOption as _, LeafPlain as _, ShowDebug as _,
        ShowDisplay as _, ShowNumber as _, ShowOpaque as _, ShowText as _, ShowVariant as _, StepAny as _,
        StepHop as _, StepHopEach as _,
    };
    pub use crate::__private_v2 as __extract;
}

/// What a derived description imports where it names another type's: the
/// fallback of [`NestedProbe`] for a type that is not derived. Every trait
/// in scope is one more that each path and method of a body is looked up
/// in, so the description imports only its own.
pub mod nested_probes {
    pub use super::NestedNone as _;
}

/// Why a check could not be evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    /// An integer result left the range of `i128`, or a `Decimal` its range.
    Overflow,
    /// A division by zero.
    DivisionByZero,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EvalError::Overflow => "arithmetic overflow",
            EvalError::DivisionByZero => "division by zero",
        })
    }
}
