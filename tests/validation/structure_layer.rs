//! The syntax and structure layers through derived types and
//! `extract::validate`: codes, paths in JSON names, recoverability tags, every
//! violation of one output in one round, and hostile input (deep nesting,
//! 10 MB strings, out-of-range numbers) that must give a violation, never a
//! panic or a stack overflow.

use extract::{Extractable, Layer, Violation, Violations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Invoice {
    #[extract(recoverable = false)]
    invoice_number: String,
    status: Status,
    line_items: Vec<LineItem>,
    department: Option<String>,
    #[serde(rename = "total")]
    stated_total: f64,
    #[schemars(length(max = 64))]
    reference: String,
    shipping: Option<LineItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Paid,
    Unpaid,
    PartiallyPaid,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LineItem {
    description: String,
    amount: f64,
    #[extract(recoverable = false)]
    sku: String,
}

fn valid() -> Value {
    json!({
        "invoice_number": "INV-1",
        "status": "paid",
        "line_items": [
            {"description": "a", "amount": 1.0, "sku": "A1"},
            {"description": "b", "amount": 2.0, "sku": "B2"},
            {"description": "c", "amount": 3.0, "sku": "C3"}
        ],
        "department": "sales",
        "total": 6.0,
        "reference": "PO 7"
    })
}

fn with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut value = valid();
    edit(&mut value);
    value
}

/// What holds of every violation: `fields` starts with `path`, the message
/// is short and says something, the layer is the one expected.
fn assert_invariants(violations: &Violations, layer: Layer) {
    assert!(!violations.is_empty());
    for v in violations.iter() {
        assert_eq!(v.layer, layer, "{v}");
        assert_eq!(v.fields.first(), Some(&v.path), "{v:?}");
        assert!(!v.message.is_empty());
        assert!(
            v.message.len() < 200,
            "{} bytes: {}",
            v.message.len(),
            v.message.chars().take(200).collect::<String>()
        );
    }
}

/// Every violation of `value` as a `T` (it must fail at the structure layer).
fn fails<T: Extractable + std::fmt::Debug>(value: &Value) -> Violations {
    let violations = extract::validate::<T>(value, "").expect_err("the output must be rejected");
    assert_invariants(&violations, Layer::Structure);
    violations
}

/// The one violation of `value` as an `Invoice`.
fn only(value: &Value) -> Violation {
    let violations = fails::<Invoice>(value);
    assert_eq!(violations.len(), 1, "{violations}");
    violations.into_vec().remove(0)
}

#[test]
fn the_valid_output_is_valid() {
    let invoice = extract::validate::<Invoice>(&valid(), "").unwrap();
    assert_eq!(invoice.line_items.len(), 3);
    assert_eq!(invoice.stated_total, 6.0);
}

#[test]
fn wrong_type_at_the_root_and_at_an_indexed_path() {
    let v = only(&with(|v| v["total"] = json!("six")));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("total", "invalid_type"));
    assert_eq!(v.message, r#"expected a number, got a string "six""#);
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"][1]["amount"] = json!([2])));
    assert_eq!(v.path, "line_items[1].amount");
    assert_eq!(v.code, "invalid_type");
    assert_eq!(v.message, "expected a number, got an array of 1 item");
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"] = json!({"description": "a"})));
    assert_eq!(v.path, "line_items");
    assert_eq!(v.code, "invalid_type");
}

#[test]
fn a_missing_field_is_named_by_its_own_path() {
    let v = only(&with(|v| {
        v["line_items"][1].as_object_mut().unwrap().remove("amount");
    }));
    assert_eq!(v.path, "line_items[1].amount");
    assert_eq!(v.code, "missing_field");
    assert_eq!(v.fields, std::slice::from_ref(&v.path));
    assert!(v.recoverable);

    let v = only(&with(|v| {
        v.as_object_mut().unwrap().remove("total");
    }));
    assert_eq!(v.path, "total", "the JSON name, not the Rust name `stated_total`");
    assert_eq!(v.code, "missing_field");
    assert!(v.recoverable);
}

#[test]
fn null_on_a_required_field_is_missing_field() {
    let v = only(&with(|v| v["total"] = Value::Null));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("total", "missing_field"));
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"][2]["description"] = Value::Null));
    assert_eq!(v.path, "line_items[2].description");
    assert_eq!(v.code, "missing_field");
    assert!(v.recoverable);
}

