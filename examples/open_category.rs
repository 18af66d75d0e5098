//! An open-ended category, as the seeds recommend: an enum of the expected
//! values with an `Other` among them, a free-text detail field beside it,
//! and a check that demands the detail exactly when the category is
//! `Other`. A model that answers "other" without saying what it is gets
//! that check as feedback and fixes it on the retry; a model that gives a
//! detail for a known category is corrected the same way.
//!
//! ```text
//! cargo run --example open_category      # offline, with a scripted model
//! ```

use extract::testing::Scripted;
use extract::{Extractable, Extractor, Outcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What an expense was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Extractable)]
#[serde(rename_all = "snake_case")]
enum Category {
    Travel,
    Meals,
    Software,
    /// None of the above: say what it is in `category_detail`.
    Other,
}

/// Record one expense from a receipt.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[extract(name = "record_expense")]
#[check(
    (category == Category::Other && is_some(category_detail))
        || (category != Category::Other && is_none(category_detail)),
    message = "give `category_detail` exactly when `category` is \"other\" (what the expense is), and leave it null otherwise",
    code = "category_detail"
)]
struct Expense {
    category: Category,
    /// What the expense is, in a few words, when the category is `other`.
    category_detail: Option<String>,
    /// The amount paid, in the receipt's currency.
    amount: f64,
}

const RECEIPT: &str = "Receipt 2291\nHarbour Conference Centre\nBooth rental, 2 days ... 480.00 EUR";

fn main() {
    // A scripted model: first "other" with no detail, then the fix.
    let model = Scripted::new([
        json!({"category": "other", "category_detail": null, "amount": 480.0}),
        json!({"category": "other", "category_detail": "trade fair booth rental", "amount": 480.0}),
    ]);
    let extractor = Extractor::new(model.clone());
    println!("The tool's description:\n{}\n", Expense::tool().description);
    match extractor.extract_blocking::<Expense>(RECEIPT) {
        Ok(Outcome::Valid(valid)) => {
            let expense = valid.value();
            println!(
                "valid after {} attempt(s): {:?} ({}), {:.2}",
                valid.attempts(),
                expense.category,
                expense.category_detail.as_deref().unwrap_or("-"),
                expense.amount
            );
            let correction = model.prompts()[1].to_string();
            let feedback = correction.lines().find(|l| l.contains("exactly when")).unwrap_or_default();
            println!("the correction said: {}", feedback.trim());
        }
        Ok(Outcome::Escalated(escalation)) => println!("escalated: {:?}", escalation.reason),
        Err(error) => println!("error: {error}"),
    }
}
