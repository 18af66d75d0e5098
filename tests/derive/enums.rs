//! Enums, newtypes and tuple structs: a variant's checks run at the path
//! its serde representation gives it (externally tagged
//! `payment.card.last4`, adjacently tagged `payment.c.last4`, internally
//! tagged `payment.last4`), a tagged field sent as `null` inside a variant
//! escalates, values nested in a variant are walked, a newtype's `with`
//! check runs, and the tool lists every variant's checks.

use extract::{Extractable, Layer, Violations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(amount > 0)]
struct Line {
    label: String,
    amount: f64,
}

/// Externally tagged (serde's default), variants renamed.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Payment {
    #[check(len(last4) == 4, message = "a card number ends in 4 digits")]
    Card {
        #[extract(recoverable = false)]
        last4: String,
        lines: Vec<Line>,
    },
    BankTransfer(Line),
    #[serde(rename = "gift_voucher")]
    #[check(len(code) >= 6)]
    Voucher {
        code: String,
    },
    Cash,
}

/// Adjacently tagged: the content under `c`.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "t", content = "c", rename_all = "snake_case")]
enum Adjacent {
    #[check(len(last4) == 4)]
    Card {
        #[extract(recoverable = false)]
        last4: String,
        lines: Vec<Line>,
    },
    Cash,
}

/// Internally tagged: the fields beside the tag.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Internal {
    #[check(len(last4) == 4)]
    #[serde(rename_all = "camelCase")]
    Card {
        #[extract(recoverable = false)]
        last4: String,
        line_items: Vec<Line>,
    },
    Cash {},
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Receipt {
    payment: Payment,
    adjacent: Adjacent,
    internal: Internal,
}

fn valid() -> Value {
    json!({
        "payment": {"card": {"last4": "1234", "lines": [{"label": "Lunch", "amount": 12.5}]}},
        "adjacent": {"t": "card", "c": {"last4": "1234", "lines": [{"label": "Lunch", "amount": 12.5}]}},
        "internal": {"kind": "card", "last4": "1234", "lineItems": [{"label": "Lunch", "amount": 12.5}]},
    })
}

fn violations(output: &Value) -> Violations {
    extract::validate::<Receipt>(output, "").expect_err("the output breaks a rule")
}

#[test]
fn a_valid_output_of_every_representation_validates() {
    extract::validate::<Receipt>(&valid(), "").expect("valid");
    let mut cash = valid();
    cash["payment"] = json!("cash");
    cash["adjacent"] = json!({"t": "cash"});
    cash["internal"] = json!({"kind": "cash"});
    extract::validate::<Receipt>(&cash, "").expect("unit variants are valid");
}

#[test]
fn a_failing_check_inside_a_variant_is_at_the_path_of_its_representation() {
    let mut output = valid();
    output["payment"]["card"]["last4"] = json!("12");
    output["adjacent"]["c"]["last4"] = json!("12");
    output["internal"]["last4"] = json!("12");
    let found = violations(&output);
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(paths, ["payment.card.last4", "adjacent.c.last4", "internal.last4"], "{found}");
    assert!(found.iter().all(|v| v.layer == Layer::Semantic && v.code == "check_failed" && v.recoverable));
    assert_eq!(found[0].message, "a card number ends in 4 digits");
    assert_eq!(found[1].message, "check failed: len(last4) == 4: len(last4) = 2");
}

#[test]
fn nested_values_inside_a_variant_are_walked() {
    let mut output = valid();
    output["payment"]["card"]["lines"][0]["amount"] = json!(-1.0);
    output["adjacent"]["c"]["lines"] = json!([{"label": "a", "amount": 1.0}, {"label": "b", "amount": -2.0}]);
    output["internal"]["lineItems"][0]["amount"] = json!(0.0);
    let found = violations(&output);
    let paths: Vec<String> = found.iter().map(|v| v.path.to_string()).collect();
    assert_eq!(
        paths,
        ["payment.card.lines[0].amount", "adjacent.c.lines[1].amount", "internal.lineItems[0].amount"],
        "{found}"
    );
}

