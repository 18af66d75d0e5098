use extract::{Extractable, Sourced};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Line {
    text: Sourced<String>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct NotAList {
    #[extract(per_window)]
    lines: Option<Vec<Line>>,
    #[extract(per_window = true)]
    more: Vec<Line>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Page {
    Lines {
        #[extract(per_window)]
        lines: Vec<Line>,
    },
}

#[derive(Deserialize, JsonSchema, Extractable)]
#[extract(per_window)]
struct OnTheStruct {
    lines: Vec<Line>,
}

fn main() {}
