use extract::Extractable;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Extractable)]
#[serde(tag = "kind")]
enum Party {
    // A field named like the tag: the model could not tell them apart.
    Person { kind: String },
    #[serde(rename = "Person")]
    Robot { serial: String },
    #[extract(name = "company")]
    Company { name: String },
}

#[derive(Deserialize, JsonSchema, Extractable)]
enum Payment {
    // `recoverable` tags a named field; an unnamed one is never absent alone.
    Transfer(#[extract(recoverable = false)] String),
    Cash {
        #[extract(recoverable = false)]
        note: Option<String>,
    },
}

#[derive(Deserialize, JsonSchema, Extractable)]
struct Fixed<const N: usize> {
    count: u32,
}

fn main() {}
