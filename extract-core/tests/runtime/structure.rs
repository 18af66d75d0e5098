//! The structure layer against schemas in the exact shape schemars 1.x
//! produces, with hand-written `TypeInfo` (the derive is not used here).

use std::sync::OnceLock;

use extract_core::__private_v2::{FieldInfo, Shape, TypeInfo};
use extract_core::structure::{StructureValidator, serde_violation};
use extract_core::{Layer, Violation};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Invoice {
    /// Invoice number exactly as printed.
    #[schemars(regex(pattern = r"^INV-[0-9]+$"))]
    invoice_number: String,
    #[serde(rename = "issued")]
    issue_date: String,
    due_date: Option<String>,
    department: Option<String>,
    status: Status,
    prior_status: Option<Status>,
    line_items: Vec<LineItem>,
    shipping: Option<LineItem>,
    stated_total: f64,
    #[schemars(range(min = 0, max = 100))]
    discount_pct: Option<f64>,
    #[schemars(length(min = 1, max = 3), inner(length(max = 10)))]
    tags: Vec<String>,
    #[serde(default)]
    note: String,
    #[schemars(email)]
    contact: Option<String>,
    sequence: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LineItem {
    description: String,
    #[schemars(range(min = 0))]
    amount: f64,
    quantity: u8,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Paid,
    Unpaid,
}

const fn field(json_name: &'static str, required: bool, recoverable: bool) -> FieldInfo {
    FieldInfo::new(json_name, json_name, required, recoverable, &Shape::Leaf)
}

static LINE_ITEM: TypeInfo = TypeInfo::new(
    "LineItem",
    "line_item",
    "",
    &[
        field("description", true, true),
        // Tagged `recoverable = false`: an absent amount is absent from the source.
        field("amount", true, false),
        field("quantity", true, true),
    ],
);

static INVOICE: TypeInfo = TypeInfo::new(
    "Invoice",
    "invoice",
    "Record one invoice.",
    &[
        field("invoice_number", true, false),
        FieldInfo { rust_name: "issue_date", ..field("issued", true, true) },
        field("due_date", false, true),
        field("department", false, true),
        field("status", true, true),
        field("prior_status", false, true),
        FieldInfo { shape: &Shape::Seq(&Shape::Named(&LINE_ITEM)), ..field("line_items", true, true) },
        FieldInfo { shape: &Shape::Wrap(&Shape::Named(&LINE_ITEM)), ..field("shipping", false, true) },
        field("stated_total", true, true),
        field("discount_pct", false, true),
        field("tags", true, true),
        field("note", false, true),
        field("contact", false, true),
        field("sequence", true, true),
    ],
);

fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Invoice)).unwrap()
}

fn validator() -> &'static StructureValidator {
    static CELL: OnceLock<StructureValidator> = OnceLock::new();
    CELL.get_or_init(|| StructureValidator::new(&schema()))
}

fn valid() -> Value {
    json!({
        "invoice_number": "INV-001",
        "issued": "2024-01-31",
        "due_date": null,
        "status": "paid",
        "line_items": [
            {"description": "Widget", "amount": 100.0, "quantity": 2},
            {"description": "Gadget", "amount": 50.5, "quantity": 1}
        ],
        "stated_total": 150.5,
        "tags": ["a"],
        "sequence": 7
    })
}

/// `valid()` with `edit` applied to it.
fn with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut value = valid();
    edit(&mut value);
    value
}

/// The structure layer as `validate()` runs it: serde first; the schema pass
/// when serde fails (falling back on `serde_violation`) or when the schema
/// holds keywords serde does not enforce.
fn structure(value: &Value) -> Vec<Violation> {
    let validator = validator();
    match serde_path_to_error::deserialize::<_, Invoice>(value) {
        Ok(_) if validator.needs_schema_pass() => validator.violations(value, &INVOICE),
        Ok(_) => Vec::new(),
        Err(error) => {
            let found = validator.violations(value, &INVOICE);
            if found.is_empty() { vec![serde_violation(value, error, &INVOICE)] } else { found }
        }
    }
}

