//! Provenance: [`Sourced<T>`], a value with the quote of the document it was read from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::TypeInfo;
use crate::check::{Audit, Audited};

/// A value together with the span of the document the model read it from.
///
/// The semantic layer checks that `quote` occurs in the document (whitespace
/// normalised: every run of whitespace counts as one space) and, for text
/// values, that the value occurs in its quote (ignoring case). A failure is a
/// `quote_not_found` violation whose recoverability is the field's tag. The
/// quote stays in the value, so a reviewer can check the value against its
/// line in the source.
///
/// ```
/// use extract::Sourced;
/// let vendor: Sourced<String> = serde_json::from_value(serde_json::json!({
///     "value": "ACME Corp", "quote": "Bill from: ACME Corp"
/// })).unwrap();
/// assert_eq!(vendor.value, "ACME Corp");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(description = "A value and the exact span of the document it was read from.")]
pub struct Sourced<T> {
    /// The value.
    #[schemars(description = "The value, as the document states it.")]
    pub value: T,
    /// The exact span of the document the value was read from.
    #[schemars(description = "The exact text of the document the value was read from, copied verbatim.")]
    pub quote: String,
}

/// A value whose text can be looked for in its quote.
pub trait QuotedValue {
    /// The text to find in the quote, for text values; `None` for others.
    fn quoted_text(&self) -> Option<&str>;
}

impl QuotedValue for String {
    fn quoted_text(&self) -> Option<&str> {
        Some(self)
    }
}

impl<T: QuotedValue> QuotedValue for Option<T> {
    fn quoted_text(&self) -> Option<&str> {
        self.as_ref().and_then(QuotedValue::quoted_text)
    }
}

macro_rules! not_text {
    ($($t:ty),*) => {$(
        impl QuotedValue for $t {
            fn quoted_text(&self) -> Option<&str> { None }
        }
    )*};
}
not_text!(bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
#[cfg(feature = "decimal")]
not_text!(rust_decimal::Decimal);
#[cfg(feature = "chrono")]
not_text!(chrono::NaiveDate, chrono::NaiveDateTime, chrono::NaiveTime);

impl<T: QuotedValue> Audited for Sourced<T> {
    fn audit(&self, audit: &mut Audit<'_>, recoverable: bool) {
        audit.check_quote(&self.quote, self.value.quoted_text(), recoverable);
    }
    fn type_info() -> Option<&'static TypeInfo> {
        None
    }
}
