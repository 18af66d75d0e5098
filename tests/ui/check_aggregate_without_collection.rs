use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(sum(total) >= 0)]
struct Invoice {
    total: f64,
}

fn main() {}