fn only(value: &Value) -> Violation {
    let found = structure(value);
    assert_eq!(found.len(), 1, "expected one violation, got {found:#?}");
    let violation = found.into_iter().next().unwrap();
    assert_eq!(violation.layer, Layer::Structure);
    assert_eq!(violation.fields, vec![violation.path.clone()]);
    violation
}

#[test]
fn a_valid_output_has_no_violations() {
    assert!(validator().compile_error().is_none());
    assert!(validator().needs_schema_pass(), "pattern, range and length are schema-only");
    assert_eq!(structure(&valid()), Vec::<Violation>::new());
    assert!(validator().violations(&valid(), &INVOICE).is_empty());
    jsonschema::meta::validate(&schema()).expect("the schema is valid JSON Schema 2020-12");
}

#[test]
fn wrong_type_names_expected_and_got() {
    let v = only(&with(|v| v["stated_total"] = json!("abc")));
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.path, "stated_total");
    assert_eq!(v.message, r#"expected a number, got a string "abc""#);
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"][0]["quantity"] = json!(1.5)));
    assert_eq!(v.path, "line_items[0].quantity");
    assert_eq!(v.message, "expected an integer, got 1.5");

    let v = only(&with(|v| v["department"] = json!(12)));
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.message, "expected a string or null, got 12");
}

#[test]
fn missing_required_field_takes_its_tag() {
    let v = only(&with(|v| {
        v.as_object_mut().unwrap().remove("invoice_number");
    }));
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.path, "invoice_number");
    assert_eq!(
        v.message,
        "required field is missing: the model gave no value, and a field tagged recoverable = false \
         goes to a person instead of a retry"
    );
    assert!(!v.recoverable, "invoice_number is tagged recoverable = false");

    let v = only(&with(|v| {
        v.as_object_mut().unwrap().remove("issued");
    }));
    assert_eq!(v.path, "issued", "the JSON name after serde's rename");
    assert!(v.recoverable);
}

#[test]
fn null_on_a_required_field_is_missing_field() {
    let v = only(&with(|v| v["stated_total"] = Value::Null));
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.path, "stated_total");
    assert_eq!(v.message, "required field is null; give a value");
    assert!(v.recoverable);

    let v = only(&with(|v| v["invoice_number"] = Value::Null));
    assert_eq!(v.code, "missing_field");
    assert!(!v.recoverable);

    let v = only(&with(|v| v["line_items"][1]["amount"] = Value::Null));
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.path, "line_items[1].amount");
    assert!(!v.recoverable);
}

#[test]
fn null_inside_an_array_is_a_type_error_not_a_missing_field() {
    let v = only(&with(|v| v["tags"] = json!(["a", null])));
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.path, "tags[1]");
    assert_eq!(v.message, "expected a string, got null");
}

#[test]
fn null_on_an_option_is_valid() {
    let value = with(|v| {
        for key in ["due_date", "department", "prior_status", "shipping", "discount_pct", "contact"] {
            v[key] = Value::Null;
        }
    });
    assert_eq!(structure(&value), Vec::<Violation>::new());
}

#[test]
fn an_option_of_a_struct_reports_the_inner_problem_not_the_null_branch() {
    let v = only(&with(|v| v["shipping"] = json!({"description": "Post", "quantity": 1})));
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.path, "shipping.amount");
    assert!(!v.recoverable, "the nested type's tag applies");

    let v = only(&with(|v| v["shipping"] = json!("by post")));
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.path, "shipping");
    assert_eq!(v.message, r#"expected an object or null, got a string "by post""#);
}

