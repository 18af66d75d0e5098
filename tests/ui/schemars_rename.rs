use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[schemars(rename = "total")]
    stated_total: f64,
}

fn main() {}
