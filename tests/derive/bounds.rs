//! A check that compares one number of its type with a literal is stated in
//! the tool's schema as that number's keyword (and not listed again); every
//! other check stays in the description's list. The validator runs all of
//! them either way.

use extract::{Extractable, Layer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(low >= 1)]
#[check(above > 0.5)]
#[check(high <= 10)]
#[check(below < 2.5)]
#[check(maybe >= 0)]
#[check(count >= 5)]
#[check(tagged >= 0)]
#[check(low <= high)]
#[check(1 <= high)]
#[check(high >= 2, recoverable = false)]
struct Bounded {
    low: i64,
    above: f64,
    high: i64,
    below: f64,
    /// Null passes a `minimum`, so a nullable number keeps its check listed.
    maybe: Option<f64>,
    /// schemars says `minimum: 0` for a `u32`; the check's 5 is tighter.
    count: u32,
    #[extract(recoverable = false)]
    tagged: f64,
}

#[test]
fn a_bound_on_one_number_is_its_keyword() {
    let tool = Bounded::tool();
    let properties = &tool.input_schema["properties"];
    assert_eq!(properties["low"]["minimum"], json!(1));
    assert_eq!(properties["above"]["exclusiveMinimum"], json!(0.5));
    assert_eq!(properties["high"]["maximum"], json!(10));
    assert_eq!(properties["below"]["exclusiveMaximum"], json!(2.5));
    assert_eq!(properties["count"]["minimum"], json!(5));
    // Stated before `null` is admitted: the bound holds for any number given.
    assert_eq!(properties["tagged"]["minimum"], json!(0), "{}", properties["tagged"]);
    assert_eq!(properties["tagged"]["type"], json!(["number", "null"]));
    for stated in ["low >= 1", "above > 0.5", "high <= 10", "below < 2.5", "count >= 5", "tagged >= 0"] {
        assert!(!tool.description.contains(stated), "{stated} listed again:\n{}", tool.description);
    }
}

#[test]
fn every_other_check_stays_listed() {
    let tool = Bounded::tool();
    for listed in ["- maybe >= 0", "- low <= high", "- 1 <= high", "- high >= 2"] {
        assert!(tool.description.contains(listed), "{listed} missing from:\n{}", tool.description);
    }
    assert!(tool.input_schema["properties"]["maybe"].get("minimum").is_none());
    assert!(tool.input_schema["properties"]["high"].get("minimum").is_none());
}

#[test]
fn the_validator_still_runs_a_stated_bound_as_a_check() {
    let output = json!({
        "low": 0, "above": 0.5, "high": 11, "below": 2.5, "maybe": null, "count": 4, "tagged": -1.0
    });
    let found = extract::validate::<Bounded>(&output, "").unwrap_err();
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(paths, ["low", "above", "high", "below", "count", "tagged"], "{found}");
    assert!(found.iter().all(|v| v.layer == Layer::Semantic && v.code == "check_failed"), "{found}");
    assert!(found[0].message.contains("low >= 1"), "{found}");
}

#[test]
fn the_strict_copy_restates_a_stated_bound_in_words() {
    let strict = Bounded::tool().strict().unwrap();
    let low = &strict.input_schema["properties"]["low"];
    assert!(low.get("minimum").is_none(), "{low}");
    assert!(low["description"].as_str().unwrap().contains("at least 1"), "{low}");
}
