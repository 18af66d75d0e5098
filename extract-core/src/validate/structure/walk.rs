//! One walk over an output: a deserializer over `&Value` that reads exactly
//! what serde_json's own reads (same values, same errors) and notes when it
//! takes one of serde's lenient paths: a struct read from an array of its
//! fields, an enum (a unit variant as `{"Variant": null}`, or a name serde
//! knows and the schema may not: an alias, `#[serde(other)]`), a value
//! buffered for an untagged enum or a flattened field (read leniently
//! later), bytes from a string, an `f32` beyond its range, nesting past the
//! depth the forms judge. Only an output that took one gets the scan of
//! [`Forms`](super::forms::Forms) (and the schema pass if that finds a
//! stray form); every other output is read in the one walk.
//!
//! It reads leniently where serde_json does rather than failing there: the
//! schema pass then reports the same violation, at the same path, as before.

use std::cell::Cell;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde_json::{Error, Map, Value};

use super::compile::MAX_SCHEMA_DEPTH;

/// What one walk shares: whether the output took a lenient path.
pub(super) struct Walk {
    lenient: Cell<bool>,
}

impl Walk {
    pub(super) fn new() -> Walk {
        Walk { lenient: Cell::new(false) }
    }

    /// Whether the output took one of serde's lenient paths somewhere: the
    /// forms must judge it.
    pub(super) fn lenient(&self) -> bool {
        self.lenient.get()
    }

    /// The deserializer of `value`, the output's root.
    pub(super) fn over<'de>(&self, value: &'de Value) -> Strict<'_, 'de> {
        Strict { walk: self, value, depth: 0 }
    }

    #[cold]
    fn note(&self) {
        self.lenient.set(true);
    }
}

/// The deserializer of one value of the output.
#[derive(Clone, Copy)]
pub(super) struct Strict<'w, 'de> {
    walk: &'w Walk,
    value: &'de Value,
    /// How many containers `value` is inside.
    depth: u32,
}

impl<'w, 'de> Strict<'w, 'de> {
    /// The deserializer of `value`, an item or field of this one.
    #[inline]
    fn inner(&self, value: &'de Value) -> Strict<'w, 'de> {
        if self.depth as usize >= MAX_SCHEMA_DEPTH / 2 {
            // The forms stop judging deep values (and the schema pass, past a
            // recursive type's cap): they must see this one.
            self.walk.note();
        }
        Strict { walk: self.walk, value, depth: self.depth + 1 }
    }

    fn seq<V: Visitor<'de>>(&self, items: &'de [Value], visitor: V) -> Result<V::Value, Error> {
        let mut seq = Seq { of: *self, items: items.iter() };
        let out = visitor.visit_seq(&mut seq)?;
        match seq.items.len() {
            0 => Ok(out),
            _ => Err(de::Error::invalid_length(items.len(), &"fewer elements in array")),
        }
    }

    fn map<V: Visitor<'de>>(&self, fields: &'de Map<String, Value>, visitor: V) -> Result<V::Value, Error> {
        let mut map = Fields { of: *self, fields: fields.iter(), value: None };
        let out = visitor.visit_map(&mut map)?;
        match map.fields.len() {
            0 => Ok(out),
            _ => Err(de::Error::invalid_length(fields.len(), &"fewer elements in map")),
        }
    }
}

