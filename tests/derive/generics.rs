//! Generic structs: `Page<T>` derives when `T` is walked (the derive adds
//! the bounds itself); each instantiation has its own description and
//! tool; the checks of `T` run inside it; the struct's own checks
//! (`count(items)`) run too. A check that reads a field of `T` is a compile
//! error (`tests/ui/generic_struct.rs`).

use extract::{Extractable, Layer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount > 0)]
struct Line {
    #[extract(recoverable = false)]
    label: String,
    amount: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(len(name) > 1)]
struct Person {
    name: String,
}

/// One page of results.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(count(items) <= 3, message = "a page holds at most 3 items")]
#[check(page >= 1)]
struct Page<T> {
    items: Vec<T>,
    page: u32,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Report {
    lines: Page<Line>,
    people: Page<Person>,
}

#[test]
fn each_instantiation_runs_its_own_checks_and_those_of_its_items() {
    let valid = json!({"items": [{"label": "a", "amount": 1.0}], "page": 1});
    assert_eq!(extract::validate::<Page<Line>>(&valid, "").unwrap().items[0].amount, 1.0);

    let output = json!({"items": [{"label": "a", "amount": -1.0}, {"label": "b", "amount": 1.0}], "page": 0});
    let found = extract::validate::<Page<Line>>(&output, "").unwrap_err();
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(paths, ["page", "items[0].amount"], "{found}");

    let too_many =
        json!({"items": [{"name": "Al"}, {"name": "Bo"}, {"name": "Cy"}, {"name": "D"}], "page": 2});
    let found = extract::validate::<Page<Person>>(&too_many, "").unwrap_err();
    let messages: Vec<(String, &str)> =
        found.iter().map(|v| (v.path.to_string(), v.message.as_str())).collect();
    assert_eq!(messages[0], ("items".to_string(), "a page holds at most 3 items"), "{found}");
    assert_eq!(messages[1].0, "items[3].name", "{found}");
}

#[test]
fn a_tagged_field_of_t_escalates_inside_a_generic_field() {
    let output = json!({
        "lines": {"items": [{"label": null, "amount": 1.0}], "page": 1},
        "people": {"items": [], "page": 1},
    });
    let found = extract::validate::<Report>(&output, "").unwrap_err();
    assert_eq!(
        (found[0].layer, found[0].path.to_string()),
        (Layer::Structure, "lines.items[0].label".to_string())
    );
    assert!(!found[0].recoverable, "{found}");
}

#[test]
fn each_instantiation_has_its_own_tool() {
    let lines = Page::<Line>::tool();
    let people = Page::<Person>::tool();
    // `amount > 0` is stated in the schema of `Line`'s page alone.
    assert!(lines.input_schema.to_string().contains(r#""exclusiveMinimum":0"#), "{}", lines.input_schema);
    assert!(!people.input_schema.to_string().contains("exclusiveMinimum"), "{}", people.input_schema);
    assert!(people.description.contains("- in each `items`: len(name) > 1"), "{}", people.description);
    assert!(lines.description.contains("count(items) <= 3"));
    assert_ne!(lines.input_schema, people.input_schema);
    let report = Report::tool().description;
    assert!(!report.contains("amount > 0"), "{report}");
    // `page >= 1` tightens the `minimum: 0` schemars gives a `u32`.
    assert!(!report.contains("page >= 1"), "{report}");
    assert!(
        Report::tool().input_schema.to_string().contains(r#""minimum":1"#),
        "{}",
        Report::tool().input_schema
    );
    assert!(report.contains("- in each `people.items`: len(name) > 1"), "{report}");
}

/// A value with a label, generic over a plain type.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(len(label) > 2, message = "a label has at least 3 characters")]
struct Labelled<T> {
    label: String,
    value: T,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Shelf {
    counted: Labelled<u32>,
    named: Option<Labelled<String>>,
}

#[test]
fn a_generic_struct_over_plain_types_is_walked_where_it_is_nested() {
    // Its checks run where it is nested, as they do on its own.
    let output = json!({"counted": {"label": "ab", "value": 3}, "named": {"label": "x", "value": "y"}});
    let found = extract::validate::<Shelf>(&output, "").unwrap_err();
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(paths, ["counted.label", "named.label"], "{found}");
    assert!(extract::validate::<Labelled<u32>>(&json!({"label": "ab", "value": 3}), "").is_err());

    // And the model is told them.
    let description = Shelf::tool().description;
    assert!(description.contains("- in `counted`: len(label) > 2"), "{description}");
    assert!(description.contains("- in `named`: len(label) > 2"), "{description}");
}
