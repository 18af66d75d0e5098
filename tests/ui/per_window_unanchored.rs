use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Line {
    text: String,
    amount: f64,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Statement {
    #[extract(per_window)]
    lines: Vec<Line>,
}

fn main() {}
