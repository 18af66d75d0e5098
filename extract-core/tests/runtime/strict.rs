//! `Tool::strict` against schemas in the exact shape schemars 1.x produces.

use std::collections::HashSet;

use extract_core::__private_v2::TypeInfo;
use extract_core::Tool;
use extract_core::structure::StructureValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn tool_of<T: JsonSchema>(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: "Record one thing.".into(),
        input_schema: serde_json::to_value(schemars::schema_for!(T)).unwrap(),
        strict: false,
    }
}

static INFO: TypeInfo = TypeInfo::new("T", "t", "", &[]);

/// Every object schema in `schema` (root, properties, items, branches, `$defs`), with its place.
fn objects<'a>(schema: &'a Value, place: String, out: &mut Vec<(String, &'a Value)>) {
    let Some(node) = schema.as_object() else { return };
    if node.get("type") == Some(&json!("object")) || node.contains_key("properties") {
        out.push((place.clone(), schema));
    }
    for (key, value) in node {
        match value {
            Value::Object(map) if matches!(key.as_str(), "properties" | "$defs") => {
                for (name, sub) in map {
                    objects(sub, format!("{place}/{key}/{name}"), out);
                }
            }
            Value::Object(_) => objects(value, format!("{place}/{key}"), out),
            Value::Array(items) => {
                for (i, sub) in items.iter().enumerate() {
                    objects(sub, format!("{place}/{key}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Constrained {
    /// The reference.
    #[schemars(length(min = 3, max = 20), regex(pattern = r"^(?=REF)[A-Z0-9-]+$"))]
    reference: String,
    #[schemars(regex(pattern = r"^INV-[0-9]+$"))]
    invoice_number: String,
    #[schemars(range(min = 0, max = 100))]
    percent: f64,
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 10, "multipleOf" = 0.5))]
    step: f64,
    quantity: u8,
    sequence: i64,
    #[schemars(length(min = 2, max = 5))]
    tags: Vec<String>,
    #[schemars(length(min = 1))]
    lines: Vec<Line>,
    codes: HashSet<String>,
    #[schemars(extend("format" = "iban"))]
    account: String,
    #[schemars(email)]
    contact: String,
    note: Option<String>,
    line: Option<Line>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Line {
    description: String,
    #[schemars(range(min = 0))]
    amount: f64,
}

fn constrained() -> (Value, Value) {
    let tool = tool_of::<Constrained>("record_constrained");
    let strict = tool.strict().expect("strict");
    (tool.input_schema, strict.input_schema)
}

#[test]
fn every_unsupported_keyword_is_removed_and_restated() {
    let (plain, strict) = constrained();
    let props = &strict["properties"];
    let expect = [
        (
            "reference",
            "The reference. Must be at least 3 characters long. Must be at most 20 characters long. \
             Must match the regular expression ^(?=REF)[A-Z0-9-]+$.",
        ),
        ("percent", "Must be at least 0. Must be at most 100."),
        ("step", "Must be greater than 0. Must be less than 10. Must be a multiple of 0.5."),
        ("quantity", "Must be at least 0. Must be at most 255."),
        ("sequence", "Must fit in a signed 64-bit integer."),
        ("tags", "Must have at least 2 items. Must have at most 5 items."),
        ("codes", "Items must be unique."),
        ("account", r#"Must be in the "iban" format."#),
    ];
    for (name, description) in expect {
        assert_eq!(props[name]["description"], json!(description), "{name}: {}", props[name]);
    }
    let removed = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
    ];
    let text = strict.to_string();
    for keyword in removed {
        assert!(!text.contains(&format!("\"{keyword}\"")), "{keyword} left in {text}");
        assert!(plain.to_string().contains(&format!("\"{keyword}\"")), "{keyword} not in the plain schema");
    }
    // minItems 2 is removed; minItems 1 is supported and stays.
    assert!(props["tags"].get("minItems").is_none());
    assert_eq!(props["lines"]["minItems"], json!(1));
    assert!(props["lines"].get("description").is_none());
    // A supported pattern and a supported format stay; unsupported ones go.
    assert_eq!(props["invoice_number"]["pattern"], json!("^INV-[0-9]+$"));
    assert!(props["reference"].get("pattern").is_none());
    assert_eq!(props["contact"]["format"], json!("email"));
    assert!(props["account"].get("format").is_none());
    assert!(props["percent"].get("format").is_none(), "double is not a supported format");
    // Keywords inside $defs are handled too.
    assert_eq!(strict["$defs"]["Line"]["properties"]["amount"]["description"], json!("Must be at least 0."));
}

#[test]
fn every_object_denies_additional_properties_including_defs() {
    let (_, strict) = constrained();
    let mut found = Vec::new();
    objects(&strict, String::new(), &mut found);
    assert!(found.iter().any(|(place, _)| place.starts_with("/$defs/Line")), "{found:?}");
    assert!(found.len() >= 2);
    for (place, object) in found {
        assert_eq!(object["additionalProperties"], json!(false), "at {place}");
    }
}

#[test]
fn optional_fields_stay_optional_and_nullable() {
    let (plain, strict) = constrained();
    assert_eq!(strict["required"], plain["required"]);
    let required: Vec<&str> =
        strict["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(!required.contains(&"note") && !required.contains(&"line"));
    assert_eq!(strict["properties"]["note"]["type"], json!(["string", "null"]));
    assert_eq!(strict["properties"]["line"]["anyOf"][1], json!({"type": "null"}));
}

#[test]
fn the_validator_still_enforces_what_strict_mode_dropped() {
    let (plain, strict) = constrained();
    let value = json!({
        "reference": "XX", "invoice_number": "INV-1", "percent": 150.0, "step": 0.75, "quantity": 3,
        "sequence": 1, "tags": ["a"], "lines": [{"description": "d", "amount": -1.0}], "codes": ["a", "a"],
        "account": "GB00", "contact": "a@example.com"
    });
    let validator = StructureValidator::new(&plain);
    let found = validator.violations(&value, &INFO);
    let mut got: Vec<String> = found.iter().map(|v| format!("{}: {}", v.path, v.message)).collect();
    got.sort();
    for expected in [
        r#"reference: must be at least 3 characters long, got "XX" (2 characters)"#,
        "percent: must be at most 100, got 150.0",
        "step: must be a multiple of 0.5, got 0.75",
        "tags: must have at least 2 items, got 1 item",
        "lines[0].amount: must be at least 0, got -1.0",
        "codes: items must be unique, but some are repeated; remove the duplicates",
    ] {
        assert!(got.iter().any(|g| g == expected), "missing {expected:?} in {got:#?}");
    }
    // The strict schema alone would accept the same value on those points.
    let loose = StructureValidator::new(&strict);
    let loose_found = loose.violations(&value, &INFO);
    assert!(loose_found.iter().all(|v| v.path != "percent" && v.path != "step"), "{loose_found:#?}");
}

#[test]
fn the_strict_tool_serializes_with_strict_true() {
    let tool = tool_of::<Line>("record_line");
    let strict = tool.strict().unwrap();
    let json = serde_json::to_value(&strict).unwrap();
    assert_eq!(json["strict"], json!(true));
    assert_eq!(json["name"], json!("record_line"));
    assert_eq!(json["description"], json!("Record one thing."));
    assert!(serde_json::to_value(&tool).unwrap().get("strict").is_none());
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Node {
    name: String,
    children: Vec<Node>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    trunk: Branch,
}
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Branch {
    leaves: Vec<Leaf>,
}
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Leaf {
    colour: String,
    offshoot: Option<Box<Branch>>,
}

#[test]
fn a_recursive_type_cannot_be_strict() {
    let error = tool_of::<Node>("record_node").strict().unwrap_err();
    assert_eq!(error.tool, "record_node");
    assert!(error.reason.contains("recursive"), "{}", error.reason);
    assert!(error.reason.contains("`Node.children` refers back to `Node`"), "{}", error.reason);
    assert!(error.to_string().starts_with("tool `record_node` cannot be made strict: it is recursive"));

    let error = tool_of::<Tree>("record_tree").strict().unwrap_err();
    assert!(error.reason.contains("`Leaf.offshoot` refers back to `Branch`"), "{}", error.reason);
    assert!(error.reason.contains("Branch -> Leaf -> Branch"), "{}", error.reason);
}

macro_rules! many_fields {
    ($name:ident, $ty:ty, $attr:meta, $($field:ident)*) => {
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct $name {
            $(#[$attr] $field: $ty,)*
        }
    };
}

many_fields!(Defaults24, String, serde(default), a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22 a23 a24);
many_fields!(Defaults25, String, serde(default), a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22 a23 a24 a25);
many_fields!(Options16, Option<String>, serde(default), a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16);
many_fields!(Options17, Option<String>, serde(default), a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17);

#[test]
fn more_than_24_optional_properties_cannot_be_strict() {
    assert!(tool_of::<Defaults24>("d24").strict().is_ok());
    let error = tool_of::<Defaults25>("d25").strict().unwrap_err();
    assert!(error.reason.contains("25 optional properties"), "{}", error.reason);
    assert!(error.reason.contains("more than the 24"), "{}", error.reason);
    assert!(error.reason.contains("the first one over the limit is `Defaults25.a25`"), "{}", error.reason);
}

#[test]
fn more_than_16_union_properties_cannot_be_strict() {
    assert!(tool_of::<Options16>("o16").strict().is_ok());
    let error = tool_of::<Options17>("o17").strict().unwrap_err();
    assert!(error.reason.contains("17 properties with union types"), "{}", error.reason);
    assert!(error.reason.contains("`Options17.a17`"), "{}", error.reason);
}

#[test]
fn optional_properties_are_counted_across_defs() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Defaults24,
        #[serde(default)]
        extra: String,
    }
    let error = tool_of::<Outer>("outer").strict().unwrap_err();
    assert!(error.reason.contains("25 optional properties"), "{}", error.reason);
}

#[test]
fn every_schema_plain_and_strict_is_valid_2020_12() {
    let tools = [
        tool_of::<Constrained>("a"),
        tool_of::<Line>("b"),
        tool_of::<Node>("c"),
        tool_of::<Tree>("d"),
        tool_of::<Defaults24>("e"),
        tool_of::<Options16>("f"),
    ];
    let mut checked = 0;
    for tool in tools {
        assert_eq!(tool.input_schema["$schema"], json!("https://json-schema.org/draft/2020-12/schema"));
        jsonschema::meta::validate(&tool.input_schema).expect("plain schema is valid 2020-12");
        if let Ok(strict) = tool.strict() {
            jsonschema::meta::validate(&strict.input_schema).expect("strict schema is valid 2020-12");
            checked += 1;
        }
        checked += 1;
    }
    assert_eq!(checked, 10);
    // The meta-validator does reject a broken schema, so the checks above can fail.
    assert!(jsonschema::meta::validate(&json!({"type": "object", "minLength": "three"})).is_err());
}
