use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[serde(rename = "stated\u{1}total")]
    stated_total: f64,
}

fn main() {}
