use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_invoice", name = "other")]
struct Invoice {
    invoice_number: String,
}

fn main() {}
