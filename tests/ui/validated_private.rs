// Only the validator can build a `Validated<T>`: its fields are private and it
// has no public constructor, so code outside the crate cannot forge one.

fn main() {
    let _forged = extract::Validated {
        value: 42_u32,
        attempts: 1,
        attempt_usage: Vec::new(),
        corrections: Vec::new(),
        sources: None,
        reviewed: true,
    };
}
