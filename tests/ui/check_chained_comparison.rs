use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(0 < total < 10)]
struct Invoice {
    total: f64,
}

fn main() {}
