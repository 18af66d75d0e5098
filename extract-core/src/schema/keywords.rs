//! What JSON Schema keywords mean, for every walk over a schema: which
//! keywords hold subschemas (and in what shape), and which `format`s are
//! numeric formats with a range. The structure layer and the strict transform
//! both read these tables, so they cannot disagree.

use serde_json::Value;

/// How a keyword holds its subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// One subschema that applies to the instance itself (`not`, `if`, ...).
    InPlace,
    /// One subschema that applies to the instance's items or values (`items`,
    /// `additionalProperties`, ...).
    Inner,
    /// A list of subschemas that apply to the instance itself (`anyOf`, ...).
    Branches,
    /// A list of subschemas for positions of an array (`prefixItems`).
    Positions,
    /// A map from property names to subschemas (`properties`, ...).
    Properties,
    /// A map of named definitions (`$defs`), which apply only where referred to.
    Definitions,
}

/// Every keyword of draft 2020-12 (and the older `definitions`,
/// `additionalItems`) whose value holds subschemas.
pub const SUBSCHEMA_KEYWORDS: &[(&str, Holds)] = &[
    // The order walks visit them in (it decides which of two errors a
    // transform reports first, and in what order properties are tallied).
    ("properties", Holds::Properties),
    ("patternProperties", Holds::Properties),
    ("dependentSchemas", Holds::Properties),
    ("$defs", Holds::Definitions),
    ("definitions", Holds::Definitions),
    ("items", Holds::Inner),
    ("additionalItems", Holds::Inner),
    ("contains", Holds::Inner),
    ("not", Holds::InPlace),
    ("if", Holds::InPlace),
    ("then", Holds::InPlace),
    ("else", Holds::InPlace),
    ("anyOf", Holds::Branches),
    ("oneOf", Holds::Branches),
    ("allOf", Holds::Branches),
    ("prefixItems", Holds::Positions),
    ("additionalProperties", Holds::Inner),
    ("unevaluatedProperties", Holds::Inner),
    ("unevaluatedItems", Holds::Inner),
    ("propertyNames", Holds::Inner),
];

/// Every direct subschema of a schema node, with the keyword holding it and,
/// for maps, its name.
pub fn subschemas_named(schema: &Value) -> impl Iterator<Item = (&'static str, Option<&str>, &Value)> {
    let node = schema.as_object();
    SUBSCHEMA_KEYWORDS.iter().filter_map(move |(keyword, _)| Some((*keyword, node?.get(*keyword)?))).flat_map(
        |(keyword, value)| -> Box<dyn Iterator<Item = (&'static str, Option<&str>, &Value)>> {
            match value {
                Value::Object(map) if holds(keyword).is_some_and(is_map) => {
                    Box::new(map.iter().map(move |(name, sub)| (keyword, Some(name.as_str()), sub)))
                }
                Value::Array(items) => Box::new(items.iter().map(move |sub| (keyword, None, sub))),
                Value::Object(_) => Box::new(std::iter::once((keyword, None, value))),
                _ => Box::new(std::iter::empty()),
            }
        },
    )
}

/// Every direct subschema of a schema node (properties, items, branches, `$defs`, ...).
pub fn subschemas(schema: &Value) -> impl Iterator<Item = &Value> {
    subschemas_named(schema).map(|(_, _, sub)| sub)
}

