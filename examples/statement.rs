//! A 30-page bank statement of 300 transactions, gathered window by window
//! (`Extractor::windows`): the windows, each call (its part, what it asked
//! for, how many items came back, what it read from the prompt cache), and
//! the merged list against the statement's balances.
//!
//! ```text
//! cargo run --example statement            # offline: a stand-in model with a real model's mistakes
//! cargo run --example statement -- --live  # against Claude (needs ANTHROPIC_API_KEY)
//! ```
//!
//! Offline, the stand-in (`examples/common/long_stand_in.rs`) writes at
//! most 60 items an answer, skips an item in one window answer in five and
//! strays onto the next page in one in three: ownership by quote drops the
//! strays, and the sum over the merged list finds the skipped items, which
//! one patch of the whole adds.

#[path = "common/dice.rs"]
mod dice;
#[path = "common/live.rs"]
mod live;
#[path = "common/long_documents.rs"]
#[allow(dead_code)]
mod long_documents;
#[path = "common/long_stand_in.rs"]
#[allow(dead_code)]
mod long_stand_in;

use std::process::ExitCode;

use extract::model::{Model, ModelFuture, Prompt, ReplyContent};
use extract::run::Part;
use extract::{Extractor, Outcome, Windows};

use long_documents::{Statement, long_document};
use long_stand_in::{Faults, LongStandIn};

/// A model that prints each call it passes on, and what came back.
struct Logged(Box<dyn Model>);

impl Model for Logged {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let reply = self.0.call(prompt).await?;
            let part = match prompt.part() {
                Part::Window(n) => format!("window {n}"),
                Part::Whole => "whole".to_string(),
            };
            let answer = match &reply.content {
                ReplyContent::ToolCall { input, .. } => match (input.get("patch"), input.get("transactions"))
                {
                    (Some(patch), _) => {
                        format!("a patch of {} operations", patch.as_array().map_or(0, Vec::len))
                    }
                    (None, Some(items)) => format!("{} transactions", items.as_array().map_or(0, Vec::len)),
                    (None, None) => "an answer without transactions".to_string(),
                },
                ReplyContent::Truncated { .. } => "cut by the output limit".to_string(),
                _ => "no tool call".to_string(),
            };
            let usage = reply.usage;
            println!(
                "  {part:<9} attempt {}  {:<13} -> {answer:<24} cache read {:>6}, written {:>6}, input {:>4}, output {:>5} tokens",
                prompt.attempt,
                prompt.tool.name,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                usage.input_tokens,
                usage.output_tokens,
            );
            Ok(reply)
        })
    }

    fn name(&self) -> &str {
        self.0.name()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let document = long_document("statement-30");
    let model: Box<dyn Model> = match live::live_model(&args, "statement") {
        Ok(Some(model)) => model,
        Ok(None) => Box::new(LongStandIn::of(Faults::realistic(30), &document)),
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let windows = Windows::pages(3);
    println!(
        "{}: {} pages, {} transactions; {windows}:",
        document.name,
        document.pages(),
        document.items().len()
    );
    for window in windows.split(&document.text) {
        println!("  window {:>2}: {}", window.number, window.described());
    }
    println!("calls:");
    let extractor = Extractor::new(Logged(model)).windows(windows);
    let outcome = match extractor.extract::<Statement>(document.text.as_str()).await {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let usage = outcome.usage();
    let document_reads = usage.cache_read_tokens + usage.cache_write_tokens;
    match outcome {
        Outcome::Valid(valid) => {
            let statement = valid.value();
            let sum: f64 = statement.transactions.iter().map(|t| t.amount).sum();
            println!(
                "valid after {} calls: {} transactions (the statement lists {}), summing to {sum:.2}; \
                 closing minus opening balance: {:.2}",
                valid.attempts(),
                statement.transactions.len(),
                document.items().len(),
                statement.closing_balance - statement.opening_balance,
            );
            let last = valid.sources().iter().rev().find(|s| s.path.to_string().starts_with("transactions["));
            if let Some(source) = last {
                println!(
                    "the last transaction, {}, is on page {}",
                    source.quote.trim(),
                    source.page.unwrap_or(0)
                );
            }
            println!(
                "the prompt (tools, system, document) read from the cache: {:.1}% of its tokens",
                100.0 * usage.cache_read_tokens as f64 / document_reads.max(1) as f64
            );
            ExitCode::SUCCESS
        }
        Outcome::Escalated(escalation) => {
            println!("escalated: {escalation}");
            ExitCode::FAILURE
        }
    }
}
