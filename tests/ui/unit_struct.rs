use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Nothing;

fn main() {}

#[derive(Deserialize, JsonSchema, Extractable)]
enum Never {}
