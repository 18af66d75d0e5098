//! Provenance: [`Sourced<T>`], a value with the quote of the document it was read from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A value together with the span of the document the model read it from.
///
/// `T` is a type the semantic walk knows: plain data of the standard library
/// (and of `chrono` and `rust_decimal` with their features), a type that
/// derives `Extractable`, or one declared plain data with [`leaf!`](crate::leaf).
/// So the checks inside a value are run whatever name its type is written
/// with (a type alias, a renamed import).
///
/// Meant for leaf values: text, numbers, dates, enums. A derived struct
/// inside a `Sourced` is walked like any other value (its checks run, its
/// tags hold, under `value`), but its quote covers the whole struct; giving
/// its fields their own `Sourced` values locates each one.
///
/// The semantic layer checks that `quote` occurs in the document (whitespace
/// normalised: every run of whitespace counts as one space) and that the
/// value occurs in its quote: text ignoring case, a number when a number
/// written in the quote parses to it (`140.00` for 140.0), a date when a
/// date written in the quote is that day (`1 March 2026` for 2026-03-01). A
/// failure is a `quote_not_found` violation. It takes the field's
/// recoverability only when the document shows neither the quote nor the
/// value; a value the document shows under a quote too short or mistyped is
/// recoverable, and the correction asks for the passage that shows it. The
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
