use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[extract(recoverabel = false)]
    invoice_number: String,
}

fn main() {}
