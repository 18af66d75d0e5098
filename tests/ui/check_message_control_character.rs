use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(total >= 0, message = "negative\u{3}total")]
struct Invoice {
    total: f64,
}

fn main() {}