#[test]
fn null_or_absence_on_an_option_is_valid() {
    for edit in [
        (|v: &mut Value| v["department"] = Value::Null) as fn(&mut Value),
        |v| {
            v.as_object_mut().unwrap().remove("department");
        },
        |v| v["shipping"] = Value::Null,
    ] {
        let output = with(edit);
        let invoice = extract::validate::<Invoice>(&output, "").unwrap_or_else(|e| panic!("{output}\n{e}"));
        assert!(invoice.department.is_none() || invoice.department.as_deref() == Some("sales"));
        assert!(invoice.shipping.is_none());
    }
    // But a present Option is still checked.
    let v = only(&with(|v| v["department"] = json!(7)));
    assert_eq!(v.path, "department");
    assert_eq!(v.code, "invalid_type");
}

#[test]
fn absence_of_a_field_tagged_not_recoverable_is_not_recoverable() {
    let v = only(&with(|v| {
        v.as_object_mut().unwrap().remove("invoice_number");
    }));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("invoice_number", "missing_field"));
    assert!(!v.recoverable);

    let v = only(&with(|v| v["invoice_number"] = Value::Null));
    assert_eq!(v.code, "missing_field");
    assert!(!v.recoverable, "null is absence too");

    // Inside a Vec element, at its indexed path.
    let v = only(&with(|v| {
        v["line_items"][2].as_object_mut().unwrap().remove("sku");
    }));
    assert_eq!(v.path, "line_items[2].sku");
    assert_eq!(v.code, "missing_field");
    assert!(!v.recoverable);
    let v = only(&with(|v| v["line_items"][0]["sku"] = Value::Null));
    assert_eq!(v.path, "line_items[0].sku");
    assert!(!v.recoverable);

    // Inside an Option of a tagged struct.
    let v = only(&with(|v| v["shipping"] = json!({"description": "post", "amount": 5.0})));
    assert_eq!(v.path, "shipping.sku");
    assert_eq!(v.code, "missing_field");
    assert!(!v.recoverable);

    // The tag governs absence only: a malformed value is a rendering error.
    let v = only(&with(|v| v["invoice_number"] = json!(42)));
    assert_eq!(v.code, "invalid_type");
    assert!(v.recoverable);
    let v = only(&with(|v| v["line_items"][1]["sku"] = json!(false)));
    assert_eq!(v.path, "line_items[1].sku");
    assert!(v.recoverable);
}

