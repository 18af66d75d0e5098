use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[extract(name = "record invoice!")]
struct Invoice {
    invoice_number: String,
}

fn main() {}