/// Calls `visit` on every direct subschema of a schema node, mutably, with
/// the keyword holding it and, for maps, its name.
pub fn for_each_subschema_mut<E>(
    schema: &mut Value,
    mut visit: impl FnMut(&'static str, Option<&str>, &mut Value) -> Result<(), E>,
) -> Result<(), E> {
    let Some(node) = schema.as_object_mut() else { return Ok(()) };
    for (keyword, holds) in SUBSCHEMA_KEYWORDS {
        match node.get_mut(*keyword) {
            Some(Value::Object(map)) if is_map(*holds) => {
                for (name, sub) in map.iter_mut() {
                    visit(keyword, Some(name), sub)?;
                }
            }
            Some(Value::Array(items)) => {
                for sub in items {
                    visit(keyword, None, sub)?;
                }
            }
            Some(sub @ Value::Object(_)) => visit(keyword, None, sub)?,
            _ => {}
        }
    }
    Ok(())
}

/// How `keyword` holds subschemas, if it does.
pub fn holds(keyword: &str) -> Option<Holds> {
    SUBSCHEMA_KEYWORDS.iter().find(|(k, _)| *k == keyword).map(|(_, holds)| *holds)
}

fn is_map(holds: Holds) -> bool {
    matches!(holds, Holds::Properties | Holds::Definitions)
}

/// An integer `format` schemars writes (`int32`, `uint8`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerFormat {
    /// Whether negative values fit.
    pub signed: bool,
    /// The width in bits.
    pub bits: u32,
}

impl IntegerFormat {
    /// The integer format `format` names, if it names one.
    pub fn parse(format: &str) -> Option<IntegerFormat> {
        let (signed, bits) = match format.strip_prefix("uint") {
            Some(bits) => (false, bits),
            None => (true, format.strip_prefix("int")?),
        };
        let bits = if bits.is_empty() { 64 } else { bits.parse().ok()? };
        matches!(bits, 8 | 16 | 32 | 64 | 128).then_some(IntegerFormat { signed, bits })
    }

    /// The range serde enforces for the format, as JSON numbers: `(min,
    /// max)`; no maximum for unsigned 64- and 128-bit integers, whose maximum
    /// a JSON number (an `f64` in schemars' bounds) cannot state exactly.
    pub fn range(self) -> (f64, Option<f64>) {
        if self.signed {
            let max = (2f64).powi(self.bits as i32 - 1);
            (-max, Some(if self.bits >= 64 { max } else { max - 1.0 }))
        } else if self.bits >= 64 {
            (0.0, None)
        } else {
            (0.0, Some((2f64).powi(self.bits as i32) - 1.0))
        }
    }
}

/// Whether `format` is a floating-point format schemars writes (`float`, `double`).
pub fn is_float_format(format: &str) -> bool {
    matches!(format, "float" | "double")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_ranges_are_those_serde_enforces() {
        let range = |f: &str| IntegerFormat::parse(f).map(IntegerFormat::range);
        assert_eq!(range("int8"), Some((i8::MIN as f64, Some(i8::MAX as f64))));
        assert_eq!(range("int32"), Some((i32::MIN as f64, Some(i32::MAX as f64))));
        assert_eq!(range("int64"), Some((i64::MIN as f64, Some(i64::MAX as f64))));
        assert_eq!(range("int"), range("int64"));
        assert_eq!(range("int128"), Some((i128::MIN as f64, Some(i128::MAX as f64))));
        assert_eq!(range("uint16"), Some((0.0, Some(u16::MAX as f64))));
        assert_eq!(range("uint32"), Some((0.0, Some(u32::MAX as f64))));
        assert_eq!(range("uint"), Some((0.0, None)));
        assert_eq!(range("uint128"), Some((0.0, None)));
        assert_eq!(range("int7"), None);
        assert_eq!(range("double"), None);
    }

    #[test]
    fn every_subschema_keyword_is_walked() {
        let schema = json!({
            "additionalProperties": {"a": 1}, "propertyNames": {"b": 1},
            "dependentSchemas": {"x": {"c": 1}}, "anyOf": [{"d": 1}], "$defs": {"D": {"e": 1}},
        });
        assert_eq!(subschemas(&schema).count(), 5);
        let named: Vec<_> = subschemas_named(&schema).map(|(k, n, _)| (k, n)).collect();
        assert!(named.contains(&("dependentSchemas", Some("x"))));
        assert!(named.contains(&("$defs", Some("D"))));
    }
}
