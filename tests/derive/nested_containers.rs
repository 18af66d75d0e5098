//! The semantic walk reaches a nested type's `#[check]`s and tags through
//! every container the type system can see. For each container: a failing
//! check inside it is a violation at the indexed path, and a tagged field
//! sent as `null` inside it escalates (not recoverable).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use extract::{Extractable, Violations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema, Extractable,
)]
#[check(qty >= 0)]
struct Part {
    #[extract(recoverable = false)]
    sku: String,
    qty: i64,
}

/// A map key with no `Display`: it shows in paths as it serializes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Currency {
    Gbp,
    Eur,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Order {
    boxed: Box<Part>,
    shared: Arc<Part>,
    counted: Rc<Part>,
    maybe: Option<Part>,
    list: Vec<Part>,
    queue: VecDeque<Part>,
    pair_array: [Part; 2],
    slice: Box<[Part]>,
    ordered: BTreeSet<Part>,
    hashed: HashSet<Part>,
    by_currency: BTreeMap<Currency, Part>,
    hashed_by_currency: HashMap<Currency, Part>,
    tuple: (String, Part),
    nested: Vec<Arc<Option<Part>>>,
    grouped: BTreeMap<Currency, Vec<Part>>,
}

fn part(qty: i64) -> Value {
    json!({"sku": "A-1", "qty": qty})
}

/// An order whose every part is valid, with `bad` put at `place`.
fn order_with(place: &str, bad: Value) -> Value {
    let mut order = json!({
        "boxed": part(1), "shared": part(1), "counted": part(1), "maybe": part(1),
        "list": [part(1)], "queue": [part(1)], "pair_array": [part(1), part(2)], "slice": [part(1)],
        "ordered": [part(1)], "hashed": [part(1)],
        "by_currency": {"gbp": part(1)}, "hashed_by_currency": {"eur": part(1)},
        "tuple": ["x", part(1)], "nested": [part(1)], "grouped": {"gbp": [part(1)]},
    });
    let slot = match place {
        "list" | "queue" | "slice" | "ordered" | "hashed" | "nested" => &mut order[place][0],
        "pair_array" => &mut order[place][1],
        "by_currency" => &mut order[place]["gbp"],
        "hashed_by_currency" => &mut order[place]["eur"],
        "tuple" => &mut order[place][1],
        "grouped" => &mut order[place]["gbp"][0],
        _ => &mut order[place],
    };
    *slot = bad;
    order
}

/// Where a bad part at `place` is reported.
fn path_of(place: &str) -> &'static str {
    match place {
        "boxed" => "boxed",
        "shared" => "shared",
        "counted" => "counted",
        "maybe" => "maybe",
        "list" => "list[0]",
        "queue" => "queue[0]",
        "pair_array" => "pair_array[1]",
        "slice" => "slice[0]",
        "ordered" => "ordered[0]",
        "hashed" => "hashed[0]",
        "by_currency" => "by_currency.gbp",
        "hashed_by_currency" => "hashed_by_currency.eur",
        "tuple" => "tuple[1]",
        "nested" => "nested[0]",
        "grouped" => "grouped.gbp[0]",
        _ => unreachable!(),
    }
}

const PLACES: [&str; 15] = [
    "boxed",
    "shared",
    "counted",
    "maybe",
    "list",
    "queue",
    "pair_array",
    "slice",
    "ordered",
    "hashed",
    "by_currency",
    "hashed_by_currency",
    "tuple",
    "nested",
    "grouped",
];

fn violations(output: &Value) -> Violations {
    extract::validate::<Order>(output, "").expect_err("the bad part must be found")
}

#[test]
fn a_valid_order_passes() {
    let order = order_with("boxed", part(3));
    extract::validate::<Order>(&order, "").unwrap();
}

#[test]
fn a_failing_check_is_found_through_every_container() {
    for place in PLACES {
        let found = violations(&order_with(place, part(-5)));
        assert_eq!(found.len(), 1, "{place}: {found}");
        let v = &found[0];
        assert_eq!(v.code, "check_failed", "{place}: {found}");
        assert_eq!(v.path.to_string(), format!("{}.qty", path_of(place)), "{place}");
        assert!(v.message.contains("qty = -5"), "{place}: {}", v.message);
        assert!(v.recoverable, "{place}");
    }
}

#[test]
fn a_tagged_null_escalates_through_every_container() {
    for place in PLACES {
        let found = violations(&order_with(place, json!({"sku": null, "qty": 1})));
        let v = found
            .iter()
            .find(|v| v.path.to_string() == format!("{}.sku", path_of(place)))
            .unwrap_or_else(|| panic!("{place}: no violation at the sku: {found}"));
        assert_eq!(v.code, "missing_field", "{place}");
        assert!(!v.recoverable, "{place}: the tag inside the container is honoured");
    }
}

