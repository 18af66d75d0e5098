use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Payment {
    Card { amount: f64 },
    Cash { amount: f64 },
    Voucher,
}

// A check path cannot step into an enum: its variants hold different fields.
#[derive(Deserialize, JsonSchema, Extractable)]
#[check(sum(payments.amount) > 0)]
#[check(first.amount > 0)]
struct Receipt {
    payments: Vec<Payment>,
    first: Payment,
}

fn main() {}
