//! The structure layer: does the output match the type?
//!
//! A [`StructureValidator`] is compiled once per type from the type's JSON
//! Schema (schemars 1.x, draft 2020-12) and turns every error the `jsonschema`
//! crate finds into a [`Violation`] with its own path, code, message and
//! recoverability. [`serde_violation`] covers what only serde rejects (a
//! number out of range for an `i64`, say), so an output serde refuses always
//! gets at least one violation.
//!
//! Messages are written here, never copied from the validator (whose text
//! embeds whole offending values): they say what was expected and what came,
//! quoting at most a short prefix of a long value.

mod compile;
mod convert;
mod forms;
mod serde_fallback;
mod walk;

use jsonschema::{ValidationError, Validator};
use serde::Deserialize;
use serde_json::Value;

use crate::schema::TypeInfo;
use crate::{Code, FieldPath, Layer, Violation};
use compile::{
    bound_f32, cut_below, exceeds_f32, mentions_unique_items, needs_schema_pass, schema_depth, too_deep,
};
use convert::Converter;
pub(crate) use convert::resolve_ref;
use forms::Forms;
pub use serde_fallback::serde_violation;
use walk::Walk;

/// How deep into an output the schema pass looks when the schema itself has
/// no bound (a recursive type). Deeper parts are cut before validation, so a
/// value nested 1,000 levels deep never makes a deep copy (the validator clones
/// the values it reports inside `anyOf` branches, recursively).
const MAX_VALUE_DEPTH: usize = 128;

/// The compiled schema validator of one type.
///
/// Build it once per type (the runtime keeps it with the type's description,
/// see `TypeInfo::cached`), read every output with
/// [`deserialize`](StructureValidator::deserialize), and call
/// [`violations`](StructureValidator::violations) for every output serde
/// rejects or `deserialize` says must still be checked.
///
/// ```
/// use extract_core::structure::StructureValidator;
/// use serde_json::json;
///
/// static INFO: extract_core::__private_v2::TypeInfo = extract_core::__private_v2::TypeInfo::new("Note", "note", "", &[]);
/// let schema = json!({
///     "type": "object",
///     "properties": {"title": {"type": "string", "maxLength": 5}},
///     "required": ["title"],
/// });
/// let validator = StructureValidator::new(&schema);
/// assert!(validator.needs_schema_pass()); // serde does not enforce maxLength
/// let found = validator.violations(&json!({"title": "far too long"}), &INFO);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].path, "title");
/// assert_eq!(found[0].code, "invalid_value");
/// ```
pub struct StructureValidator {
    /// The schema, kept to resolve schema locations (allowed fields, union branches).
    schema: Value,
    /// The compiled validator, or why the schema did not compile.
    compiled: Result<Validator, String>,
    /// Whether the schema holds keywords serde does not enforce.
    needs_schema_pass: bool,
    /// The JSON types the schema allows where, for forms serde reads and the schema refuses.
    forms: Forms,
    /// Whether the type has `f32` numbers, which serde saturates to infinity.
    has_f32: bool,
    /// How many levels of an output the schema can judge; deeper parts are cut.
    judged_depth: usize,
    /// Whether `judged_depth` is the schema's own bound (so cutting below it
    /// loses nothing) rather than the [`MAX_VALUE_DEPTH`] cap.
    depth_is_exact: bool,
}

impl std::fmt::Debug for StructureValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StructureValidator")
            .field("compiled", &self.compiled.is_ok())
            .field("needs_schema_pass", &self.needs_schema_pass)
            .finish_non_exhaustive()
    }
}

