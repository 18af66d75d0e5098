use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(stated_totl >= 0)]
struct Invoice {
    stated_total: f64,
}

fn main() {}
