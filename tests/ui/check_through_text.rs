use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(note.len > 0)]
struct Memo {
    note: String,
}

fn main() {}
