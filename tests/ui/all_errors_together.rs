use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[extract(nme = "x")]
#[check(totl >= 0)]
struct Invoice {
    #[extract(recoverable = false)]
    department: Option<String>,
    total: f64,
}

// The failed derive still implements the trait: using it adds no error.
fn uses(_: impl Extractable) {}
fn also(i: Invoice) {
    uses(i)
}

fn main() {}
