use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(sum(vendor.total) >= 0)]
struct Invoice {
    vendor: Vendor,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Vendor {
    total: f64,
}

fn main() {}