impl StructureValidator {
    /// Compiles the validator of `schema`, with `format` assertions on.
    ///
    /// Never panics: a schema that does not compile (a bad `pattern` regex in
    /// a `#[schemars]` attribute, say) makes every call of
    /// [`violations`](StructureValidator::violations) report one
    /// non-recoverable `invalid_schema` violation, and
    /// [`compile_error`](StructureValidator::compile_error) says why.
    pub fn new(schema: &Value) -> StructureValidator {
        // serde turns 1e300 into an infinite `f32` without a word; the
        // validator's copy of the schema bounds every `f32` to its range.
        let needs_pass_by_keywords = needs_schema_pass(schema, 0);
        let mut schema = schema.clone();
        let has_f32 = bound_f32(&mut schema);
        let schema = &schema;
        let compiled = jsonschema::options().should_validate_formats(true).build(schema).map_err(|error| {
            format!("the type's JSON Schema does not compile: {}", convert::short_text(&error.to_string()))
        });
        let needs_schema_pass = compiled.is_err() || needs_pass_by_keywords;
        // A node at depth `d + 1` is judged by its type alone (its children are
        // beyond every keyword); keep it, and cut below it.
        // `uniqueItems` compares whole subtrees, so nothing may be cut under it.
        let bound = schema_depth(schema, schema, &mut Vec::new())
            .filter(|d| d + 1 < MAX_VALUE_DEPTH && !mentions_unique_items(schema, 0));
        let (judged_depth, depth_is_exact) = bound.map_or((MAX_VALUE_DEPTH, false), |d| (d + 1, true));
        StructureValidator {
            schema: schema.clone(),
            compiled,
            needs_schema_pass,
            forms: Forms::new(schema),
            has_f32,
            judged_depth,
            depth_is_exact,
        }
    }

    /// Whether the schema holds keywords serde does not enforce by itself
    /// (`pattern`, `minimum`/`maximum`/`exclusive*`, `multipleOf`,
    /// `minLength`/`maxLength`, `minItems`/`maxItems`, `uniqueItems`,
    /// `format`, `const`, ...). When true, run
    /// [`violations`](StructureValidator::violations) even after serde
    /// accepted the output.
    ///
    /// Keywords schemars derives from a Rust type and that serde enforces
    /// exactly are not counted: the numeric formats (`uint8`, `int64`,
    /// `double`, ...) and the bounds that merely restate an integer type's
    /// range (`minimum: 0, maximum: 255` on a `u8`).
    pub fn needs_schema_pass(&self) -> bool {
        self.needs_schema_pass
    }

    /// Deserializes `value` into `T`, reading exactly what serde_json's own
    /// `&Value` deserializer reads (same values, same errors), and says
    /// whether the value must still go through the schema pass: the answer
    /// of [`must_check`](Self::must_check), whose scan runs only when the
    /// value took one of serde's lenient paths (a struct as an array, an
    /// enum, a value buffered for an untagged enum...): a value that did not
    /// takes the schema's own forms, so one walk reads and judges it.
    ///
    /// ```
    /// use extract_core::structure::StructureValidator;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Place { lat: f64 }
    /// let validator = StructureValidator::new(&serde_json::to_value(schemars::schema_for!(Place)).unwrap());
    /// let (place, check) = validator.deserialize::<Place>(&json!({"lat": 1.5})).unwrap();
    /// assert_eq!((place.lat, check), (1.5, false));
    /// // serde reads a struct from an array of its fields; the schema does not.
    /// let (_, check) = validator.deserialize::<Place>(&json!([1.5])).unwrap();
    /// assert!(check);
    /// ```
    pub fn deserialize<'de, T: Deserialize<'de>>(
        &self,
        value: &'de Value,
    ) -> Result<(T, bool), serde_json::Error> {
        let walk = Walk::new();
        let read = T::deserialize(walk.over(value))?;
        // Read strictly all the way, the value takes the schema's own forms;
        // otherwise the scan tells.
        Ok((read, self.needs_schema_pass || (walk.lenient() && self.must_check(value))))
    }