/// The methods that read a scalar: serde_json reads them strictly.
macro_rules! scalars {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.value.$method(visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Strict<'_, 'de> {
    type Error = Error;

    scalars! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128 deserialize_f64
        deserialize_char deserialize_str deserialize_string deserialize_unit deserialize_identifier
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A visitor that takes anything: serde buffers the value (an untagged
        // enum, a flattened field) and reads the buffer leniently, or it is a
        // number an `f32` may saturate.
        if matches!(self.value, Value::Array(_) | Value::Object(_) | Value::Number(_)) {
            self.walk.note();
        }
        self.value.deserialize_any(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A field the type does not name; the schema judges it only where it
        // names it, and then serde names it too (or rejects it).
        self.value.deserialize_ignored_any(visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // serde reads 1e300 as an infinite `f32` without a word.
        if self.value.as_f64().is_some_and(|x| x.abs() > f64::from(f32::MAX)) {
            self.walk.note();
        }
        self.value.deserialize_f32(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => self.seq(items, visitor),
            other => {
                // Bytes from a string: a form the schema (an array) may refuse.
                self.walk.note();
                other.deserialize_bytes(visitor)
            }
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name.starts_with("$serde_json::") {
            // serde_json's own tokens (`RawValue`): its reader.
            self.walk.note();
            return self.value.deserialize_newtype_struct(name, visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => self.seq(items, visitor),
            other => other.deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(fields) => self.map(fields, visitor),
            other => other.deserialize_map(visitor),
        }
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(map) => self.map(map, visitor),
            Value::Array(items) => {
                // serde also reads a struct from an array of its fields.
                self.walk.note();
                self.seq(items, visitor)
            }
            other => other.deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // serde's variant names include aliases (and `#[serde(other)]` takes
        // any), which the schema may not list: the forms judge every enum.
        self.walk.note();
        if let Value::String(variant) = self.value {
            return visitor.visit_enum(Variant { of: self, variant, value: None });
        }
        let single = self.value.as_object().filter(|map| map.len() == 1).and_then(|map| map.iter().next());
        if let Some((variant, value)) = single {
            return visitor.visit_enum(Variant { of: self.inner(value), variant, value: Some(value) });
        }
        // serde_json's error: a map with other than one key, or another type.
        self.value.deserialize_enum(name, variants, visitor)
    }
}

/// The items of an array.
struct Seq<'w, 'de> {
    of: Strict<'w, 'de>,
    items: std::slice::Iter<'de, Value>,
}

impl<'de> SeqAccess<'de> for Seq<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(value) => seed.deserialize(self.of.inner(value)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The fields of an object.
struct Fields<'w, 'de> {
    of: Strict<'w, 'de>,
    fields: serde_json::map::Iter<'de>,
    /// The value of the key just read.
    value: Option<&'de Value>,
}

impl<'de> MapAccess<'de> for Fields<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_key_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        match self.fields.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Key(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    #[inline]
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(self.of.inner(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

/// An externally tagged enum: the variant's name, and its data (`None` for
/// a bare string) read by `of`.
struct Variant<'w, 'de> {
    of: Strict<'w, 'de>,
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'w, 'de> EnumAccess<'de> for Variant<'w, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self), Error> {
        let name: de::value::StrDeserializer<'_, Error> = self.variant.into_deserializer();
        seed.deserialize(name).map(|v| (v, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        // `{"Variant": null}`: serde reads it (the enum is judged by the forms).
        match self.value {
            Some(_) => serde::Deserialize::deserialize(self.of),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(_) => seed.deserialize(self.of),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"newtype variant")),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    visitor.visit_unit()
                } else {
                    self.of.seq(items, visitor)
                }
            }
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"tuple variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(Value::Object(fields)) => self.of.map(fields, visitor),
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"struct variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"struct variant")),
        }
    }
}

/// What serde_json names a value in its errors.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// An object's key, read as serde_json reads keys: a string, or a number
/// or boolean written in one (`{"7": ...}` for a map keyed by `u8`).
struct Key<'de>(&'de str);

/// serde_json's message for a key that is not a number.
const NOT_NUMERIC: &str = "invalid value: expected key to be a number in quotes";

macro_rules! numeric_keys {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            // The whole key, and only the key, is the number: no space around
            // it. As serde_json does, the visitor sees the number before the
            // rest of the key is refused (`serde_path_to_error` names the key).
            if !matches!(self.0.as_bytes().first(), Some(b'0'..=b'9' | b'-')) {
                return Err(de::Error::custom(NOT_NUMERIC));
            }
            let mut reader = serde_json::Deserializer::from_str(self.0);
            let number = (&mut reader).$method(visitor)?;
            if self.0.ends_with([' ', '\t', '\n', '\r']) || reader.end().is_err() {
                return Err(de::Error::custom(NOT_NUMERIC));
            }
            Ok(number)
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    numeric_keys! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // Keys cannot be null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::value::BorrowedStrDeserializer::<Error>::new(self.0).deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::super::StructureValidator;
    use super::*;

    /// Reads `value` as `T` in one walk: serde's result, and the walk's flag.
    fn read<T: DeserializeOwned>(value: &Value) -> (Result<T, Error>, bool) {
        let walk = Walk::new();
        let read = T::deserialize(walk.over(value));
        (read, walk.lenient())
    }

    /// Whether reading `value` as `T` took a lenient path (serde must accept it).
    fn lenient<T: DeserializeOwned>(value: &Value) -> bool {
        let (read, lenient) = read::<T>(value);
        assert!(read.is_ok(), "serde reads {value}: {:?}", read.err());
        lenient
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Reading {
        name: String,
        count: u8,
        offset: i64,
        level: f64,
        gain: f32,
        on: bool,
        place: Option<Place>,
        places: Vec<Place>,
        by_name: BTreeMap<String, Place>,
        unit: Unit,
        #[serde(default)]
        note: String,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Place {
        lat: f64,
        lon: Option<f64>,
    }

    #[derive(Deserialize, JsonSchema)]
    enum Unit {
        Celsius,
        Kelvin,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(untagged)]
    enum Either {
        Number(u8),
        Place(Place),
    }

    /// Bytes, read as serde reads `serde_bytes::ByteBuf`: from an array of
    /// numbers, or from a string's bytes.
    #[derive(Debug, PartialEq)]
    struct Bytes(Vec<u8>);

    impl<'de> Deserialize<'de> for Bytes {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
            struct Of;
            impl<'de> Visitor<'de> for Of {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                    Ok(Bytes(v.as_bytes().to_vec()))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
                    let mut out = Vec::new();
                    while let Some(byte) = seq.next_element()? {
                        out.push(byte);
                    }
                    Ok(Bytes(out))
                }
            }
            deserializer.deserialize_byte_buf(Of)
        }
    }

    impl JsonSchema for Bytes {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Bytes".into()
        }
        fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
            <Vec<u8>>::json_schema(generator)
        }
    }

    fn valid_reading() -> Value {
        json!({
            "name": "s", "count": 3, "offset": -4, "level": 1.5, "gain": 0.5, "on": true,
            "place": {"lat": 1.5, "lon": null}, "places": [{"lat": 2}],
            "by_name": {"a": {"lat": 0}}, "unit": "Kelvin",
        })
    }

    /// `depth` arrays around an empty one.
    fn nested_arrays(depth: usize) -> Value {
        (0..depth).fold(json!([]), |value, _| json!([value]))
    }

    /// Arrays inside arrays, to any depth.
    #[derive(Deserialize)]
    struct Nested(#[allow(dead_code)] Vec<Nested>);

    #[test]
    fn a_plain_valid_output_takes_no_lenient_path() {
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct Plain {
            name: String,
            count: u8,
            place: Option<Place>,
            places: Vec<Place>,
            by_name: BTreeMap<String, Place>,
        }
        let mut value = valid_reading();
        value.as_object_mut().unwrap().retain(|key, _| key != "unit");
        assert!(!lenient::<Plain>(&value), "{value}");
        assert!(!lenient::<Plain>(
            &json!({"name": "", "count": 0, "place": null, "places": [], "by_name": {}})
        ));
        // Keys read as numbers.
        assert!(!lenient::<BTreeMap<u8, BTreeMap<i64, bool>>>(&json!({"7": {"-3": true}})));
        // An unknown field is skipped, not buffered.
        value["unknown"] = json!({"deep": [1, 2, {"x": null}]});
        assert!(!lenient::<Plain>(&value), "{value}");
        // An f32 within its range.
        assert!(!lenient::<f32>(&json!(3.4e38)));
        assert!(!lenient::<Vec<Bytes>>(&json!([[1, 2], []])));
        assert_eq!(read::<Bytes>(&json!([1, 2])).0.unwrap(), Bytes(vec![1, 2]));
    }

    #[test]
    fn a_struct_as_an_array_is_lenient() {
        assert!(lenient::<Place>(&json!([1.5, null])));
        assert!(lenient::<Vec<Place>>(&json!([{"lat": 1}, [1.5, 2.5]])));
        assert!(lenient::<Option<Place>>(&json!([1.5, null])));
    }

    #[test]
    fn an_enum_is_lenient() {
        assert!(lenient::<Unit>(&json!("Kelvin")));
        // A unit variant as `{"Variant": null}`.
        assert!(lenient::<Unit>(&json!({"Kelvin": null})));
        assert!(lenient::<Vec<Unit>>(&json!(["Celsius", {"Kelvin": null}])));
    }

    #[test]
    fn an_untagged_enum_is_lenient() {
        assert!(lenient::<Either>(&json!({"lat": 1.5, "lon": 2})));
        assert!(lenient::<Either>(&json!(7)));
        // Buffered, then read by serde's own (lenient) reader: a struct as an array.
        assert!(lenient::<Either>(&json!([1.5, null])));
        assert!(lenient::<Value>(&json!({"any": [1]})));
    }

    #[test]
    fn bytes_from_a_string_are_lenient() {
        let (got, flag) = read::<Bytes>(&json!("ab"));
        assert_eq!(got.unwrap(), Bytes(b"ab".to_vec()));
        assert!(flag);
    }

    #[test]
    fn an_f32_beyond_its_range_is_lenient() {
        let (got, flag) = read::<f32>(&json!(1e300));
        assert_eq!(got.unwrap(), f32::INFINITY);
        assert!(flag);
        assert!(lenient::<Vec<f32>>(&json!([1.0, -1e39])));
        // An f64 holds it: nothing to note.
        assert!(!lenient::<f64>(&json!(1e300)));
    }

    #[test]
    fn nesting_past_the_limit_is_lenient() {
        let limit = MAX_SCHEMA_DEPTH / 2;
        // A value inside `limit` containers is read strictly; one level deeper is noted.
        assert!(!lenient::<Nested>(&nested_arrays(limit)), "{limit} levels");
        assert!(lenient::<Nested>(&nested_arrays(limit + 1)), "{} levels", limit + 1);
        assert!(lenient::<Value>(&nested_arrays(limit + 1)));
    }

    /// For a schemars-derived type: the flag is sound (an output that took
    /// no lenient path takes the schema's own forms), and a form the schema
    /// refuses is flagged and found by the scan.
    #[test]
    fn the_flag_agrees_with_must_check_for_a_schemars_type() {
        let validator =
            StructureValidator::new(&serde_json::to_value(schemars::schema_for!(Reading)).unwrap());
        assert!(!validator.needs_schema_pass());
        let valid = valid_reading();
        let stray = |field: &str, form: Value| {
            let mut value = valid.clone();
            value[field] = form;
            value
        };
        // Valid, in the schema's own forms: an enum is flagged (its names may
        // be aliases), the scan clears it.
        assert!(lenient::<Reading>(&valid));
        assert!(!validator.must_check(&valid));
        for (value, why) in [
            (stray("place", json!([1.5, null])), "a struct as an array"),
            (stray("places", json!([[1.5, 2.5]])), "a struct as an array, in a Vec"),
            (stray("by_name", json!({"a": [0.0, null]})), "a struct as an array, in a map"),
            (stray("unit", json!({"Kelvin": null})), "a unit variant as a map"),
            (stray("gain", json!(1e300)), "an f32 beyond its range"),
        ] {
            assert!(lenient::<Reading>(&value), "{why}: {value}");
            assert!(validator.must_check(&value), "{why}: {value}");
            assert!(validator.deserialize::<Reading>(&value).unwrap().1, "{why}: {value}");
        }

        // Without an enum, a valid output takes no lenient path at all, and
        // the schema agrees.
        #[allow(dead_code)]
        #[derive(Deserialize, JsonSchema)]
        struct Plain {
            count: u8,
            gain: f32,
            place: Option<Place>,
            places: Vec<Place>,
            bytes: Bytes,
        }
        let validator = StructureValidator::new(&serde_json::to_value(schemars::schema_for!(Plain)).unwrap());
        assert!(!validator.needs_schema_pass());
        let plain = json!({"count": 1, "gain": 2.5, "place": {"lat": 1}, "places": [], "bytes": [1, 2]});
        assert!(!lenient::<Plain>(&plain));
        assert!(!validator.must_check(&plain));
        assert!(!validator.deserialize::<Plain>(&plain).unwrap().1);
        let mut from_string = plain.clone();
        from_string["bytes"] = json!("ab");
        assert!(lenient::<Plain>(&from_string), "bytes from a string");
        assert!(validator.must_check(&from_string), "the schema wants an array");
        assert!(validator.deserialize::<Plain>(&from_string).unwrap().1);

        // An untagged enum: flagged, and the scan judges each branch.
        let validator =
            StructureValidator::new(&serde_json::to_value(schemars::schema_for!(Vec<Either>)).unwrap());
        let branches = json!([7, {"lat": 1.5, "lon": null}]);
        assert!(lenient::<Vec<Either>>(&branches));
        assert!(!validator.must_check(&branches), "both are the schema's own forms");
        let as_array = json!([[1.5, null]]);
        assert!(lenient::<Vec<Either>>(&as_array));
        assert!(validator.must_check(&as_array), "serde's buffer reads a struct from an array");
    }
}
