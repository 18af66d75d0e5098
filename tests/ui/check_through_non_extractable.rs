use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Vendor {
    name: String,
}

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(vendor.name != "")]
struct Invoice {
    vendor: Vendor,
}

fn main() {}
