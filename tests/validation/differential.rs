//! Differential property test of the structure layer: over random and mutated
//! JSON values, `extract::validate::<T>(&v, "")` accepts exactly when BOTH
//! the JSON Schema validator of `T::tool().input_schema` (compiled the way
//! `extract-core/src/validate/structure/` compiles it: `jsonschema::options()` with
//! format assertions on) and `serde_json::from_value::<T>` accept. The types
//! have no `#[check]`s, so the semantic layer never speaks.
//!
//! Intended differences between the two oracles, and why the rule above still
//! holds exactly:
//!
//! - `1.0` (a float with no fraction) for an integer field: JSON Schema 2020-12
//!   counts it as an integer, serde_json does not (a `Value` holding `1.0` is
//!   an `f64`, and the `u8`/`i64`/`u64` visitors refuse floats). `validate`
//!   rejects it, through serde's fallback violation. Likewise integers beyond a
//!   type's range where schemars states no bound (`u64`, `i64`, `u32`'s upper
//!   end): the schema accepts, serde rejects, `validate` rejects.
//! - `null` or absence for `Option` fields: both accept.
//! - Unknown keys without `deny_unknown_fields`: both accept (serde ignores
//!   them, the schema has no `additionalProperties`).
//! - Formats the validator does not know (schemars' `uint8`, `double`, ...)
//!   are ignored by the schema and enforced by serde's types.
//!
//! Not a difference: `validate` trusts serde alone (no schema pass) for types
//! whose schema holds nothing serde does not enforce (`Reading` below), unless
//! the output takes a form serde reads and the schema refuses (a struct as an
//! array of its fields, a unit variant as `{"Variant": null}`), so that fast
//! path is exactly what this test puts to the proof.

use std::cell::Cell;
use std::fmt::Debug;

use extract::{Extractable, Layer};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------- the types

