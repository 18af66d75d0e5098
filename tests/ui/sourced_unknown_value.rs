use extract::{Extractable, Sourced};
use schemars::JsonSchema;
use serde::Deserialize;

/// Plain data the walk has not been told about.
#[derive(Deserialize, JsonSchema)]
enum Currency {
    Eur,
    Usd,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Payment {
    // An error: the walk must know what sits inside a `Sourced`
    // (`extract::leaf!(Currency)` says it holds no checks).
    currency: Sourced<Currency>,
}

fn main() {}
