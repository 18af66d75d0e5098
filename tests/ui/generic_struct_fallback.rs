use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
struct Wrapper<T> {
    value: T,
}

// The failed derive still implements the trait for the generic type: using
// it adds no error of its own, so the user sees the one that matters.
fn uses(_: impl Extractable) {}
fn also(w: Wrapper<f64>) {
    uses(w)
}

fn main() {}