/// An order: regex and length keywords, a `u8`, an enum, a nested `Vec`,
/// `Option`s, a `#[serde(default)]` field, `deny_unknown_fields` at both levels.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
struct Order {
    #[schemars(regex(pattern = r"^ORD-[0-9]{3}$"))]
    id: String,
    #[schemars(length(min = 1, max = 20))]
    customer: String,
    priority: u8,
    status: Status,
    lines: Vec<Line>,
    note: Option<String>,
    discount: Option<f64>,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Open,
    Shipped,
    Cancelled,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
struct Line {
    sku: String,
    quantity: u32,
    price: f64,
    gift: Option<bool>,
}

/// A reading: no schema keywords serde does not enforce (so `validate` takes
/// the serde-only fast path), unknown fields allowed, wide integers, a nested
/// `Option` of a struct, a `Vec` of `Option`s, camelCase names.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "camelCase")]
struct Reading {
    sensor_name: String,
    offset: i64,
    count: u64,
    level: u8,
    place: Option<Place>,
    samples: Vec<Option<f64>>,
    unit: Unit,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
struct Place {
    lat: f64,
    lon: f64,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
enum Unit {
    Celsius,
    Kelvin,
}

/// A tally: numeric range keywords, array length keywords, small integers,
/// a `char`, a tuple, a renamed field.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
struct Tally {
    #[schemars(range(min = 0.0, max = 1.0))]
    ratio: f64,
    #[schemars(range(min = 1, max = 10))]
    score: i8,
    #[schemars(length(min = 1, max = 3))]
    votes: Vec<u16>,
    grade: char,
    #[serde(rename = "box")]
    dimensions: (u8, u8),
}

/// serde reads a struct from an array of its fields and a unit variant from
/// `{"Variant": null}`; the schema refuses both, and so does `validate`, on
/// the serde-only fast path too (`Reading`). A random case found the first.
#[test]
fn forms_serde_reads_and_the_schema_refuses_are_refused() {
    let reading =
        json!({"sensorName": "a", "offset": 0, "count": 0, "level": 0, "samples": [], "unit": "Celsius"});
    for (field, stray) in [("place", json!([0, 0])), ("unit", json!({"Celsius": null}))] {
        let mut value = reading.clone();
        value[field] = stray;
        assert!(serde_json::from_value::<Reading>(value.clone()).is_ok(), "serde reads {value}");
        let violations = extract::validate::<Reading>(&value, "").unwrap_err();
        assert!(violations.iter().any(|v| v.path == field), "{value}: {violations}");
    }
    let order = json!({"id": "ORD-001", "customer": "c", "priority": 1, "status": "open", "lines": [["s", 1, 2.0, null]]});
    assert!(serde_json::from_value::<Order>(order.clone()).is_ok());
    let violations = extract::validate::<Order>(&order, "").unwrap_err();
    assert!(violations.iter().any(|v| v.path == "lines[0]"), "{violations}");
}

#[test]
fn the_types_take_the_paths_they_are_meant_to_take() {
    // Guard the premise of the doc comment above: `Reading` has no schema-only
    // keywords, `Order` and `Tally` do. A schemars change that moved one of
    // them would make the test below exercise less than it says.
    let text = |v: Value| v.to_string();
    for keyword in ["pattern", "minLength", "maxLength", "maxItems", "exclusiveMinimum"] {
        assert!(!text(Reading::tool().input_schema).contains(&format!("\"{keyword}\"")), "{keyword}");
    }
    assert!(text(Order::tool().input_schema).contains("\"pattern\""));
    assert!(text(Tally::tool().input_schema).contains("\"maxItems\""));
}

// ------------------------------------------------------------ the oracle

/// Checks one value against the rule; returns whether `validate` accepted.
fn agree<T: Extractable + PartialEq + Debug>(value: &Value) -> Result<bool, TestCaseError> {
    let schema = T::tool().input_schema;
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).unwrap();
    let schema_ok = validator.is_valid(value);
    let serde = serde_json::from_value::<T>(value.clone());
    let expected = schema_ok && serde.is_ok();
    match extract::validate::<T>(value, "") {
        Ok(got) => {
            prop_assert!(
                expected,
                "validate accepted, but schema_ok = {schema_ok}, serde = {:?}: {value}",
                serde.err()
            );
            prop_assert_eq!(Some(got), serde.ok());
            Ok(true)
        }
        Err(violations) => {
            prop_assert!(
                !expected,
                "validate rejected what schema and serde both accept: {value}\n{violations}"
            );
            prop_assert!(!violations.is_empty());
            let layer = if value.is_object() { Layer::Structure } else { Layer::Syntax };
            for v in violations.iter() {
                prop_assert_eq!(v.layer, layer, "{}", v);
                prop_assert!(!v.message.is_empty());
                prop_assert!(v.message.len() < 400, "{} bytes: {}", v.message.len(), v);
                prop_assert_eq!(&v.fields[0], &v.path);
                prop_assert!(
                    ["missing_field", "invalid_type", "unknown_field", "invalid_value"]
                        .contains(&v.code.as_str()),
                    "{}",
                    v.code
                );
            }
            Ok(false)
        }
    }
}

/// Runs `agree::<T>` over 256 cases of `strategy`; returns (accepted, rejected).
fn run<T: Extractable + PartialEq + Debug>(strategy: impl Strategy<Value = Value>) -> (usize, usize) {
    let mut runner = crate::seeded_runner(256);
    let accepted = Cell::new(0);
    let rejected = Cell::new(0);
    let result = runner.run(&strategy, |value| {
        let counter = if agree::<T>(&value)? { &accepted } else { &rejected };
        counter.set(counter.get() + 1);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    (accepted.get(), rejected.get())
}

// ---------------------------------------------------- random JSON values

const KEYS: &[&str] = &[
    "id",
    "customer",
    "priority",
    "status",
    "lines",
    "note",
    "discount",
    "tags",
    "sku",
    "quantity",
    "price",
    "gift",
    "sensorName",
    "sensor_name",
    "offset",
    "count",
    "level",
    "place",
    "lat",
    "lon",
    "samples",
    "unit",
    "ratio",
    "score",
    "votes",
    "grade",
    "box",
    "dimensions",
    "extra",
];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_string)
}

/// Numbers at the edges of the field types, and a few ordinary ones.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(-1),
            json!(10),
            json!(11),
            json!(127),
            json!(128),
            json!(255),
            json!(256),
            json!(65_536),
            json!(4_294_967_296u64),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(0.0),
            json!(1.0),
            json!(0.5),
            json!(1.5),
            json!(-0.5),
            json!(1e20),
            json!(-1e300),
        ]),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
    ]
}

/// Strings that are, or nearly are, values some field accepts.
fn string() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "open",
            "Open",
            "shipped",
            "cancelled",
            "canceled",
            "Celsius",
            "celsius",
            "Kelvin",
            "ORD-123",
            "ORD-12",
            "ord-123",
            "ORD-1234",
            "x",
            "xy",
            "é",
            "2024-01-01",
        ])
        .prop_map(Value::from),
        "[a-zA-Z0-9 -]{0,24}".prop_map(Value::from),
        (0usize..40).prop_map(|n| Value::from("z".repeat(n))),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::from), number(), string()];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A random object over the known keys: mostly rejected, sometimes not.
