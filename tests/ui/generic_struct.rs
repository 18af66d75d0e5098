use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

// A check that reads a field of `T` cannot be typed where `Page` is defined.
#[derive(Deserialize, JsonSchema, Extractable)]
#[check(count(items) >= 1)]
#[check(sum(items.amount) > 0)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Either<T> {
    One { value: T },
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Borrowed<'a> {
    #[serde(borrow)]
    text: &'a str,
}

fn main() {}
