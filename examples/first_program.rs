// The README's first program: a receipt extracted offline with a scripted
// model, or from Claude when `ANTHROPIC_API_KEY` is set.
//
// ```text
// cargo run --example first_program
// ```

use extract::model::{FromEnv, Model, Reply};
use extract::testing::Scripted;
use extract::{Extractable, Extractor, Outcome, Usage};
use serde_json::json;

/// Record one receipt exactly as printed.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
#[check(sum(lines.amount) == total, tolerance = 0.01)]
struct Receipt {
    vendor: String,
    lines: Vec<Line>,
    total: f64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
struct Line {
    item: String,
    amount: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let document = "Café Aurora\nCoffee 3.50\nCake 4.00\nTotal 7.50";

    // Live when ANTHROPIC_API_KEY is set (or OPENAI_BASE_URL), else offline.
    let extractor = if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        Extractor::from_env()?
    } else {
        // A scripted model answers in order: `json!` is a call of the tool,
        // `Reply::text(..)` a reply in words, `Reply::refusal(..)` a refusal;
        // `.with_usage(..)` says what it cost. The first answer misreads the
        // cake, so the sum check fails and the model is asked again.
        let model = Scripted::new([
            Reply::from(json!({"vendor": "Café Aurora", "lines": [
                {"item": "Coffee", "amount": 3.5}, {"item": "Cake", "amount": 40.0}], "total": 7.5}))
            .with_usage(Usage::new(900, 60)),
            Reply::from(json!({"vendor": "Café Aurora", "lines": [
                {"item": "Coffee", "amount": 3.5}, {"item": "Cake", "amount": 4.0}], "total": 7.5}))
            .with_usage(Usage::new(1_000, 60)),
        ]);
        Extractor::new(Box::new(model) as Box<dyn Model>)
    };

    match extractor.extract_blocking::<Receipt>(document)? {
        Outcome::Valid(receipt) => {
            println!("valid after {} attempt(s): {:?}", receipt.attempts(), receipt.value());
        }
        Outcome::Escalated(escalation) => {
            // Never passed on as valid: a person gets the whole error chain.
            println!("for a person to check:\n{}", serde_json::to_string_pretty(&escalation)?);
        }
    }
    Ok(())
}
