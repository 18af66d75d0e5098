use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(vendor.items.amount >= 0)]
struct Invoice {
    vendor: Vendor,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Vendor {
    items: Vec<Item>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Item {
    amount: f64,
}

fn main() {}
