//! The prompt cache across an extraction's attempts, against a Messages
//! API stand-in on 127.0.0.1 that bills input as the API does
//! (`tests/support/prompt_cache.rs`): a full correction offers the same
//! tool and reads tools, instructions and document from the cache the
//! first attempt wrote; a patch correction offers another tool, which
//! invalidates the whole cached prefix, so its document is billed afresh.
//! And the cache model itself, on hand-made requests.

#![cfg(feature = "anthropic")]

use extract::{Corrections, Extractor, Outcome, Retries, Usage};
use serde_json::{Value, json};

use crate::support::cached_invoices::{self, Invoice};
use crate::support::prompt_cache::{CacheUsage, MIN_CACHEABLE_TOKENS, PromptCache};
use crate::support::rate_limited::{Metering, RateLimited};

fn request(tool: &str, choice: &str, document: &str, correction: Option<&str>) -> Value {
    let mut content = vec![json!({"type": "text", "text": document, "cache_control": {"type": "ephemeral"}})];
    if let Some(correction) = correction {
        content.push(json!({"type": "text", "text": correction}));
    }
    json!({
        "tools": [{"name": tool, "input_schema": {}, "cache_control": {"type": "ephemeral"}}],
        "system": "Answer through the tool.",
        "tool_choice": {"type": choice},
        "messages": [{"role": "user", "content": content}],
    })
}

#[test]
fn the_cache_model_reads_what_an_unchanged_prefix_wrote() {
    let document = "x".repeat(8 * MIN_CACHEABLE_TOKENS as usize);
    let mut cache = PromptCache::default();
    let first = cache.bill(&request("record", "any", &document, None));
    assert_eq!(first.read, 0);
    assert!(first.written >= 2 * MIN_CACHEABLE_TOKENS, "{first:?}");
    // A correction after the same prefix reads it, and pays only its own block.
    let again = cache.bill(&request("record", "any", &document, Some("fix the total")));
    assert_eq!((again.read, again.written), (first.written, 0), "{again:?}");
    assert!(again.uncached < 10, "{again:?}");
    // Another tool: nothing of the prefix is read.
    let other_tool = cache.bill(&request("patch", "any", &document, None));
    assert_eq!(other_tool.read, 0, "{other_tool:?}");
    // Short prompts are never cached.
    let short = PromptCache::default().bill(&request("record", "any", "short", None));
    assert_eq!(short, CacheUsage { uncached: short.uncached, read: 0, written: 0 });
}

/// The usage of each call of one extraction of a long invoice (150 items)
/// whose first answer is wrong, corrected `corrections`-wise.
async fn usage_of_each_call(corrections: Corrections) -> Vec<Usage> {
    let server = RateLimited::start(
        Metering::unmetered(|body: &Value| cached_invoices::answer(body, 150, 1)).with_cache(),
    )
    .await;
    let client = extract::anthropic::Client::builder()
        .api_key("k")
        .base_url(&server.base_url)
        .model("claude-sonnet-5-5")
        .build()
        .unwrap();
    let (document, right) = cached_invoices::invoice(0, 150);
    let outcome = Extractor::new(client)
        .retries(Retries::new(1).unwrap())
        .corrections(corrections)
        .extract::<Invoice>(document.as_str())
        .await
        .unwrap();
    let Outcome::Valid(valid) = outcome else { panic!("{outcome:?}") };
    assert_eq!(serde_json::to_value(valid.value()).unwrap(), right);
    valid.attempt_usage().to_vec()
}

#[tokio::test]
async fn a_full_correction_reads_the_document_from_the_cache_and_a_patch_correction_does_not() {
    let full = usage_of_each_call(Corrections::Full).await;
    assert_eq!(full.len(), 2);
    assert!(full[0].cache_write_tokens > 1_500 && full[0].cache_read_tokens == 0, "{full:?}");
    assert_eq!(full[1].cache_read_tokens, full[0].cache_write_tokens, "{full:?}");

    let patch = usage_of_each_call(Corrections::Patch).await;
    assert_eq!(patch.len(), 2);
    // The patch tool replaced the invoice's: the first attempt's cache is of no use.
    assert_eq!(patch[1].cache_read_tokens, 0, "{patch:?}");
    assert!(patch[1].cache_write_tokens > 1_500, "{patch:?}");
    // It writes far less: a patch, not the invoice again.
    assert!(patch[1].output_tokens * 20 < full[1].output_tokens, "{patch:?} {full:?}");
}
