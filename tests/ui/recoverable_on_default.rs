use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[serde(default)]
    #[extract(recoverable = false)]
    notes: Vec<String>,
}

fn main() {}