#[test]
fn an_unknown_field_under_deny_unknown_fields() {
    let v = only(&with(|v| v["vendor"] = json!("ACME")));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("vendor", "unknown_field"));
    assert!(v.message.starts_with(r#"field "vendor" is not allowed here"#), "{}", v.message);
    assert!(v.message.contains("invoice_number") && v.message.contains("total"), "{}", v.message);
    assert!(!v.message.contains("stated_total"), "JSON names only: {}", v.message);
    assert!(v.recoverable);

    let v = only(&with(|v| v["line_items"][1]["qty"] = json!(2)));
    assert_eq!(v.path, "line_items[1].qty");
    assert_eq!(v.code, "unknown_field");

    // The Rust name of a renamed field is unknown on the model's side: the
    // JSON name is missing and the Rust name is an unknown field.
    let all = fails::<Invoice>(&with(|v| {
        let total = v.as_object_mut().unwrap().remove("total").unwrap();
        v["stated_total"] = total;
    }));
    let mut found: Vec<(String, &str)> = all.iter().map(|v| (v.path.to_string(), v.code.as_str())).collect();
    found.sort();
    assert_eq!(
        found,
        [("stated_total".to_string(), "unknown_field"), ("total".to_string(), "missing_field")]
    );
}

#[test]
fn a_bad_enum_value_lists_the_allowed_ones() {
    let v = only(&with(|v| v["status"] = json!("Paid")));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("status", "invalid_value"));
    assert_eq!(v.message, r#""Paid" is not one of "paid", "unpaid", "partially_paid""#);
    assert!(v.recoverable);

    // A value of the wrong type is one mistake and gets one violation (the
    // schema's `type` and `enum` both fail on it), naming the allowed values.
    for (wrong, got) in
        [(json!(1), "1"), (json!(["paid"]), "an array of 1 item"), (json!(true), "the boolean true")]
    {
        let v = only(&with(|v| v["status"] = wrong.clone()));
        assert_eq!(v.path, "status");
        assert_eq!(v.code, "invalid_type");
        assert_eq!(v.message, format!(r#"expected "paid", "unpaid" or "partially_paid", got {got}"#));
        assert!(v.recoverable);
    }
}

#[test]
fn null_on_a_required_enum_field_is_only_missing_field() {
    let v = only(&with(|v| v["status"] = Value::Null));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("status", "missing_field"));
    assert_eq!(v.message, "required field is null; give a value");
    let v = only(&with(|v| {
        v.as_object_mut().unwrap().remove("status");
    }));
    assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("status", "missing_field"));
    // An Option of the enum takes null, and reports a wrong value once.
    assert!(extract::validate::<Tagged>(&json!({"status": null}), "").is_ok());
    let violations = fails::<Tagged>(&json!({"status": 1}));
    assert_eq!(violations.len(), 1, "{violations}");
    assert_eq!(violations[0].path, "status");
    // Inside a union branch (an Option of a struct), the same holds.
    for (wrong, code) in [(Value::Null, "missing_field"), (json!(2), "invalid_type")] {
        let violations = fails::<Tagged>(&json!({"status": "paid", "inner": {"status": wrong}}));
        assert_eq!(violations.len(), 1, "{violations}");
        assert_eq!(violations[0].path, "inner.status");
        assert_eq!(violations[0].code, code);
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Tagged {
    status: Option<Status>,
    inner: Option<Inner>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Inner {
    status: Status,
}

#[test]
fn five_independent_errors_give_exactly_five_violations() {
    let output = with(|v| {
        v["total"] = json!("a lot"); // wrong type
        v["status"] = json!("void"); // bad enum value
        v["line_items"][0].as_object_mut().unwrap().remove("amount"); // missing, indexed
        v["line_items"][2]["sku"] = Value::Null; // null on required, not recoverable
        v["vendor"] = json!("ACME"); // unknown
    });
    let violations = fails::<Invoice>(&output);
    let mut found: Vec<(String, &str)> =
        violations.iter().map(|v| (v.path.to_string(), v.code.as_str())).collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("line_items[0].amount".to_string(), "missing_field"),
            ("line_items[2].sku".to_string(), "missing_field"),
            ("status".to_string(), "invalid_value"),
            ("total".to_string(), "invalid_type"),
            ("vendor".to_string(), "unknown_field"),
        ],
        "{violations}"
    );
    assert!(!violations.all_recoverable());
    assert_eq!(violations.iter().filter(|v| !v.recoverable).count(), 1);

    // The feedback text: one line per violation, path first, no noise.
    let text = violations.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    for (line, v) in lines.iter().zip(violations.iter()) {
        let body = line.strip_prefix("- ").unwrap_or(line);
        assert!(body.starts_with(&format!("{}: ", v.path)), "{line:?}");
        assert!(body.ends_with(&v.message), "{line:?}");
    }
    for noise in ["http", "json-schema.org", "$defs", "#/", "\"invoice_number\":"] {
        assert!(!text.contains(noise), "{noise:?} in {text}");
    }
    assert!(text.len() < 600, "{text}");
}

#[test]
fn a_root_that_is_not_an_object_is_one_syntax_violation() {
    for root in [json!([valid()]), json!("{}"), json!(5), json!(true), Value::Null] {
        let violations = extract::validate::<Invoice>(&root, "").unwrap_err();
        assert_invariants(&violations, Layer::Syntax);
        assert_eq!(violations.len(), 1, "{violations}");
        let v = &violations[0];
        assert!(v.path.is_root());
        assert_eq!(v.code, "invalid_type");
        assert!(v.message.starts_with("the tool input must be a JSON object, not "), "{}", v.message);
        assert_eq!(violations.to_string().lines().count(), 1);
    }
}

/// `[[[...[1]...]]]` or `{"description": {"description": ...}}`, `depth`
/// levels, built iteratively.
fn deep(depth: usize, object: bool) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = if object { json!({ "description": value }) } else { json!([value]) };
    }
    value
}

