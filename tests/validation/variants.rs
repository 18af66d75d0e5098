//! The three layers on enums: an unknown tag is a structure violation
//! naming the allowed tags; a variant's malformed fields are structure
//! violations at their paths; serde's lenient forms inside an internally
//! tagged variant (which serde buffers before it knows the variant, and
//! then reads leniently: a struct as an array) are refused as they are
//! everywhere else; and a well-formed variant reaches the semantic layer.

use extract::{Extractable, Layer, Violations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(amount > 0)]
struct Line {
    label: String,
    amount: f64,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Party {
    Person { name: String },
    Company { name: String, lines: Vec<Line> },
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Method {
    Card { last4: String },
    Cash,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "t", content = "c", rename_all = "snake_case")]
enum Channel {
    Email { address: String },
    Post,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Booking {
    party: Party,
    method: Method,
    channel: Channel,
}

fn valid() -> Value {
    json!({
        "party": {"kind": "company", "name": "x", "lines": [{"label": "Lunch", "amount": 12.5}]},
        "method": {"card": {"last4": "1234"}},
        "channel": {"t": "email", "c": {"address": "a@b.c"}},
    })
}

fn violations(output: &Value) -> Violations {
    extract::validate::<Booking>(output, "").expect_err("the output is malformed")
}

#[test]
fn a_valid_booking_validates() {
    extract::validate::<Booking>(&valid(), "").expect("valid");
}

#[test]
fn an_unknown_tag_is_a_structure_violation_naming_the_allowed_tags() {
    for (pointer, tag, path, allowed) in [
        ("/party/kind", json!("charity"), "party.kind", ["\"person\"", "\"company\""]),
        ("/channel/t", json!("fax"), "channel.t", ["\"email\"", "\"post\""]),
    ] {
        let mut output = valid();
        *output.pointer_mut(pointer).unwrap() = tag;
        let found = violations(&output);
        assert_eq!(found.len(), 1, "{found}");
        let violation = &found[0];
        assert_eq!(
            (violation.layer, violation.path.to_string()),
            (Layer::Structure, path.to_string()),
            "{found}"
        );
        assert!(violation.recoverable);
        for tag in allowed {
            assert!(violation.message.contains(tag), "{tag} missing from {:?}", violation.message);
        }
    }
    // Externally tagged: the tag is the key.
    let mut output = valid();
    output["method"] = json!({"cheque": {"last4": "1234"}});
    let found = violations(&output);
    assert_eq!(found[0].layer, Layer::Structure, "{found}");
    assert!(found.iter().all(|v| v.path.to_string().starts_with("method")), "{found}");
    let text = found.to_string();
    assert!(text.contains("card") && text.contains("cash"), "the allowed tags are named: {text}");
    // In the schema's order: schemars lists unit variants first.
    assert_eq!(found[0].message, "the variant \"cheque\" is not one of \"cash\", \"card\"");
    // Two keys: how many, never every key of a hostile object.
    output["method"] = json!({"card": {"last4": "1234"}, "cash": null});
    let found = violations(&output);
    assert_eq!(found[0].path, "method", "{found}");
    assert!(found[0].message.ends_with("as its only key; got 2 keys"), "{found}");
}

#[test]
fn a_variant_filled_wrongly_is_named_with_what_it_expects_never_another_variant() {
    // Each form: the model chose a variant and left out or mistyped its fields.
    let mut output = valid();
    output["party"] = json!({"kind": "company", "name": "x"});
    output["method"] = json!({"card": {"last4": 1234}});
    output["channel"] = json!({"t": "email"});
    let found = violations(&output);
    let lines: Vec<String> = found.iter().map(|v| format!("{}: {}", v.path, v.message)).collect();
    assert_eq!(
        lines,
        [
            "party.lines: required field is missing (in the variant \"company\")",
            "method.card.last4: expected a string, got 1234 (in the variant \"card\")",
            "channel.c: required field is missing (in the variant \"email\")",
        ],
        "{found}"
    );
    // No message offers another variant in place of the chosen one.
    assert!(!found.to_string().contains("person") && !found.to_string().contains("cash"), "{found}");

    // Externally tagged, a variant with fields given as its bare name: it
    // needs its fields, it is not "one of" the unit variants.
    let mut output = valid();
    output["method"] = json!("card");
    let found = violations(&output);
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!(
        found[0].message,
        "the variant \"card\" has fields: give it as an object, {\"card\": {...}}, not as a bare name"
    );
}

#[test]
fn a_malformed_field_inside_a_variant_is_a_structure_violation_at_its_path() {
    let mut output = valid();
    output["method"]["card"]["last4"] = json!(1234);
    output["party"]["name"] = json!(false);
    output["channel"]["c"]["address"] = json!(["a"]);
    let found = violations(&output);
    let mut paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    paths.sort();
    assert_eq!(paths, ["channel.c.address", "method.card.last4", "party.name"], "{found}");
    assert!(found.iter().all(|v| v.layer == Layer::Structure && v.code == "invalid_type"), "{found}");
}

#[test]
fn serdes_lenient_forms_inside_an_internally_tagged_variant_are_refused() {
    // serde buffers an internally tagged enum's content before it reads the
    // tag, and then reads a struct from an array: the schema refuses it.
    let mut output = valid();
    output["party"] = json!({"kind": "company", "name": "x", "lines": [["Lunch", 12.5]]});
    let found = violations(&output);
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!((found[0].layer, found[0].path.to_string()), (Layer::Structure, "party.lines[0]".to_string()));
    assert_eq!(found[0].code, "invalid_type", "{found}");
}

#[test]
fn a_missing_tag_is_a_missing_field_naming_the_allowed_tags() {
    let mut output = valid();
    output["party"].as_object_mut().unwrap().remove("kind");
    let found = violations(&output);
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!(
        (found[0].code.to_string(), found[0].path.to_string()),
        ("missing_field".into(), "party.kind".into())
    );
    assert!(found[0].message.contains("\"person\"") && found[0].message.contains("\"company\""), "{found}");
}

#[test]
fn a_well_formed_variant_reaches_the_semantic_layer() {
    let mut output = valid();
    output["party"]["lines"][0]["amount"] = json!(-1);
    let found = violations(&output);
    assert_eq!(
        (found[0].layer, found[0].path.to_string()),
        (Layer::Semantic, "party.lines[0].amount".to_string())
    );
}

/// How urgent a request is.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Urgency {
    High,
    VeryLow,
    #[serde(rename = "NORMAL")]
    Normal,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(urgency != Urgency::High || len(reason) > 0, message = "urgency {urgency} needs a reason")]
#[check(urgency != Urgency::VeryLow)]
#[check(urgency == Urgency::Normal || urgency == Urgency::High)]
struct Request {
    urgency: Urgency,
    reason: String,
}

#[test]
fn checks_speak_the_json_names_of_enum_values_in_the_tool_and_in_messages() {
    let description = Request::tool().description;
    for rule in [
        "urgency != \"high\" || len(reason) > 0",
        "urgency != \"very_low\"",
        "urgency == \"NORMAL\" || urgency == \"high\"",
    ] {
        assert!(description.contains(rule), "{rule} missing from {description}");
    }
    assert!(!description.contains("Urgency::"), "{description}");

    let found = extract::validate::<Request>(&json!({"urgency": "very_low", "reason": ""}), "").unwrap_err();
    let messages: Vec<&str> = found.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "check failed: urgency != \"very_low\": urgency = \"very_low\"",
            "check failed: urgency == \"NORMAL\" || urgency == \"high\": urgency = \"very_low\", urgency = \"very_low\"",
        ],
        "{found}"
    );
    let found = extract::validate::<Request>(&json!({"urgency": "high", "reason": ""}), "").unwrap_err();
    assert_eq!(found[0].message, "urgency \"high\" needs a reason", "{found}");
}
