//! Newtypes and tuple structs: a `#[check(with = function)]` on one runs
//! wherever its value sits (a newtype at its field's own path, since its
//! JSON is its value's; a tuple struct's elements at `[index]`), values
//! nested inside are walked, and the tool lists their checks.

use std::fmt;

use extract::{Extractable, Layer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// An IBAN: two letters, two check digits, up to 30 letters or digits.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(with = iban_is_well_formed)]
struct Iban(String);

fn iban_is_well_formed(iban: &Iban) -> Result<(), String> {
    let text = iban.0.replace(' ', "");
    let shaped = text.len() >= 15
        && text.len() <= 34
        && text[..2].chars().all(|c| c.is_ascii_uppercase())
        && text[2..4].chars().all(|c| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_alphanumeric());
    if shaped {
        Ok(())
    } else {
        Err(format!("{:?} is not an IBAN (two letters, two digits, then letters or digits)", iban.0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
enum Currency {
    #[serde(rename = "EUR")]
    Eur,
    #[serde(rename = "GBP")]
    Gbp,
}

/// An amount and its currency, as the pair `[12.5, "EUR"]`.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(with = money_is_positive, code = "negative_money")]
struct Money(f64, Currency);

#[derive(Debug)]
struct Negative(f64);

impl fmt::Display for Negative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an amount of money is never negative, got {}", self.0)
    }
}

fn money_is_positive(money: &Money) -> Result<(), Negative> {
    if money.0 >= 0.0 { Ok(()) } else { Err(Negative(money.0)) }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(quantity > 0)]
struct Line {
    quantity: u32,
}

/// A newtype of a collection of derived values: walked through.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Lines(Vec<Line>);

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Transfer {
    #[extract(recoverable = false)]
    iban: Iban,
    amounts: Vec<Money>,
    lines: Lines,
}

fn valid() -> serde_json::Value {
    json!({"iban": "DE44500105175407324931", "amounts": [[12.5, "EUR"]], "lines": [{"quantity": 1}]})
}

#[test]
fn a_valid_transfer_validates() {
    let transfer = extract::validate::<Transfer>(&valid(), "").expect("valid");
    assert_eq!(transfer.amounts[0].1, Currency::Eur);
}

#[test]
fn a_newtypes_with_check_fails_at_the_field_that_holds_it() {
    let mut output = valid();
    output["iban"] = json!("not an iban");
    let found = extract::validate::<Transfer>(&output, "").unwrap_err();
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!((found[0].layer, found[0].path.to_string()), (Layer::Semantic, "iban".to_string()));
    assert_eq!(
        found[0].message,
        "check `iban_is_well_formed` failed: \"not an iban\" is not an IBAN (two letters, two digits, then letters or digits)"
    );
}

#[test]
fn a_tuple_structs_with_check_fails_at_its_index_with_its_code() {
    let mut output = valid();
    output["amounts"] = json!([[1.0, "GBP"], [-3.0, "EUR"]]);
    let found = extract::validate::<Transfer>(&output, "").unwrap_err();
    assert_eq!(found.len(), 1, "{found}");
    assert_eq!(
        (found[0].path.to_string(), found[0].code.to_string()),
        ("amounts[1]".into(), "negative_money".into())
    );
    assert!(found[0].message.ends_with("an amount of money is never negative, got -3"), "{found}");
}

#[test]
fn values_inside_a_newtype_are_walked_at_the_newtypes_path() {
    let mut output = valid();
    output["lines"] = json!([{"quantity": 1}, {"quantity": 0}]);
    let found = extract::validate::<Transfer>(&output, "").unwrap_err();
    assert_eq!(found[0].path, "lines[1].quantity", "{found}");
}

#[test]
fn a_tagged_newtype_field_sent_as_null_escalates() {
    let mut output = valid();
    output["iban"] = json!(null);
    let found = extract::validate::<Transfer>(&output, "").unwrap_err();
    assert_eq!((found[0].code.to_string(), found[0].recoverable), ("missing_field".into(), false), "{found}");
}

#[test]
fn the_tool_lists_newtype_checks_where_they_apply() {
    let description = Transfer::tool().description;
    for line in
        ["- in `iban`: passes `iban_is_well_formed`", "- in each `amounts`: passes `money_is_positive`"]
    {
        assert!(description.contains(line), "{line:?} missing from:\n{description}");
    }
    // A bound on one number is the number's keyword instead.
    assert!(!description.contains("quantity > 0"), "{description}");
    assert!(Transfer::tool().input_schema.to_string().contains(r#""exclusiveMinimum":0"#));
}
