//! Fields are classified by what their types are, not by the name written:
//! a type alias or a renamed import of a type the walk knows (`Sourced`,
//! `Vec`, `Option`, maps, ...) is walked and described exactly as the type
//! it names. Each case here came back valid (or recoverable) before.

use extract::{Extractable, Sourced as S};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(qty >= 0)]
struct Line {
    #[extract(recoverable = false)]
    sku: String,
    qty: i64,
}

type Q = extract::Sourced<Line>;
type Lines = Vec<extract::Sourced<Line>>;
type MaybeLines = Option<std::collections::BTreeMap<String, Q>>;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Order {
    line: Q,
    lines: Lines,
    renamed: S<Line>,
    keyed: MaybeLines,
}

const DOCUMENT: &str = "Order: A-1 x 2, B-2 x 3";

fn sourced(sku: Value, qty: i64) -> Value {
    json!({"value": {"sku": sku, "qty": qty}, "quote": "A-1 x 2"})
}

fn order(place: &str, bad: Value) -> Value {
    let mut order = json!({
        "line": sourced(json!("A-1"), 2),
        "lines": [sourced(json!("A-1"), 2)],
        "renamed": sourced(json!("A-1"), 2),
        "keyed": {"first": sourced(json!("A-1"), 2)},
    });
    match place {
        "lines" => order["lines"] = json!([sourced(json!("A-1"), 2), bad]),
        "keyed" => order["keyed"] = json!({"first": bad}),
        other => order[other] = bad,
    }
    order
}

#[test]
fn a_valid_order_is_valid() {
    let valid = extract::validate::<Order>(&order("line", sourced(json!("A-1"), 2)), DOCUMENT);
    assert!(valid.is_ok(), "{:?}", valid.err());
}

#[test]
fn a_failing_check_inside_an_aliased_or_renamed_sourced_is_found_at_its_path() {
    for (place, path) in [
        ("line", "line.value.qty"),
        ("lines", "lines[1].value.qty"),
        ("renamed", "renamed.value.qty"),
        ("keyed", "keyed.first.value.qty"),
    ] {
        let violations =
            extract::validate::<Order>(&order(place, sourced(json!("A-1"), -1)), DOCUMENT).expect_err(place);
        assert_eq!(violations.len(), 1, "{place}: {violations}");
        assert_eq!(violations[0].code, "check_failed", "{place}");
        assert_eq!(violations[0].path.to_string(), path, "{place}");
        assert!(violations[0].recoverable, "{place}");
    }
}

#[test]
fn a_tagged_null_inside_an_aliased_sourced_is_absent_from_the_source() {
    for (place, path) in [
        ("line", "line.value.sku"),
        ("lines", "lines[1].value.sku"),
        ("renamed", "renamed.value.sku"),
        ("keyed", "keyed.first.value.sku"),
    ] {
        let violations =
            extract::validate::<Order>(&order(place, sourced(Value::Null, 2)), DOCUMENT).expect_err(place);
        assert_eq!(violations[0].code, "missing_field", "{place}: {violations}");
        assert_eq!(violations[0].path.to_string(), path, "{place}");
        assert!(!violations[0].recoverable, "{place}: the tag holds through the alias");
    }
}

#[test]
fn the_quote_of_an_aliased_sourced_is_checked() {
    let mut bad = sourced(json!("A-1"), 2);
    bad["quote"] = json!("Z-9 x 9");
    let violations = extract::validate::<Order>(&order("line", bad), DOCUMENT).unwrap_err();
    assert_eq!(violations[0].code, "quote_not_found");
    assert_eq!(violations[0].path.to_string(), "line.quote");
}

#[test]
fn aliases_are_described_as_the_types_they_name() {
    // The tool reaches through every alias: the bound `qty >= 0` is stated
    // on the one definition every alias names, and not listed again.
    let tool = Order::tool();
    assert!(!tool.description.contains("qty >= 0"), "{}", tool.description);
    let bounded = tool.input_schema.to_string().matches(r#""minimum":0"#).count();
    assert_eq!(bounded, 1, "{}", tool.input_schema);
    // The tagged field inside admits null in the tool's schema, through the aliases.
    let schema = Order::tool().input_schema.to_string();
    assert!(schema.contains("Null if not stated."), "{schema}");
}
