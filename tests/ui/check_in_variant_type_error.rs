use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

// A type error in a struct variant's check lands on the user's operator.
#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Payment {
    #[check(amount == "12")]
    Card { last4: String, amount: f64 },
    Cash,
}

fn main() {}
