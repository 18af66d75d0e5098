// Under an internal tag, serde writes the tag among a newtype variant's
// content's keys: content that is not always a JSON object fails for every
// value, so it is a compile error at the variant's type.
use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(with = valid_iban)]
struct Iban(String);

fn valid_iban(_: &Iban) -> Result<(), String> {
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Currency {
    Eur,
    Usd,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Card {
    last4: String,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Payment {
    Card(Card),
    Transfer(Iban),
    Note(String),
    Amount(f64),
    Lines(Vec<String>),
    Currency(Currency),
    Cash,
}

fn main() {}
