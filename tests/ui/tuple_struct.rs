use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

// A tuple struct derives (its JSON is an array), but cannot be the
// top-level type of an extraction; neither can a newtype.
#[derive(Deserialize, JsonSchema, Extractable)]
struct Pair(String, f64);

#[derive(Deserialize, JsonSchema, Extractable)]
struct Iban(String);

async fn run(extractor: extract::Extractor<extract::testing::Scripted>) {
    let _ = extractor.extract::<Iban>("text").await;
}

fn main() {
    let _ = extract::validate::<Pair>(&serde_json::json!({}), "");
    let _ = run;
}