    /// [`deserialize`](Self::deserialize)'s error, with the path where serde
    /// stopped (for [`serde_violation`]).
    pub fn deserialize_error<'de, T: Deserialize<'de>>(
        &self,
        value: &'de Value,
    ) -> Option<serde_path_to_error::Error<serde_json::Error>> {
        serde_path_to_error::deserialize::<_, T>(Walk::new().over(value)).err()
    }

    /// Whether `value`, which serde accepted, must still go through the
    /// schema pass: always when [`needs_schema_pass`](Self::needs_schema_pass);
    /// when the value takes somewhere a form serde reads and the schema
    /// refuses (a struct as an array of its fields, a unit variant as
    /// `{"Variant": null}`); and for a type with `f32` fields when the value
    /// holds a number beyond `f32`'s range. A scan of its own over the
    /// value, which [`deserialize`](Self::deserialize) runs only after
    /// reading the value leniently somewhere.
    pub fn must_check(&self, value: &Value) -> bool {
        self.needs_schema_pass || self.forms.strays(value) || (self.has_f32 && exceeds_f32(value))
    }

    /// Why the schema did not compile, if it did not.
    pub fn compile_error(&self) -> Option<&str> {
        self.compiled.as_ref().err().map(String::as_str)
    }

    /// Every structural violation of `value`, each with its JSON path, in the
    /// order the schema lists the keywords. Empty when the value matches.
    ///
    /// A required field that is absent, or `null` where the schema does not
    /// allow `null`, is `missing_field` at the field's own path and takes the
    /// field's recoverability tag from `info`; every other structural
    /// violation is recoverable. `null` on an `Option` field is valid.
    pub fn violations(&self, value: &Value, info: &'static TypeInfo) -> Vec<Violation> {
        let validator = match &self.compiled {
            Ok(validator) => validator,
            Err(reason) => {
                return vec![
                    Violation::new(
                        Layer::Structure,
                        Code::new_static("invalid_schema"),
                        FieldPath::root(),
                        reason,
                    )
                    .recoverable(false),
                ];
            }
        };
        let mut out = Vec::new();
        let cut;
        let value = match too_deep(value, self.judged_depth) {
            None => value,
            Some(deep_path) => {
                if !self.depth_is_exact {
                    out.push(Violation::new(
                        Layer::Structure,
                        Code::INVALID_VALUE,
                        deep_path,
                        format!("nested more than {MAX_VALUE_DEPTH} levels deep; flatten this value"),
                    ));
                }
                cut = cut_below(value, self.judged_depth);
                &cut
            }
        };
        let converter = Converter { root: &self.schema, value, info };
        let errors: Vec<ValidationError<'_>> = validator.iter_errors(value).collect();
        converter.convert_all(&errors, &mut out);
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert((v.path.clone(), v.code.clone(), v.message.clone())));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::convert::{field_path, got, join_or};
    use super::serde_fallback::rust_expected;
    use super::*;
    use crate::Segment;
    use jsonschema::paths::Location;
    use serde_json::json;

    static INFO: TypeInfo = TypeInfo::new("T", "t", "", &[]);

