use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Outer {
    #[serde(flatten)]
    inner: Inner,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Inner {
    a: String,
}

fn main() {}
