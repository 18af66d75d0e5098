use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(net + tax == gross)]
struct Invoice {
    net: f64,
    tax: f64,
    gross: rust_decimal::Decimal,
}

fn main() {}
