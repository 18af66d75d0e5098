use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Invoice {
    #[schemars(extend("x-unit" = "EUR"))]
    total: f64,
    #[schemars(transform = drop_required)]
    note: String,
}

fn drop_required(_: &mut schemars::Schema) {}

fn main() {}
