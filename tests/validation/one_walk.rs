//! Differential property test of the structure layer's one walk (the strict
//! deserializer of `extract-core/src/validate/structure/walk.rs`, reached
//! through `StructureValidator::deserialize` and `deserialize_error`): over
//! random and mutated JSON values and many target types, it gives exactly
//! what serde_json's own `&Value` deserializer gives, the same value when
//! serde accepts, the same message (and the same path, through
//! `serde_path_to_error`) when serde refuses.
//!
//! And its verdict is sound: for a type whose schema schemars derives, an
//! output it lets skip the schema pass is one the schema pass accepts (an
//! output the walk read strictly never hides a form the schema refuses),
//! and an output it sends there is one [`StructureValidator::must_check`]'s
//! full scan sends there too.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Debug;

use extract::__private_v2::TypeInfo;
use extract_core::structure::StructureValidator;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------- the types

/// Every kind of field at once: scalars of each width, options, sequences,
/// maps keyed by strings and by numbers, nested structs, an untyped value,
/// a `#[serde(default)]` field and enums of every representation.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Record {
    name: String,
    count: u8,
    offset: i64,
    gain: f32,
    level: f64,
    on: bool,
    note: Option<String>,
    tags: Vec<String>,
    by_name: BTreeMap<String, Inner>,
    by_id: BTreeMap<u8, f64>,
    by_offset: BTreeMap<i64, bool>,
    inner: Inner,
    maybe: Option<Inner>,
    raw: Value,
    #[serde(default)]
    extra: Vec<Option<u8>>,
    external: External,
    internal: Internal,
    adjacent: Adjacent,
    untagged: Untagged,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Inner {
    a: u8,
    b: Option<Vec<f32>>,
    #[serde(default)]
    c: String,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
enum External {
    Unit,
    #[serde(alias = "Single")]
    Newtype(u8),
    Tuple(u8, String),
    Struct {
        x: f64,
        y: Option<u8>,
    },
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Internal {
    A { x: u8 },
    B(Loose),
    C,
}

/// A struct that takes unknown fields (the tag of an internally tagged enum among them).
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Loose {
    a: u8,
    b: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A(u8),
    B { s: String },
    C,
    D(u8, bool),
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    N(u8),
    S(String),
    I(Inner),
    L(Vec<i64>),
    U,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum WithOther {
    Known,
    #[serde(other)]
    Unknown,
}

/// A flattened map: serde buffers the struct's fields.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Flat {
    a: u8,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Strict {
    a: u8,
    #[serde(default)]
    tags: Vec<String>,
    unit: External,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Newtype(Inner);

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Pair(u8, Option<String>);

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Unit;

// ------------------------------------------------------------ the oracle

static INFO: TypeInfo = TypeInfo::new("T", "t", "", &[]);

/// Reads `value` as `T` both ways and compares; returns whether serde accepted.
fn agree<T>(validator: &StructureValidator, value: &Value) -> Result<bool, TestCaseError>
where
    T: DeserializeOwned + PartialEq + Debug,
{
    match (validator.deserialize::<T>(value), T::deserialize(value)) {
        (Ok((got, check)), Ok(want)) => {
            prop_assert_eq!(got, want, "{}", value);
            // The verdict: the scan's when the walk read leniently somewhere;
            // otherwise nothing the schema pass would refuse.
            if check {
                prop_assert!(validator.must_check(value), "{}", value);
            } else {
                let found = validator.violations(value, &INFO);
                prop_assert!(
                    found.is_empty(),
                    "{value}: the walk skips the schema pass, which finds {found:?}"
                );
            }
            Ok(true)
        }
        (Err(got), Err(want)) => {
            prop_assert_eq!(got.to_string(), want.to_string(), "{}", value);
            let got = validator.deserialize_error::<T>(value).expect("the walk refused it");
            let want = serde_path_to_error::deserialize::<_, T>(value).expect_err("serde refused it");
            prop_assert_eq!(got.path().to_string(), want.path().to_string(), "{}", value);
            prop_assert_eq!(got.inner().to_string(), want.inner().to_string(), "{}", value);
            Ok(false)
        }
        (got, want) => Err(TestCaseError::fail(format!(
            "{value}: the walk gave {:?}, serde {want:?}",
            got.map(|(v, _)| v)
        ))),
    }
}

/// Runs `agree::<T>` over `cases` values of `strategy`, against the
/// validator of `T`'s derived schema; returns (accepted, refused).
fn run<T>(cases: u32, strategy: impl Strategy<Value = Value>) -> (usize, usize)
where
    T: DeserializeOwned + JsonSchema + PartialEq + Debug,
{
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let validator = StructureValidator::new(&schema);
    let mut runner = crate::seeded_runner(cases);
    let accepted = Cell::new(0);
    let refused = Cell::new(0);
    let result = runner.run(&strategy, |value| {
        let counter = if agree::<T>(&validator, &value)? { &accepted } else { &refused };
        counter.set(counter.get() + 1);
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{}: {failure}", std::any::type_name::<T>());
    }
    (accepted.get(), refused.get())
}

// ---------------------------------------------------- random JSON values

const KEYS: &[&str] = &[
    "name",
    "count",
    "offset",
    "gain",
    "level",
    "on",
    "note",
    "tags",
    "by_name",
    "by_id",
    "by_offset",
    "inner",
    "maybe",
    "raw",
    "extra",
    "external",
    "internal",
    "adjacent",
    "untagged",
    "a",
    "b",
    "c",
    "x",
    "y",
    "s",
    "t",
    "kind",
    "unit",
    "Unit",
    "Newtype",
    "Single",
    "Tuple",
    "Struct",
    "A",
    "B",
    "C",
    "D",
    "7",
    "-3",
    "300",
    "1.5",
    " 7",
    "true",
];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_string)
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            json!(0),
            json!(1),
            json!(-1),
            json!(255),
            json!(256),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(0.0),
            json!(1.0),
            json!(1.5),
            json!(-0.5),
            json!(3.4e38),
            json!(1e39),
            json!(-1e300),
        ]),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
    ]
}

