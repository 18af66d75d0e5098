use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(total == name)]
struct Invoice {
    name: String,
    total: f64,
}

fn main() {}
