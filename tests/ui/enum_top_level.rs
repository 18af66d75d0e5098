use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

// A unit-only enum derives (it can be a field), but its JSON is a string:
// it cannot be the top-level type of an extraction.
#[derive(Deserialize, JsonSchema, Extractable)]
enum Status {
    Paid,
    Unpaid,
}

// An externally tagged enum's unit variants are strings too.
#[derive(Deserialize, JsonSchema, Extractable)]
enum Payment {
    Card { last4: String },
    Cash,
}

fn main() {
    let _ = Status::tool();
    let _ = extract::validate::<Payment>(&serde_json::json!({}), "");
}
