// `Extractable` needs `JsonSchema` (the tool definition is its schema): the
// error is at the derive and names the missing trait, before any call
// extracts the type.
use extract::Extractable;
use serde::Deserialize;

#[derive(Debug, Deserialize, Extractable)]
struct Invoice {
    total: f64,
}

fn main() {}