/// Drops a value without recursion: serde_json's `Drop` for `Value` recurses
/// once per level, so a deep value is taken apart level by level instead.
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(mut node) = stack.pop() {
        match &mut node {
            Value::Array(items) => stack.append(items),
            Value::Object(fields) => stack.extend(std::mem::take(fields).into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Runs `f` on a thread with the default 2 MB stack: a stack overflow aborts
/// the whole test process, so it cannot pass by accident.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new().stack_size(2 * 1024 * 1024).spawn(f).unwrap().join().unwrap()
}

#[test]
fn a_value_a_thousand_levels_deep_is_a_violation_not_a_stack_overflow() {
    on_small_stack(|| {
        // Where a number belongs.
        let output = with(|v| v["total"] = deep(1000, false));
        let v = only(&output);
        assert_eq!((v.path.to_string().as_str(), v.code.as_str()), ("total", "invalid_type"));
        assert_eq!(v.message, "expected a number, got an array of 1 item");
        drop_flat(output);

        // Where an object (a line item) belongs.
        let output = with(|v| v["line_items"][1] = deep(1000, false));
        let v = only(&output);
        assert_eq!(v.path, "line_items[1]");
        assert_eq!(v.message, "expected an object, got an array of 1 item");
        drop_flat(output);

        // An object 1,000 deep where a line item belongs: its first level is judged.
        let output = with(|v| v["line_items"][0] = deep(1000, true));
        let violations = fails::<Invoice>(&output);
        let paths: Vec<String> = violations.iter().map(|v| v.path.to_string()).collect();
        assert!(paths.contains(&"line_items[0].description".to_string()), "{paths:?}");
        assert!(paths.contains(&"line_items[0].amount".to_string()), "{paths:?}");
        assert!(paths.contains(&"line_items[0].sku".to_string()), "{paths:?}");
        assert!(paths.iter().all(|p| p.len() < 100), "{paths:?}");
        drop_flat(output);

        // Where an Option of a struct belongs.
        let output = with(|v| v["shipping"] = deep(1000, true));
        let violations = fails::<Invoice>(&output);
        assert!(violations.iter().all(|v| v.path.to_string().starts_with("shipping")), "{violations}");
        drop_flat(output);

        // As the value of an unknown field, on a type that ignores unknown fields
        // (serde skips it by walking it).
        let output = json!({"amount": 1.0, "extra": deep(1000, false)});
        let open = extract::validate::<Open>(&output, "").unwrap();
        assert_eq!(open.amount, 1.0);
        drop_flat(output);
    });
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Open {
    amount: f64,
}

#[test]
fn a_ten_megabyte_string_is_quoted_by_a_short_prefix() {
    on_small_stack(|| {
        let huge = "7".repeat(10 * 1024 * 1024);
        // (JSON pointer, violation path, code, message start)
        let cases = [
            ("/total", "total", "invalid_type", r#"expected a number, got a string "7777"#),
            ("/reference", "reference", "invalid_value", "must be at most 64 characters long"),
            ("/status", "status", "invalid_value", r#""7777"#),
            ("/line_items/2/amount", "line_items[2].amount", "invalid_type", "expected a number"),
        ];
        for (pointer, path, code, start) in cases {
            let mut output = valid();
            *output.pointer_mut(pointer).unwrap() = json!(huge);
            let violations = fails::<Invoice>(&output);
            assert_eq!(
                violations.len(),
                1,
                "{}",
                &violations.to_string()[..300.min(violations.to_string().len())]
            );
            let v = &violations[0];
            assert_eq!(v.path, path);
            assert_eq!(v.code, code);
            assert!(v.message.starts_with(start), "{}", v.message);
            assert!(v.message.len() < 200, "{} bytes", v.message.len());
            assert!(violations.to_string().len() < 250);
        }
    });
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Counters {
    small: u8,
    signed: i64,
    unsigned: u64,
    rows: Vec<Row>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[allow(dead_code)]
struct Row {
    signed: i64,
}

fn counters(edit: impl FnOnce(&mut Value)) -> Value {
    let mut value = json!({"small": 1, "signed": -1, "unsigned": 1, "rows": [{"signed": 0}, {"signed": 0}]});
    edit(&mut value);
    value
}

#[test]
fn numbers_out_of_range_for_the_field_type_are_violations_with_a_path() {
    assert!(extract::validate::<Counters>(&counters(|_| {}), "").is_ok());
    let edges = [
        ("small", json!(256), "must be at most 255, got 256"),
        ("small", json!(-1), "must be at least 0, got -1"),
        ("small", json!(1.5), ""),
        ("signed", json!(9_223_372_036_854_775_808u64), "expected an integer from -9223372036854775808"),
        ("signed", json!(-1e19), "expected an integer from -9223372036854775808"),
        ("unsigned", json!(-1), "must be at least 0, got -1"),
        (
            "unsigned",
            json!(18_446_744_073_709_551_616.0),
            "expected an integer from 0 to 18446744073709551615",
        ),
        ("unsigned", json!(1e300), "expected an integer from 0 to 18446744073709551615"),
    ];
    for (field, number, message_start) in edges {
        let output = counters(|v| v[field] = number.clone());
        let violations = fails::<Counters>(&output);
        assert_eq!(violations.len(), 1, "{field} = {number}: {violations}");
        let v = &violations[0];
        assert_eq!(v.path, field, "{field} = {number}");
        assert!(v.code == "invalid_type" || v.code == "invalid_value", "{v:?}");
        assert!(v.message.starts_with(message_start), "{field} = {number}: {}", v.message);
        assert!(v.recoverable);
    }
    // serde's fallback keeps the indexed path.
    let output = counters(|v| v["rows"][1]["signed"] = json!(u64::MAX));
    let violations = fails::<Counters>(&output);
    assert_eq!(violations.len(), 1, "{violations}");
    assert_eq!(violations[0].path, "rows[1].signed");
    assert_eq!(violations[0].code, "invalid_type");
    assert_eq!(
        violations[0].message,
        "expected an integer from -9223372036854775808 to 9223372036854775807, got 18446744073709551615"
    );
}

#[test]
fn tagged_fields_admit_null_in_the_tool_schema_at_any_depth_while_the_validator_escalates_it() {
    let schema = Invoice::tool().input_schema;
    assert_eq!(schema["properties"]["invoice_number"]["type"], json!(["string", "null"]));
    // `LineItem` is reached through a `Vec` and through an `Option`: its one definition is patched.
    assert_eq!(schema["$defs"]["LineItem"]["properties"]["sku"]["type"], json!(["string", "null"]));
    assert_eq!(schema["$defs"]["LineItem"]["properties"]["description"]["type"], "string");
    assert_eq!(schema["properties"]["reference"]["type"], "string", "untagged fields are unchanged");
    // A model that answers null as the schema allows gets an escalation, not a retry.
    let v = only(&with(|v| v["line_items"][1]["sku"] = Value::Null));
    assert_eq!(
        (v.path.to_string().as_str(), v.code.as_str(), v.recoverable),
        ("line_items[1].sku", "missing_field", false)
    );
    assert!(v.message.contains("goes to a person instead of a retry"), "{}", v.message);
}
