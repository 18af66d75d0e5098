use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

// A struct variant's checks get the same errors as a struct's, at the
// user's tokens: an unknown field with a suggestion (and, in
// `check_in_variant_type_error.rs`, a type error).
#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Payment {
    #[check(last_four == 4)]
    Card { last4: String, amount: f64 },
    Cash,
}

fn main() {}
