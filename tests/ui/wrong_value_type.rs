use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[extract(recoverable = "no")]
    invoice_number: String,
}

fn main() {}
