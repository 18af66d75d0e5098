//! A panic anywhere in validation, a user's `Deserialize` impl included, is
//! one `validator_panicked` violation with a short message, never an unwind
//! into the caller.

use extract::{Extractable, Layer};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::json;

/// A newtype whose own `Deserialize` panics on some input.
#[derive(Debug, JsonSchema)]
struct Fragile(String);

impl<'de> Deserialize<'de> for Fragile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fragile, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "boom" {
            panic!("{}", "the fragile parser broke: ".to_string() + &"x".repeat(10_000));
        }
        Ok(Fragile(text))
    }
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Note {
    body: Fragile,
}

#[test]
fn a_panicking_deserialize_impl_is_one_short_violation() {
    let violations = extract::validate::<Note>(&json!({"body": "boom"}), "").unwrap_err();
    assert_eq!(violations.len(), 1);
    let v = &violations[0];
    assert_eq!(v.code, "validator_panicked");
    assert_eq!(v.layer, Layer::Structure);
    assert!(!v.recoverable);
    assert!(
        v.message.starts_with("deserializing `Note` panicked: the fragile parser broke: xxx"),
        "{}",
        v.message
    );
    assert!(v.message.chars().count() < 300, "the panic message is shortened: {}", v.message.len());
}

#[test]
fn the_same_type_validates_when_nothing_panics() {
    let note = extract::validate::<Note>(&json!({"body": "fine"}), "").unwrap();
    assert_eq!(note.body.0, "fine");
}