#[test]
fn the_tool_states_the_checks_of_the_nested_type() {
    let tool = Order::tool();
    // `qty >= 0` bounds one number: the shared definition states it, once
    // for every container, and the description does not list it again.
    assert_eq!(tool.input_schema["$defs"]["Part"]["properties"]["qty"]["minimum"], json!(0));
    assert!(!tool.description.contains("qty >= 0"), "{}", tool.description);
    // The tagged field inside the nested type admits null in the tool's schema.
    let part_schema = &tool.input_schema["$defs"]["Part"]["properties"]["sku"];
    assert_eq!(part_schema["type"], json!(["string", "null"]), "{part_schema}");
}

/// Check paths pass through the same containers.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(shared.qty) == total)]
#[check(count(ordered.qty) == 2)]
#[check(counted.qty <= 10)]
struct Totals {
    shared: Arc<Vec<Part>>,
    ordered: BTreeSet<Part>,
    counted: Rc<Part>,
    total: i64,
}

#[test]
fn check_paths_pass_through_pointers_and_sets() {
    let ok =
        json!({"shared": [part(2), part(3)], "ordered": [part(1), part(4)], "counted": part(10), "total": 5});
    extract::validate::<Totals>(&ok, "").unwrap();
    let bad = json!({"shared": [part(2), part(3)], "ordered": [part(1)], "counted": part(11), "total": 6});
    let found = violations_of::<Totals>(&bad);
    let rules: Vec<&str> = found.iter().filter_map(|v| v.check.as_deref()).collect();
    assert_eq!(
        rules,
        ["sum(shared.qty) == total", "count(ordered.qty) == 2", "counted.qty <= 10"],
        "{found}"
    );
}

fn violations_of<T: Extractable + std::fmt::Debug>(output: &Value) -> Violations {
    extract::validate::<T>(output, "").expect_err("a check must fail")
}

/// A derived type named like a library type is still walked.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(end >= start)]
struct Duration {
    start: i64,
    end: i64,
}

/// A derived type inside `Sourced` has its checks and tags run too.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(qty >= 0)]
struct Quoted {
    #[extract(recoverable = false)]
    sku: String,
    qty: i64,
}

/// A type alias of a tuple mixing a derived value with plain data.
type PartAndCount = (Part, u32);

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Edges {
    term: Duration,
    terms: Vec<Duration>,
    quoted: extract::Sourced<Quoted>,
    aliased: PartAndCount,
}

fn edges(term_end: i64, quoted_qty: i64, aliased_qty: i64) -> Value {
    json!({
        "term": {"start": 5, "end": term_end},
        "terms": [{"start": 1, "end": 2}, {"start": 5, "end": term_end}],
        "quoted": {"value": {"sku": "A-1", "qty": quoted_qty}, "quote": "A-1"},
        "aliased": [part(aliased_qty), 3],
    })
}

#[test]
fn names_like_library_types_sourced_values_and_aliases_are_walked() {
    extract::validate::<Edges>(&edges(9, 1, 1), "A-1").unwrap();
    let found = violations_of::<Edges>(&edges(1, -1, -1));
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    // The quote is not in the (empty) document either.
    assert_eq!(
        paths,
        ["term.end", "terms[1].end", "quoted.quote", "quoted.value.qty", "aliased[0].qty"],
        "{found}"
    );
}

#[test]
fn a_tagged_null_inside_a_sourced_value_escalates() {
    let mut output = edges(9, 1, 1);
    output["quoted"]["value"]["sku"] = Value::Null;
    let found = violations_of::<Edges>(&output);
    let v = found.iter().find(|v| v.path == "quoted.value.sku").unwrap_or_else(|| panic!("{found}"));
    assert_eq!(v.code, "missing_field");
    assert!(!v.recoverable, "the tag inside the Sourced value is honoured");
}

/// A type that names itself as `Self` in a field: its description and its
/// nested checks work as with its own name.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(weight >= 0)]
struct Section {
    weight: i64,
    children: Vec<Self>,
    parent: Option<Box<Self>>,
}

#[test]
fn a_type_that_names_itself_as_self_is_walked_to_any_depth() {
    let output = json!({
        "weight": 1,
        "children": [{"weight": 2, "children": [{"weight": -3, "children": [], "parent": null}], "parent": null}],
        "parent": null,
    });
    let violations = violations_of::<Section>(&output);
    let paths: Vec<String> = violations.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(paths, ["children[0].children[0].weight"], "{violations:?}");
    // The bound is the root's, stated on its own `weight`, which every
    // nested section (a `$ref` to the root) shares.
    let tool = Section::tool();
    assert!(!tool.description.contains("weight >= 0"), "{}", tool.description);
    assert_eq!(tool.input_schema["properties"]["weight"]["minimum"], json!(0), "{}", tool.input_schema);
}
