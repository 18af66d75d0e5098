use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(sum(items.label) >= 0)]
struct Invoice {
    items: Vec<Item>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Item {
    label: String,
}

fn main() {}
