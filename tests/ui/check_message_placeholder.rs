use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(total >= 0, message = "total {totl} is negative")]
struct Invoice {
    total: f64,
}

fn main() {}