#[test]
fn unknown_field_lists_the_allowed_ones() {
    let v = only(&with(|v| v["foo"] = json!(1)));
    assert_eq!(v.code, "unknown_field");
    assert_eq!(v.path, "foo");
    assert!(
        v.message.starts_with(r#"field "foo" is not allowed here (allowed: invoice_number, issued, "#),
        "{}",
        v.message
    );
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"][1]["colour"] = json!("red")));
    assert_eq!(v.path, "line_items[1].colour");
    assert_eq!(v.message, r#"field "colour" is not allowed here (allowed: description, amount, quantity)"#);
}

#[test]
fn bad_enum_value_lists_the_allowed_values() {
    let v = only(&with(|v| v["status"] = json!("Purple")));
    assert_eq!(v.code, "invalid_value");
    assert_eq!(v.path, "status");
    assert_eq!(v.message, r#""Purple" is not one of "paid", "unpaid""#);

    // Through `Option<Status>` (anyOf [$ref, null]): one violation, no branch noise.
    let v = only(&with(|v| v["prior_status"] = json!("Purple")));
    assert_eq!(v.path, "prior_status");
    assert_eq!(v.message, r#""Purple" is not one of "paid", "unpaid""#);

    let v = only(&with(|v| v["prior_status"] = json!(3)));
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.message, r#"expected "paid", "unpaid" or null, got 3"#);
}

#[test]
fn a_missing_field_is_named_by_its_own_indexed_path() {
    let v = only(&with(|v| {
        v["line_items"][1].as_object_mut().unwrap().remove("amount");
    }));
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.path, "line_items[1].amount");
    assert_eq!(v.path.normalized(), "line_items[*].amount");
    assert!(!v.recoverable);

    let v = only(&with(|v| {
        v["line_items"][0].as_object_mut().unwrap().remove("description");
    }));
    assert_eq!(v.path, "line_items[0].description");
    assert!(v.recoverable);
}

#[test]
fn five_independent_errors_give_five_violations() {
    let value = with(|v| {
        v.as_object_mut().unwrap().remove("invoice_number");
        v["stated_total"] = json!("lots");
        v["status"] = json!("Purple");
        v["line_items"][1].as_object_mut().unwrap().remove("amount");
        v["surprise"] = json!(true);
    });
    let found = structure(&value);
    let mut summary: Vec<(String, String)> =
        found.iter().map(|v| (v.path.to_string(), v.code.to_string())).collect();
    summary.sort();
    assert_eq!(
        summary,
        vec![
            ("invoice_number".into(), "missing_field".into()),
            ("line_items[1].amount".into(), "missing_field".into()),
            ("stated_total".into(), "invalid_type".into()),
            ("status".into(), "invalid_value".into()),
            ("surprise".into(), "unknown_field".into()),
        ]
    );
}

#[test]
fn pattern_range_and_length_are_enforced_with_exact_messages() {
    let v = only(&with(|v| v["invoice_number"] = json!("X12")));
    assert_eq!(v.code, "invalid_value");
    assert_eq!(v.message, r#"must match pattern ^INV-[0-9]+$, got "X12""#);

    let v = only(&with(|v| v["line_items"][0]["amount"] = json!(-5)));
    assert_eq!(v.path, "line_items[0].amount");
    assert_eq!(v.message, "must be at least 0, got -5");

    let v = only(&with(|v| v["discount_pct"] = json!(150)));
    assert_eq!(v.path, "discount_pct");
    assert_eq!(v.message, "must be at most 100, got 150");

    let v = only(&with(|v| v["tags"] = json!([])));
    assert_eq!(v.message, "must have at least 1 item, got 0 items");

    let v = only(&with(|v| v["tags"] = json!(["a", "b", "c", "d"])));
    assert_eq!(v.message, "must have at most 3 items, got 4 items");

    let v = only(&with(|v| v["tags"] = json!(["a", "far too long a tag"])));
    assert_eq!(v.path, "tags[1]");
    assert_eq!(v.message, "must be at most 10 characters long, got 18 characters");

    let v = only(&with(|v| v["contact"] = json!("not an address")));
    assert_eq!(v.path, "contact");
    assert_eq!(v.message, r#"must be a valid email address, got "not an address""#);
    assert!(v.recoverable);
}

#[test]
fn u8_out_of_range_is_caught_by_the_schema_bound() {
    let v = only(&with(|v| v["line_items"][1]["quantity"] = json!(300)));
    assert_eq!(v.path, "line_items[1].quantity");
    assert_eq!(v.code, "invalid_value");
    assert_eq!(v.message, "must be at most 255, got 300");
}

#[test]
fn what_only_serde_rejects_still_gets_a_violation_with_a_path() {
    // schemars sets no upper bound for i64: 1e30 is an "integer" to the schema.
    let value = with(|v| v["sequence"] = json!(1e30));
    assert!(validator().violations(&value, &INVOICE).is_empty());
    let v = only(&value);
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.path, "sequence");
    assert_eq!(v.message, "expected an integer from -9223372036854775808 to 9223372036854775807, got 1e+30");
    assert!(v.recoverable);
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Counts {
    rows: Vec<Row>,
}
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Row {
    count: u8,
    kind: Status,
    label: String,
}

fn serde_only(value: &Value) -> Violation {
    let error = serde_path_to_error::deserialize::<_, Counts>(value).unwrap_err();
    serde_violation(value, error, &INVOICE)
}

#[test]
fn serde_violation_gives_u8_300_its_path_and_range() {
    let v = serde_only(
        &json!({"rows": [{"count": 1, "kind": "paid", "label": ""}, {"count": 300, "kind": "paid", "label": ""}]}),
    );
    assert_eq!(v.layer, Layer::Structure);
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.path, "rows[1].count");
    assert_eq!(v.message, "expected an integer from 0 to 255, got 300");
    assert!(v.recoverable);
}

#[test]
fn serde_violation_maps_every_kind_of_serde_error() {
    let v = serde_only(&json!({"rows": [{"count": 1, "kind": "paid"}]}));
    assert_eq!((v.code.as_str(), v.path.to_string()), ("missing_field", "rows[0].label".into()));
    assert_eq!(v.message, "required field is missing");

    let v = serde_only(&json!({"rows": [{"count": 1, "kind": "Purple", "label": ""}]}));
    assert_eq!((v.code.as_str(), v.path.to_string()), ("invalid_value", "rows[0].kind".into()));
    assert_eq!(v.message, r#""Purple" is not one of "paid", "unpaid""#);

    let v = serde_only(&json!({"rows": [{"count": null, "kind": "paid", "label": ""}]}));
    assert_eq!((v.code.as_str(), v.path.to_string()), ("missing_field", "rows[0].count".into()));
    assert_eq!(v.message, "required field is null; give a value");

    let huge = "x".repeat(10 * 1024 * 1024);
    let v = serde_only(&json!({"rows": [{"count": huge, "kind": "paid", "label": ""}]}));
    assert_eq!(v.path, "rows[0].count");
    assert!(v.message.len() < 200, "message quotes only a prefix: {} bytes", v.message.len());
    assert!(
        v.message.starts_with(r#"expected an integer from 0 to 255, got a string "xxxx"#),
        "{}",
        v.message
    );
}

#[test]
fn serde_violation_reports_unknown_fields_at_their_own_path() {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: u8,
        b: u8,
    }
    let value = json!({"a": 1, "b": 2, "zzz": 3});
    let error = serde_path_to_error::deserialize::<_, Strict>(&value).unwrap_err();
    let v = serde_violation(&value, error, &INVOICE);
    assert_eq!(v.code, "unknown_field");
    assert_eq!(v.path, "zzz");
    assert_eq!(v.message, r#"field "zzz" is not allowed here (allowed: a, b)"#);
}

/// A value nested `depth` levels: `[[[...[1]...]]]` or `{"a":{"a":...}}`.
fn deep(depth: usize, object: bool) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = if object { json!({ "description": value }) } else { json!([value]) };
    }
    value
}

#[test]
fn a_root_that_is_not_an_object_is_one_violation_at_the_root() {
    for (root, got) in [
        (json!([1, 2]), "an array of 2 items"),
        (json!("text"), r#"a string "text""#),
        (json!(5), "5"),
        (Value::Null, "null"),
    ] {
        let v = only(&root);
        assert!(v.path.is_root());
        assert_eq!(v.code, "invalid_type");
        assert_eq!(v.message, format!("expected an object, got {got}"));
    }
}

#[test]
fn a_thousand_levels_deep_where_a_number_or_an_object_belongs() {
    let v = only(&with(|v| v["stated_total"] = deep(1000, false)));
    assert_eq!(v.path, "stated_total");
    assert_eq!(v.message, "expected a number, got an array of 1 item");

    let v = only(&with(|v| v["line_items"][0] = deep(1000, false)));
    assert_eq!(v.path, "line_items[0]");
    assert_eq!(v.message, "expected an object, got an array of 1 item");

    // An object 1,000 deep where a line item belongs: the first level is judged.
    let found = structure(&with(|v| v["shipping"] = deep(1000, true)));
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert!(paths.contains(&"shipping.description".to_string()), "{paths:?}");
    assert!(paths.contains(&"shipping.amount".to_string()), "{paths:?}");
    assert!(found.iter().all(|v| v.message.len() < 200));
}

#[test]
fn a_ten_megabyte_string_is_quoted_by_a_short_prefix() {
    let huge = "9".repeat(10 * 1024 * 1024);
    for (key, expected_start) in [
        ("stated_total", r#"expected a number, got a string "9999"#),
        ("invoice_number", r#"must match pattern ^INV-[0-9]+$, got "9999"#),
    ] {
        let v = only(&with(|v| v[key] = json!(huge)));
        assert_eq!(v.path, key);
        assert!(v.message.starts_with(expected_start), "{}", &v.message[..100.min(v.message.len())]);
        assert!(v.message.len() < 200, "{} bytes", v.message.len());
        assert!(v.message.contains("10485760 characters"), "{}", v.message);
    }
    let v = only(&with(|v| v[huge.as_str()] = json!(1)));
    assert_eq!(v.code, "unknown_field");
    assert!(v.message.len() < 400, "{} bytes", v.message.len());
}

/// Every field of a valid output replaced by each of a set of odd values, or
/// removed: whenever serde rejects, the structure layer reports at least one
/// violation; whenever the schema pass finds nothing and serde accepts, the
/// output is valid; no violation is ever at the root of an object.
#[test]
fn serde_and_schema_never_disagree_silently() {
    let replacements = [
        Value::Null,
        json!("x"),
        json!(1.5),
        json!(-1),
        json!(300),
        json!(1e30),
        json!([]),
        json!({}),
        json!(true),
    ];
    let mut paths: Vec<Vec<Value>> = Vec::new();
    for key in valid().as_object().unwrap().keys() {
        paths.push(vec![json!(key)]);
    }
    for key in ["description", "amount", "quantity"] {
        paths.push(vec![json!("line_items"), json!(1), json!(key)]);
    }
    let mut cases = 0;
    for path in &paths {
        let mut candidates: Vec<Value> = replacements
            .iter()
            .map(|r| {
                with(|v| {
                    let mut node = v;
                    for step in &path[..path.len() - 1] {
                        node = if let Some(i) = step.as_u64() {
                            &mut node[i as usize]
                        } else {
                            &mut node[step.as_str().unwrap()]
                        };
                    }
                    node[path.last().unwrap().as_str().unwrap()] = r.clone();
                })
            })
            .collect();
        candidates.push(with(|v| {
            let mut node = v;
            for step in &path[..path.len() - 1] {
                node = if let Some(i) = step.as_u64() {
                    &mut node[i as usize]
                } else {
                    &mut node[step.as_str().unwrap()]
                };
            }
            node.as_object_mut().unwrap().remove(path.last().unwrap().as_str().unwrap());
        }));
        for candidate in candidates {
            cases += 1;
            let serde_ok = serde_json::from_value::<Invoice>(candidate.clone()).is_ok();
            let found = structure(&candidate);
            if !serde_ok {
                assert!(!found.is_empty(), "serde rejects but no violation: {candidate}");
            }
            assert!(found.iter().all(|v| !v.path.is_root()), "{found:#?}");
            assert!(found.iter().all(|v| !v.message.is_empty() && v.message.len() < 300));
        }
    }
    assert!(cases > 100);
}
