use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[serde(rename(serialize = "total", deserialize = "stated"))]
    stated_total: f64,
}

fn main() {}
