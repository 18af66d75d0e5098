use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[extract(recoverable = false)]
    department: Option<String>,
}

fn main() {}