    #[test]
    fn numeric_formats_and_their_natural_bounds_need_no_schema_pass() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "b": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "c": {"type": "number", "format": "double"},
                "d": {"type": "integer", "format": "int64"}
            }
        });
        assert!(!StructureValidator::new(&schema).needs_schema_pass());
    }

    #[test]
    fn tighter_bounds_and_string_keywords_need_a_schema_pass() {
        for extra in [
            json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255}),
            json!({"type": "number", "format": "double", "maximum": 100}),
            json!({"type": "string", "pattern": "^a$"}),
            json!({"type": "string", "format": "email"}),
            json!({"type": "array", "items": {"type": "string", "maxLength": 3}}),
            json!({"const": "x"}),
        ] {
            let schema = json!({"type": "object", "properties": {"x": extra}});
            assert!(StructureValidator::new(&schema).needs_schema_pass(), "{schema}");
        }
    }

    #[test]
    fn keywords_hidden_in_defs_are_found() {
        let schema = json!({
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "string", "minLength": 1}}}}
        });
        assert!(StructureValidator::new(&schema).needs_schema_pass());
    }

    /// What schemars derives for `{ place: Option<Place>, unit: Unit, samples: Vec<Option<f64>>, pair: (u8, u8) }`.
    fn serde_only_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "place": {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]},
                "unit": {"$ref": "#/$defs/Unit"},
                "samples": {"type": "array", "items": {"type": ["number", "null"], "format": "double"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}, {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}]},
            },
            "required": ["unit", "samples", "pair"],
            "$defs": {
                "Place": {"type": "object", "properties": {"lat": {"type": "number", "format": "double"}}, "required": ["lat"]},
                "Unit": {"type": "string", "enum": ["Celsius", "Kelvin"]},
            }
        })
    }

    #[test]
    fn forms_serde_reads_and_the_schema_refuses_get_the_schema_pass() {
        let validator = StructureValidator::new(&serde_only_schema());
        assert!(!validator.needs_schema_pass(), "serde enforces every keyword: the fast path");
        let valid =
            json!({"place": {"lat": 1.5}, "unit": "Kelvin", "samples": [1.0, null, 2], "pair": [1, 2]});
        assert!(!validator.must_check(&valid), "a value in the schema's own forms keeps the fast path");
        assert!(
            !validator.must_check(&json!({"place": null, "unit": "Celsius", "samples": [], "pair": [0, 0]}))
        );
        for (stray, why) in [
            (
                json!({"place": [1.5], "unit": "Kelvin", "samples": [], "pair": [1, 2]}),
                "a struct as an array",
            ),
            (
                json!({"place": null, "unit": {"Kelvin": null}, "samples": [], "pair": [1, 2]}),
                "a unit variant as a map",
            ),
            (
                json!({"place": null, "unit": "Kelvin", "samples": [{}], "pair": [1, 2]}),
                "an object among numbers",
            ),
        ] {
            assert!(validator.must_check(&stray), "{why}: {stray}");
            assert!(!validator.violations(&stray, &INFO).is_empty(), "{why}: the schema pass refuses it");
        }
    }

    #[test]
    fn a_schema_schemars_derives_keeps_the_fast_path_for_its_own_forms() {
        #[allow(dead_code)]
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        struct Reading {
            sensor_name: String,
            count: u64,
            place: Option<Place>,
            places: Vec<Place>,
            samples: Vec<Option<f64>>,
            unit: Unit,
            backup: Option<Unit>,
            extra: std::collections::BTreeMap<String, Place>,
        }
        #[allow(dead_code)]
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Place {
            lat: f64,
            note: Option<String>,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        enum Unit {
            Celsius,
            Kelvin,
        }
        let schema = serde_json::to_value(schemars::schema_for!(Reading)).unwrap();
        let validator = StructureValidator::new(&schema);
        assert!(!validator.needs_schema_pass(), "{schema}");
        let valid = json!({
            "sensorName": "s", "count": 3, "place": {"lat": 1.5, "note": null}, "places": [{"lat": 2}],
            "samples": [1.0, null], "unit": "Kelvin", "backup": null, "extra": {"a": {"lat": 0}},
        });
        assert!(serde_json::from_value::<Reading>(valid.clone()).is_ok());
        assert!(!validator.must_check(&valid), "schemars' own forms keep the fast path: {schema}");
        for (field, stray) in [
            ("place", json!([1.5, null])),
            ("places", json!([[2.0, null]])),
            ("unit", json!({"Kelvin": null})),
            ("backup", json!({"Celsius": null})),
            ("extra", json!({"a": [0.0, null]})),
        ] {
            let mut value = valid.clone();
            value[field] = stray;
            assert!(serde_json::from_value::<Reading>(value.clone()).is_ok(), "serde reads {value}");
            assert!(validator.must_check(&value), "{value}");
            assert!(!validator.violations(&value, &INFO).is_empty(), "{value}");
        }
    }

    #[test]
    fn a_union_that_leaves_a_value_two_branches_gets_the_schema_pass() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"type": "object"}, {"type": "object", "properties": {"a": {"type": "string"}}}]}}
        });
        let validator = StructureValidator::new(&schema);
        assert!(!validator.needs_schema_pass());
        assert!(validator.must_check(&json!({"x": {"a": "s"}})));
        assert!(!validator.must_check(&json!({"y": 1})), "a field the schema does not name is not judged");
    }

    #[test]
    fn a_property_named_like_a_keyword_is_not_a_keyword() {
        let schema = json!({"type": "object", "properties": {"pattern": {"type": "string"}}});
        assert!(!StructureValidator::new(&schema).needs_schema_pass());
    }

    #[test]
    fn a_schema_that_does_not_compile_is_one_non_recoverable_violation() {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}});
        let validator = StructureValidator::new(&schema);
        assert!(validator.compile_error().is_some());
        assert!(validator.needs_schema_pass());
        let found = validator.violations(&json!({"x": "a"}), &INFO);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "invalid_schema");
        assert!(!found[0].recoverable);
    }

    #[test]
    fn numeric_object_keys_stay_keys() {
        let value = json!({"7": {"a": [1, 2]}});
        let location = Location::new().join("7").join("a").join(1usize);
        assert_eq!(field_path(&value, &location).to_string(), "7.a[1]");
        assert_eq!(field_path(&value, &location).segments()[0], Segment::Key("7".into()));
    }

    fn nested_objects(depth: usize) -> Value {
        let mut value = json!("leaf");
        for _ in 0..depth {
            value = json!({ "child": value });
        }
        value
    }

    #[test]
    fn schema_depth_counts_levels_and_sees_recursion() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(schema_depth(&flat, &flat, &mut Vec::new()), Some(1));
        let nested = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
            "$defs": {"Item": {"anyOf": [{"type": "object", "properties": {"n": {"type": "number"}}}, {"type": "null"}]}}
        });
        assert_eq!(schema_depth(&nested, &nested, &mut Vec::new()), Some(3));
        let recursive = json!({
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}
        });
        assert_eq!(schema_depth(&recursive, &recursive, &mut Vec::new()), None);
    }

    #[test]
    fn cutting_keeps_shape_down_to_the_limit() {
        let value = nested_objects(5);
        assert_eq!(too_deep(&value, 4).map(|p| p.to_string()), Some("child.child.child.child.child".into()));
        assert_eq!(too_deep(&value, 5), None);
        let cut = cut_below(&value, 2);
        assert_eq!(cut, json!({"child": {"child": {"child": null}}}));
    }

    #[test]
    fn a_recursive_schema_survives_a_value_a_thousand_levels_deep() {
        // Recursive: the schema cannot bound the depth, so the cap applies.
        let schema = json!({
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
            "required": ["child"]
        });
        let validator = StructureValidator::new(&schema);
        let found = validator.violations(&nested_objects(1000), &INFO);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, "invalid_value");
        assert_eq!(found[0].message, "nested more than 128 levels deep; flatten this value");
        assert_eq!(found[0].path.segments().len(), MAX_VALUE_DEPTH + 1);
        assert!(found.iter().all(|v| v.message.len() < 200));
        assert!(found.iter().all(|v| v.path.segments().len() <= MAX_VALUE_DEPTH + 1));
    }

    #[test]
    fn messages_join_alternatives() {
        assert_eq!(join_or(&["a".into()]), "a");
        assert_eq!(join_or(&["a".into(), "b".into()]), "a or b");
        assert_eq!(join_or(&["a".into(), "b".into(), "c".into()]), "a, b or c");
        assert_eq!(rust_expected("u8"), "an integer from 0 to 255");
        assert_eq!(got(&json!([1, 2])), "an array of 2 items");
    }
}
