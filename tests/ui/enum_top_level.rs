use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
enum Status {
    Paid,
    Unpaid,
}

fn main() {}
