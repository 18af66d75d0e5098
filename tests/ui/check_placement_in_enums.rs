use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(amount > 0)]
enum Payment {
    #[check(amount > 0)]
    Card { amount: f64 },
    #[check(amount > 0)]
    Transfer(f64),
    #[check(amount > 0)]
    Cash,
}

// A newtype's rule has no field names to read: it takes a `with` function.
#[derive(Deserialize, JsonSchema, Extractable)]
#[check(len(self) == 22)]
struct Iban(String);

fn main() {}
