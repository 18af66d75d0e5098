use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(qty >= 0)]
struct Part {
    qty: i64,
}

/// A generic container the semantic walk does not know.
#[derive(Deserialize, JsonSchema)]
struct Bag<T> {
    items: Vec<T>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Order {
    // Fine: nothing inside can have checks.
    labels: Bag<String>,
    // An error: `Part`'s check would never run.
    parts: Bag<Part>,
}

fn main() {}