fn random_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(key(), any_json(), 0..10)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

// --------------------------------------------------------- valid values

fn valid_line() -> impl Strategy<Value = Value> {
    ("[A-Z]{2}[0-9]{2}", any::<u32>(), -1e4f64..1e4, prop::option::of(any::<bool>())).prop_map(
        |(sku, quantity, price, gift)| {
            let mut line = json!({"sku": sku, "quantity": quantity, "price": price});
            if let Some(gift) = gift {
                line["gift"] = json!(gift);
            }
            line
        },
    )
}

fn valid_order() -> impl Strategy<Value = Value> {
    (
        "ORD-[0-9]{3}",
        "[a-zA-Z ]{1,20}",
        any::<u8>(),
        prop::sample::select(vec!["open", "shipped", "cancelled"]),
        prop::collection::vec(valid_line(), 0..4),
        prop::option::of(prop::option::of("[a-z ]{0,12}")),
        prop::option::of(-100f64..100.0),
        prop::option::of(prop::collection::vec("[a-z]{1,6}", 0..3)),
    )
        .prop_map(|(id, customer, priority, status, lines, note, discount, tags)| {
            let mut order =
                json!({"id": id, "customer": customer, "priority": priority, "status": status, "lines": lines});
            // Absent, null, or a value.
            if let Some(note) = note {
                order["note"] = json!(note);
            }
            if let Some(discount) = discount {
                order["discount"] = json!(discount);
            }
            if let Some(tags) = tags {
                order["tags"] = json!(tags);
            }
            order
        })
}

fn valid_reading() -> impl Strategy<Value = Value> {
    (
        "[a-z]{1,8}",
        any::<i64>(),
        any::<u64>(),
        any::<u8>(),
        prop::option::of(prop::option::of((-90f64..90.0, -180f64..180.0))),
        prop::collection::vec(prop::option::of(-1e3f64..1e3), 0..4),
        prop::sample::select(vec!["Celsius", "Kelvin"]),
        prop::option::of(any_json()),
    )
        .prop_map(|(name, offset, count, level, place, samples, unit, extra)| {
            let mut reading = json!({
                "sensorName": name, "offset": offset, "count": count, "level": level,
                "samples": samples, "unit": unit,
            });
            if let Some(place) = place {
                reading["place"] = place.map_or(Value::Null, |(lat, lon)| json!({"lat": lat, "lon": lon}));
            }
            // Unknown keys are allowed on this type.
            if let Some(extra) = extra {
                reading["extra"] = extra;
            }
            reading
        })
}

fn valid_tally() -> impl Strategy<Value = Value> {
    (
        0f64..=1.0,
        1i8..=10,
        prop::collection::vec(any::<u16>(), 1..=3),
        any::<char>(),
        any::<(u8, u8)>(),
    )
        .prop_map(|(ratio, score, votes, grade, (w, h))| {
            json!({"ratio": ratio, "score": score, "votes": votes, "grade": grade.to_string(), "box": [w, h]})
        })
}

// ------------------------------------------------------------- mutations

#[derive(Debug, Clone, Copy)]
enum Mutation {
    DropKey,
    SetNull,
    ChangeType,
    AddUnknownKey,
    OutOfRange,
    LongString,
    WrongEnum,
}

fn mutation() -> impl Strategy<Value = (Mutation, usize, usize, Value)> {
    let kind = prop::sample::select(vec![
        Mutation::DropKey,
        Mutation::SetNull,
        Mutation::ChangeType,
        Mutation::AddUnknownKey,
        Mutation::OutOfRange,
        Mutation::LongString,
        Mutation::WrongEnum,
    ]);
    (kind, any::<usize>(), any::<usize>(), any_json())
}