fn string() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(KEYS).prop_map(Value::from),
        prop::sample::select(vec!["", "known", "other", "x", "é", "ab"]).prop_map(Value::from),
        "[a-zA-Z0-9 ]{0,8}".prop_map(Value::from),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::from), number(), string()]
}

fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

// ------------------------------------------------------ mutated outputs

fn inner_value() -> Value {
    json!({"a": 1, "b": [0.5, 2], "c": "z"})
}

fn record() -> Value {
    json!({
        "name": "r", "count": 7, "offset": -3, "gain": 1.5, "level": 2, "on": true, "note": null,
        "tags": ["a", "b"], "by_name": {"k": inner_value()}, "by_id": {"7": 1.5, "0": -2},
        "by_offset": {"-3": true}, "inner": {"a": 0}, "maybe": inner_value(), "raw": {"any": [1, null]},
        "extra": [1, null], "external": {"Struct": {"x": 1.5, "y": null}},
        "internal": {"kind": "B", "a": 2, "b": "s"}, "adjacent": {"t": "D", "c": [1, false]},
        "untagged": {"a": 3},
    })
}

/// Valid outputs of the types, which mutations then bend.
fn seeds() -> Vec<Value> {
    vec![
        record(),
        inner_value(),
        json!({"a": 1}),
        json!("Unit"),
        json!({"Newtype": 3}),
        json!({"Single": 3}),
        json!({"Tuple": [1, "s"]}),
        json!({"kind": "A", "x": 1}),
        json!({"kind": "C"}),
        json!({"t": "A", "c": 9}),
        json!({"t": "B", "c": {"s": "x"}}),
        json!({"t": "C"}),
        json!([1, 2, 3]),
        json!([1, "s"]),
        json!("known"),
        json!({"a": 1, "tags": ["x"], "unit": "Unit"}),
        json!({"a": 1, "z": [1], "y": {"q": null}}),
        json!(null),
    ]
}

