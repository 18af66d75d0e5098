use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(items.amount >= 0)]
struct Invoice {
    items: Vec<Item>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Item {
    amount: f64,
}

fn main() {}