/// Every object inside `value` (itself included), as JSON pointers.
fn object_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            out.push(at.clone());
            for (key, sub) in fields {
                object_pointers(sub, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                object_pointers(sub, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn apply(value: &mut Value, (kind, at, pick, random): (Mutation, usize, usize, Value)) {
    let mut pointers = Vec::new();
    object_pointers(value, String::new(), &mut pointers);
    let pointer = &pointers[at % pointers.len()];
    let Some(Value::Object(object)) = value.pointer_mut(pointer) else { unreachable!("an object pointer") };
    let keys: Vec<String> = object.keys().cloned().collect();
    if let Mutation::AddUnknownKey = kind {
        object.insert(format!("unknown_{}", pick % 3), random);
        return;
    }
    let Some(key) = keys.get(pick % keys.len().max(1)).cloned() else { return };
    let slot = object.get_mut(&key).expect("a listed key");
    match kind {
        Mutation::DropKey => {
            object.remove(&key);
        }
        Mutation::SetNull => *slot = Value::Null,
        Mutation::ChangeType => {
            *slot = match slot {
                Value::String(_) => json!(pick % 1000),
                Value::Number(_) => json!(format!("{}", pick % 1000)),
                Value::Bool(b) => json!(if *b { "true" } else { "false" }),
                Value::Array(_) => json!({"0": random}),
                Value::Object(_) => json!([random]),
                Value::Null => random,
            }
        }
        Mutation::OutOfRange => {
            let edges = [
                json!(-1),
                json!(256),
                json!(65_536),
                json!(4_294_967_296u64),
                json!(u64::MAX),
                json!(i64::MIN),
                json!(1.5),
                json!(1.0),
                json!(-0.5),
                json!(1e20),
                json!(11),
                json!(0),
            ];
            *slot = edges[pick % edges.len()].clone();
        }
        Mutation::LongString => *slot = json!("Q".repeat(pick % 300)),
        Mutation::WrongEnum => {
            let wrong = ["Open", "OPEN", "open ", "canceled", "celsius", "KELVIN", "", "Shipped"];
            *slot = json!(wrong[pick % wrong.len()]);
        }
        Mutation::AddUnknownKey => unreachable!("handled above"),
    }
}

fn mutated(valid: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    (valid, prop::collection::vec(mutation(), 1..4)).prop_map(|(mut value, mutations)| {
        for m in mutations {
            apply(&mut value, m);
        }
        value
    })
}

// ----------------------------------------------------------------- tests

#[test]
fn valid_values_are_accepted() {
    assert_eq!(run::<Order>(valid_order()), (256, 0));
    assert_eq!(run::<Reading>(valid_reading()), (256, 0));
    assert_eq!(run::<Tally>(valid_tally()), (256, 0));
}

#[test]
fn mutated_orders_agree() {
    let (accepted, rejected) = run::<Order>(mutated(valid_order()));
    // Not vacuous: mutations both break and (dropping an optional key, adding
    // null to an Option) keep validity.
    assert!(rejected >= 100, "accepted {accepted}, rejected {rejected}");
    assert!(accepted >= 5, "accepted {accepted}, rejected {rejected}");
}

#[test]
fn mutated_readings_agree() {
    let (accepted, rejected) = run::<Reading>(mutated(valid_reading()));
    assert!(rejected >= 100, "accepted {accepted}, rejected {rejected}");
    assert!(accepted >= 5, "accepted {accepted}, rejected {rejected}");
}

#[test]
fn mutated_tallies_agree() {
    // Every field of a tally is required and unknown keys are denied, so
    // nearly every mutation breaks it: the rejections are what is compared.
    let (accepted, rejected) = run::<Tally>(mutated(valid_tally()));
    assert!(rejected >= 200, "accepted {accepted}, rejected {rejected}");
}

#[test]
fn random_values_agree() {
    for (accepted, rejected) in [
        run::<Order>(random_object()),
        run::<Reading>(random_object()),
        run::<Tally>(random_object()),
        run::<Order>(any_json()),
    ] {
        assert_eq!(accepted + rejected, 256);
    }
}

#[test]
fn the_documented_differences_resolve_to_rejection() {
    // 1.0 for a u8: the schema accepts, serde does not, validate rejects.
    let mut order =
        json!({"id": "ORD-001", "customer": "Ada", "priority": 1.0, "status": "open", "lines": []});
    let schema_ok = |v: &Value| {
        jsonschema::options()
            .should_validate_formats(true)
            .build(&Order::tool().input_schema)
            .unwrap()
            .is_valid(v)
    };
    assert!(schema_ok(&order));
    assert!(serde_json::from_value::<Order>(order.clone()).is_err());
    let violations = extract::validate::<Order>(&order, "").unwrap_err();
    assert_eq!(violations.len(), 1, "{violations}");
    assert_eq!(violations[0].path, "priority");
    assert_eq!(violations[0].code, "invalid_type");
    order["priority"] = json!(1);
    assert!(extract::validate::<Order>(&order, "").is_ok());

    // u64::MAX + 1 is not representable as u64; serde_json keeps it as a float.
    let reading = json!({"sensorName": "a", "offset": 0, "count": 18446744073709551616.0,
                         "level": 0, "samples": [], "unit": "Kelvin"});
    let violations = extract::validate::<Reading>(&reading, "").unwrap_err();
    assert_eq!(violations[0].path, "count");
}