#[test]
fn a_newtype_variant_walks_its_value_under_the_tag() {
    let mut output = valid();
    output["payment"] = json!({"bank_transfer": {"label": "Rent", "amount": -5.0}});
    let found = violations(&output);
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!(found[0].path, "payment.bank_transfer.amount");
}

#[test]
fn a_renamed_variant_is_at_its_json_name() {
    let mut output = valid();
    output["payment"] = json!({"gift_voucher": {"code": "AB"}});
    let found = violations(&output);
    assert_eq!(found[0].path, "payment.gift_voucher.code", "{found}");
    assert!(Receipt::tool().description.contains("- in `payment.gift_voucher`: len(code) >= 6"));
}

#[test]
fn a_tagged_null_inside_a_variant_escalates_in_every_representation() {
    for (pointer, path) in [
        ("/payment/card/last4", "payment.card.last4"),
        ("/adjacent/c/last4", "adjacent.c.last4"),
        ("/internal/last4", "internal.last4"),
    ] {
        let mut output = valid();
        *output.pointer_mut(pointer).unwrap() = Value::Null;
        let found = violations(&output);
        assert_eq!(found.len(), 1, "{pointer}: {found}");
        assert_eq!(
            (found[0].layer, found[0].code.to_string()),
            (Layer::Structure, "missing_field".to_string())
        );
        assert_eq!(found[0].path, path);
        assert!(!found[0].recoverable, "{pointer}: a tagged field inside a variant escalates: {found}");

        // Left out rather than null: the same.
        let mut output = valid();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        output.pointer_mut(parent).unwrap().as_object_mut().unwrap().remove(key);
        let found = violations(&output);
        assert_eq!(found[0].path, path, "{found}");
        assert!(!found[0].recoverable, "{pointer}: {found}");
    }
}

#[test]
fn the_tool_lists_each_variants_checks_where_they_apply() {
    let description = Receipt::tool().description;
    for line in [
        "- in `payment.card`: len(last4) == 4",
        "- in `adjacent.c` when `t` is \"card\": len(last4) == 4",
        "- in `internal` when `kind` is \"card\": len(last4) == 4",
    ] {
        assert!(description.contains(line), "{line:?} missing from:\n{description}");
    }
    // `amount > 0` bounds one number: the schema states it where each
    // variant's amount is, and the list leaves it out.
    assert!(!description.contains("amount > 0"), "{description}");
    let schema = Receipt::tool().input_schema;
    assert_eq!(schema["$defs"]["Line"]["properties"]["amount"]["exclusiveMinimum"], json!(0), "{schema}");
}

#[test]
fn the_tool_admits_null_for_a_tagged_field_inside_each_variant() {
    let tool = Receipt::tool();
    let text = serde_json::to_string(&tool.input_schema).unwrap();
    assert_eq!(text.matches("Null if not stated.").count(), 3, "{text}");
}

/// Internally tagged: its JSON is always an object, so it can be extracted
/// on its own.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Party {
    Person { name: String },
    Company { name: String, vat_id: Option<String> },
}

#[test]
fn an_internally_tagged_enum_can_be_the_top_level_type() {
    let tool = Party::tool();
    assert_eq!(tool.input_schema["type"], "object", "{:#}", tool.input_schema);
    let party = extract::validate::<Party>(&json!({"kind": "person", "name": "Ada"}), "").unwrap();
    assert!(matches!(party, Party::Person { ref name } if name == "Ada"));
    let found = extract::validate::<Party>(&json!({"kind": "robot", "name": "R2"}), "").unwrap_err();
    assert_eq!(
        (found[0].path.to_string(), found[0].code.to_string()),
        ("kind".into(), "invalid_value".into())
    );

    let strict = tool.strict().expect("an internally tagged enum is strict-compatible");
    let branches = strict.input_schema["anyOf"].as_array().expect("oneOf became anyOf");
    assert_eq!(branches.len(), 2);
    for branch in branches {
        assert_eq!(branch["additionalProperties"], false, "{branch:#}");
    }
}

