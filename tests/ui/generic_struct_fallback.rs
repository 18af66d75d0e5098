use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(sum(items.amount) > 0)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Line {
    amount: f64,
}

// The failed derive still implements the trait for the generic type: using
// it adds no error of its own, so the user sees the one that matters.
fn uses(_: impl Extractable) {}
fn also(page: Page<Line>) {
    uses(page)
}

fn main() {}
