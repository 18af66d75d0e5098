use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(untagged)]
enum Amount {
    Number(f64),
    Text(String),
}

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Category {
    Food,
    #[serde(other)]
    Other,
}

fn main() {}