/// Every `oneOf` of the tool becomes an `anyOf` in the strict copy, and
/// every object in it, variants included, denies unknown properties.
#[test]
fn the_strict_tool_of_a_type_with_enums_turns_every_one_of_into_any_of() {
    let strict = Receipt::tool().strict().expect("strict-compatible");
    let text = strict.input_schema.to_string();
    assert!(!text.contains("oneOf"), "{text}");
    assert!(text.contains("anyOf"), "{text}");
    fn objects_deny_extra(schema: &Value) {
        match schema {
            Value::Object(map) => {
                if map.get("type") == Some(&json!("object")) {
                    assert_eq!(map.get("additionalProperties"), Some(&json!(false)), "{schema:#}");
                }
                map.values().for_each(objects_deny_extra);
            }
            Value::Array(items) => items.iter().for_each(objects_deny_extra),
            _ => {}
        }
    }
    objects_deny_extra(&strict.input_schema);
}

/// A variant whose keys are free (a map) cannot be strict: the error names it.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tally {
    ByLabel { counts: std::collections::BTreeMap<String, u32> },
    Total { count: u32 },
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Survey {
    tally: Tally,
}

#[test]
fn the_strict_tool_of_an_enum_strict_tools_cannot_take_is_refused_naming_why() {
    let error = Survey::tool().strict().expect_err("a map inside a variant cannot be strict").to_string();
    assert!(error.contains("counts"), "{error}");
}

/// `rename_all_fields` renames every struct variant's fields; a `with`
/// function on a struct variant takes the enum; a `Sourced` value inside a
/// variant has its quote checked at its path.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", rename_all_fields = "camelCase")]
enum Signatory {
    #[check(with = signed_after_birth)]
    NaturalPerson {
        full_name: extract::Sourced<String>,
        born_year: u32,
        signed_year: u32,
    },
    LegalEntity {
        registered_name: String,
    },
}

fn signed_after_birth(signatory: &Signatory) -> Result<(), String> {
    match signatory {
        Signatory::NaturalPerson { born_year, signed_year, .. } if signed_year < born_year => {
            Err(format!("signed in {signed_year}, before being born in {born_year}"))
        }
        _ => Ok(()),
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Contract {
    signatories: Vec<Signatory>,
}

#[test]
fn renamed_fields_with_functions_and_quotes_inside_variants() {
    let document = "Signed by Ada Lovelace.";
    let person = |name: &str, quote: &str, signed: u32| json!({"type": "NATURAL_PERSON", "fullName": {"value": name, "quote": quote}, "bornYear": 1815, "signedYear": signed});
    let valid = json!({"signatories": [person("Ada Lovelace", "Ada Lovelace", 1840), {"type": "LEGAL_ENTITY", "registeredName": "X"}]});
    extract::validate::<Contract>(&valid, document).expect("valid");

    let output = json!({"signatories": [{"type": "LEGAL_ENTITY", "registeredName": "X"}, person("Ada Lovelace", "Charles Babbage", 1800)]});
    let found = extract::validate::<Contract>(&output, document).unwrap_err();
    let seen: Vec<(String, String)> =
        found.iter().map(|v| (v.path.to_string(), v.code.to_string())).collect();
    assert_eq!(
        seen,
        [
            ("signatories[1]".to_string(), "check_failed".to_string()),
            ("signatories[1].fullName.quote".to_string(), "quote_not_found".to_string()),
        ],
        "{found}"
    );
    assert!(found[0].message.contains("signed in 1800, before being born in 1815"), "{found}");
    assert!(
        Contract::tool().description.contains(
            "- in each `signatories` when `type` is \"NATURAL_PERSON\": passes `signed_after_birth`"
        ),
        "{}",
        Contract::tool().description
    );
}

/// The exact tools, plain and strict, of a type holding an enum of each
/// representation: reviewed by hand.
#[test]
fn tool_snapshots_of_a_type_with_enums() {
    let pretty = |tool: &extract::Tool| serde_json::to_string_pretty(tool).unwrap();
    insta::assert_snapshot!("receipt_tool_plain", pretty(&Receipt::tool()));
    insta::assert_snapshot!("receipt_tool_strict", pretty(&Receipt::tool().strict().unwrap()));
}
