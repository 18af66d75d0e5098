use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[check(name.len() > 0)]
#[check((|| true)())]
#[check(total = 5)]
#[check({ total } > 0)]
#[check(format!("{}", total) == "1")]
struct Invoice {
    name: String,
    total: f64,
}

fn main() {}
