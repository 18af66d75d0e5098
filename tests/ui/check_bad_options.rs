use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(total >= 0, tolerence = 0.01)]
#[check(total >= 0, code = "a", code = "b")]
#[check(total >= 0, recoverable = "no")]
#[check(total >= 0, code = "Not Snake")]
struct Invoice {
    total: f64,
}

fn main() {}