/// Every place in `value` (itself included), as JSON pointers.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (key, sub) in fields {
                pointers(sub, format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                pointers(sub, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Bends one place of `value`, mostly into a form serde reads leniently.
fn bend(value: &mut Value, (at, how, random): (usize, u8, Value)) {
    let mut all = Vec::new();
    pointers(value, String::new(), &mut all);
    let place = value.pointer_mut(&all[at % all.len()]).expect("a listed place");
    let edges = [json!(256), json!(-1), json!(1.5), json!(1e39), json!(1e300), json!(u64::MAX), json!("7")];
    *place = match (how % 8, place.take()) {
        (0, _) => random,
        (1, _) => Value::Null,
        // A struct as an array of its fields, and the other way round.
        (2, Value::Object(fields)) => Value::Array(fields.into_iter().map(|(_, v)| v).collect()),
        (2, Value::Array(items)) => {
            Value::Object(items.into_iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect())
        }
        // A unit variant as `{"Variant": null}`, or a value as a variant's.
        (3, Value::String(name)) => json!({ name: null }),
        (3, other) => json!({ "Newtype": other }),
        // A field dropped, or one more.
        (4, Value::Object(mut fields)) => {
            if let Some(key) = fields.keys().nth(at % fields.len().max(1)).cloned() {
                fields.remove(&key);
            }
            Value::Object(fields)
        }
        (5, Value::Object(mut fields)) => {
            fields.insert(KEYS[at % KEYS.len()].to_string(), random);
            Value::Object(fields)
        }
        (5, Value::Array(mut items)) => {
            items.push(random);
            Value::Array(items)
        }
        (6, Value::String(_)) => json!(at % 300),
        (6, _) => edges[at % edges.len()].clone(),
        (7, other) => json!([other]),
        (_, other) => other,
    };
}

fn mutated(seeds: Vec<Value>) -> impl Strategy<Value = Value> {
    let bending = (any::<usize>(), any::<u8>(), any_json());
    (prop::sample::select(seeds), prop::collection::vec(bending, 0..3)).prop_map(|(mut value, bends)| {
        for b in bends {
            bend(&mut value, b);
        }
        value
    })
}

/// Random values and bent valid ones.
fn outputs() -> impl Strategy<Value = Value> {
    prop_oneof![1 => any_json(), 3 => mutated(seeds())]
}

/// [`outputs`], and bent valid outputs of one type more often.
fn around(own: Vec<Value>) -> impl Strategy<Value = Value> {
    prop_oneof![1 => outputs(), 2 => mutated(own)]
}

// ----------------------------------------------------------------- tests

#[test]
fn the_one_walk_reads_scalars_as_serde_does() {
    for (accepted, refused) in [
        run::<u8>(256, outputs()),
        run::<i64>(256, outputs()),
        run::<f32>(256, outputs()),
        run::<f64>(256, outputs()),
        run::<String>(256, outputs()),
        run::<bool>(256, outputs()),
        run::<char>(256, outputs()),
        run::<Unit>(256, outputs()),
        run::<Value>(256, outputs()),
    ] {
        assert_eq!(accepted + refused, 256);
    }
}

#[test]
fn the_one_walk_reads_containers_as_serde_does() {
    for (accepted, refused) in [
        run::<Vec<u8>>(256, outputs()),
        run::<Vec<Option<f32>>>(256, outputs()),
        run::<Option<Vec<String>>>(256, outputs()),
        run::<BTreeMap<String, u8>>(256, outputs()),
        run::<BTreeMap<u8, Value>>(256, outputs()),
        run::<BTreeMap<i64, Option<bool>>>(256, outputs()),
        run::<(u8, String)>(256, outputs()),
        run::<Pair>(256, outputs()),
        run::<Newtype>(256, outputs()),
    ] {
        assert!(accepted > 0, "accepted {accepted}, refused {refused}");
        assert!(refused > 0, "accepted {accepted}, refused {refused}");
    }
}

#[test]
fn the_one_walk_reads_structs_as_serde_does() {
    for (accepted, refused) in [
        run::<Record>(512, around(vec![record()])),
        run::<Inner>(512, around(vec![inner_value(), json!({"a": 1})])),
        run::<Loose>(256, around(vec![json!({"a": 1, "b": "s", "c": [1]})])),
        run::<Flat>(256, around(vec![json!({"a": 1, "z": [1], "y": {"q": null}})])),
        run::<Strict>(256, around(vec![json!({"a": 1, "tags": ["x"], "unit": "Unit"})])),
    ] {
        assert!(accepted >= 10, "accepted {accepted}, refused {refused}");
        assert!(refused >= 10, "accepted {accepted}, refused {refused}");
    }
}

#[test]
fn the_one_walk_reads_enums_of_every_representation_as_serde_does() {
    for (accepted, refused) in [
        run::<External>(512, outputs()),
        run::<Internal>(512, outputs()),
        run::<Adjacent>(512, outputs()),
        run::<Untagged>(512, outputs()),
        run::<WithOther>(256, outputs()),
        run::<Vec<External>>(256, outputs()),
    ] {
        assert!(accepted >= 5, "accepted {accepted}, refused {refused}");
        assert!(refused >= 5, "accepted {accepted}, refused {refused}");
    }
}

/// The cases a random run found, or that a run could miss, kept.
#[test]
fn the_one_walk_reads_edge_cases_as_serde_does() {
    let run_one = |value: Value| {
        let single = Just(value);
        run::<Record>(1, single.clone());
        run::<Inner>(1, single.clone());
        run::<External>(1, single.clone());
        run::<Untagged>(1, single.clone());
        run::<BTreeMap<u8, Value>>(1, single.clone());
        run::<Vec<Option<f32>>>(1, single);
    };
    let mut record = record();
    record["by_id"] = json!({" 7": 1});
    run_one(record.clone());
    record["by_id"] = json!({"7 ": 1});
    run_one(record.clone());
    record["by_id"] = json!({"300": 1});
    run_one(record.clone());
    record["by_id"] = json!({"-0": 1});
    run_one(record);
    for value in [
        json!({"Unit": null}),
        json!({"Unit": 1}),
        json!({"Newtype": null}),
        json!({"Tuple": []}),
        json!({"Tuple": [1]}),
        json!({"Tuple": [1, "s", 2]}),
        json!({"Struct": [1.5, null]}),
        json!({"Struct": {"x": 1}, "Unit": null}),
        json!({}),
        json!([1e300, null, -1e39]),
        json!([[1, [0.5]], {"a": 1, "b": null}]),
    ] {
        run_one(value);
    }
}
