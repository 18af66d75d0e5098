//! What model calls cost, in US dollars: [`Prices`] per million tokens,
//! the [`Rate`] of one model (prices that may change above a prompt
//! length), and a [`PriceTable`] of models by name.
//!
//! [`PriceTable::claude`] holds Claude's prices as published on
//! [`PriceTable::CLAUDE_DATE`]; prices change, so a table can be
//! overridden and extended for any model, an OpenAI-compatible server's
//! included ([`PriceTable::with`]). A call is priced by the model that
//! answered it and the tokens its reply reports: uncached input, output,
//! cache reads, and cache writes (at the five-minute rate: the cache the
//! Claude backend asks for).
//!
//! ```
//! use extract::Usage;
//! use extract::cost::{PriceTable, Prices};
//!
//! let table = PriceTable::claude().with("my-local-model", Prices::per_million(0.5, 1.5, 0.0, 0.0));
//! let usage = Usage::new(2_000_000, 1_000_000);
//! assert_eq!(table.rate("my-local-model").unwrap().cost(usage), 2.5);
//! // A dated id is priced as its model.
//! let sonnet = table.rate("claude-sonnet-4-5-20250929").unwrap();
//! assert_eq!(sonnet.cost(Usage::new(100_000, 0)), 0.3);
//! // Past 200K prompt tokens, Sonnet 4.5 bills every token at its long-context rate.
//! assert_eq!(sonnet.cost(Usage::new(1_000_000, 0)), 6.0);
//! assert!(table.rate("an-unknown-model").is_none());
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Usage;

/// Prices per million tokens, in US dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
}

impl Prices {
    /// Prices per million tokens: uncached input, output, cache reads, cache writes.
    pub const fn per_million(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Prices {
        Prices { input, output, cache_read, cache_write }
    }

    /// What `usage` costs at these prices.
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_read_tokens as f64 * self.cache_read
            + usage.cache_write_tokens as f64 * self.cache_write)
            / 1_000_000.0
    }

    /// Every price times `factor` (the Message Batches API bills half: `0.5`).
    pub fn scaled(self, factor: f64) -> Prices {
        Prices::per_million(
            self.input * factor,
            self.output * factor,
            self.cache_read * factor,
            self.cache_write * factor,
        )
    }
}

/// What one model's calls cost: its prices, and for a model billed by
/// prompt length, other prices for a call whose prompt (uncached input,
/// cache reads and cache writes) is longer than a number of tokens, on
/// every token of that call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    prices: Prices,
    long_prompt: Option<(u64, Prices)>,
}

impl Rate {
    /// One price for every call.
    pub const fn flat(prices: Prices) -> Rate {
        Rate { prices, long_prompt: None }
    }

    /// The same rate, with `prices` for a call whose prompt is longer than `tokens`.
    pub const fn above(mut self, tokens: u64, prices: Prices) -> Rate {
        self.long_prompt = Some((tokens, prices));
        self
    }

    /// The prices a call of `usage` pays.
    pub fn prices_for(&self, usage: Usage) -> Prices {
        let prompt = usage
            .input_tokens
            .saturating_add(usage.cache_read_tokens)
            .saturating_add(usage.cache_write_tokens);
        match self.long_prompt {
            Some((tokens, long)) if prompt > tokens => long,
            _ => self.prices,
        }
    }

    /// What one call that reported `usage` costs, in US dollars.
    pub fn cost(&self, usage: Usage) -> f64 {
        self.prices_for(usage).cost(usage)
    }

    /// Every price times `factor` (the Message Batches API bills half: `0.5`).
    pub fn scaled(self, factor: f64) -> Rate {
        Rate {
            prices: self.prices.scaled(factor),
            long_prompt: self.long_prompt.map(|(tokens, long)| (tokens, long.scaled(factor))),
        }
    }
}

impl From<Prices> for Rate {
    fn from(prices: Prices) -> Rate {
        Rate::flat(prices)
    }
}

/// Models' rates by name. A model id is priced by the entry of its name,
/// or else by the longest entry it starts with followed by `-`, `@` or
/// `[` (`claude-sonnet-4-5-20250929` by `claude-sonnet-4-5`; never
/// `claude-sonnet-5-5` by `claude-sonnet-5`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    rates: BTreeMap<String, Rate>,
}

/// USD per million tokens: input, output, cache read, cache write (5 minutes).
const fn usd(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Rate {
    Rate::flat(Prices::per_million(input, output, cache_read, cache_write))
}

/// Claude's prices on [`PriceTable::CLAUDE_DATE`], from Anthropic's pricing
/// page and models' pages. Cache writes are the five-minute rate (1.25 times
/// input), cache reads the cache-hit rate.
const CLAUDE: &[(&str, Rate)] = &[
    ("claude-fable-5-2", usd(8.0, 40.0, 0.20, 10.0)),
    ("claude-mythos-5-2", usd(8.0, 40.0, 0.20, 10.0)),
    ("claude-fable-5-1", usd(10.0, 50.0, 0.25, 12.5)),
    ("claude-mythos-5-1", usd(10.0, 50.0, 0.25, 12.5)),
    ("claude-fable-5", usd(10.0, 50.0, 1.0, 12.5)),
    ("claude-mythos-5", usd(10.0, 50.0, 1.0, 12.5)),
    ("claude-opus-5-5", usd(4.0, 20.0, 0.20, 5.0)),
    ("claude-opus-5", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-8", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-7", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-6", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-5", usd(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-1", usd(15.0, 75.0, 1.50, 18.75)),
    ("claude-opus-4", usd(15.0, 75.0, 1.50, 18.75)),
    ("claude-sonnet-5-5", usd(2.0, 10.0, 0.10, 2.5)),
    ("claude-sonnet-5", usd(2.0, 10.0, 0.20, 2.5)),
    ("claude-sonnet-4-6", usd(3.0, 15.0, 0.30, 3.75)),
    // Sonnet 4.5 and 4 with the 1M context: a prompt over 200K tokens pays the long-context rate.
    (
        "claude-sonnet-4-5",
        usd(3.0, 15.0, 0.30, 3.75).above(200_000, Prices::per_million(6.0, 22.5, 0.60, 7.5)),
    ),
    ("claude-sonnet-4", usd(3.0, 15.0, 0.30, 3.75).above(200_000, Prices::per_million(6.0, 22.5, 0.60, 7.5))),
    ("claude-3-7-sonnet", usd(3.0, 15.0, 0.30, 3.75)),
    // Haiku 5.5 is billed by prompt length: five times the price over 100K tokens.
    (
        "claude-haiku-5-5",
        usd(0.10, 0.50, 0.01, 0.125).above(100_000, Prices::per_million(0.50, 2.50, 0.05, 0.625)),
    ),
    ("claude-haiku-4-5", usd(1.0, 5.0, 0.10, 1.25)),
    ("claude-3-5-haiku", usd(0.80, 4.0, 0.08, 1.0)),
    ("claude-3-haiku", usd(0.25, 1.25, 0.03, 0.30)),
];

impl PriceTable {
    /// The day [`PriceTable::claude`]'s prices were read off Anthropic's pages.
    pub const CLAUDE_DATE: &'static str = "2026-12-01";

    /// An empty table: no model has a price.
    pub fn new() -> PriceTable {
        PriceTable::default()
    }

    /// Claude's models at their prices on [`PriceTable::CLAUDE_DATE`].
    pub fn claude() -> PriceTable {
        let rates = CLAUDE.iter().map(|(model, rate)| (model.to_string(), *rate)).collect();
        PriceTable { rates }
    }

    /// The same table with `model` (an id, or the start of ids) at `rate`
    /// (a [`Prices`], or a [`Rate`] that changes with prompt length),
    /// replacing its entry if it had one.
    pub fn with(mut self, model: impl Into<String>, rate: impl Into<Rate>) -> PriceTable {
        self.rates.insert(model.into(), rate.into());
        self
    }

    /// The rate of `model`, `None` when the table has no price for it.
    pub fn rate(&self, model: &str) -> Option<Rate> {
        if let Some(rate) = self.rates.get(model) {
            return Some(*rate);
        }
        self.rates
            .iter()
            .filter(|(name, _)| {
                model.strip_prefix(name.as_str()).is_some_and(|rest| rest.starts_with(['-', '@', '[']))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, rate)| *rate)
    }

    /// The models the table prices, in name order.
    pub fn models(&self) -> impl Iterator<Item = &str> {
        self.rates.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_priced_by_its_own_entry_or_its_longest_family() {
        let table = PriceTable::claude();
        // 10,000 input tokens (under every long-prompt threshold), in dollars per million.
        let input = |model: &str| table.rate(model).map(|r| r.cost(Usage::new(10_000, 0)) * 100.0);
        assert_eq!(input("claude-sonnet-5-5"), Some(2.0));
        assert_eq!(input("claude-sonnet-5-5-20261001"), Some(2.0));
        assert_eq!(input("claude-opus-4-5-20251101"), Some(5.0));
        assert_eq!(input("claude-opus-4-20250514"), Some(15.0), "Opus 4, not 4.5");
        assert!((input("claude-3-5-haiku-20241022").unwrap() - 0.80).abs() < 1e-12);
        assert!((input("claude-haiku-5-5[1m]").unwrap() - 0.10).abs() < 1e-12);
        for unknown in ["claude-sonnet", "claude-opus-55", "gpt-4o", "", "scripted"] {
            assert_eq!(input(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn every_token_kind_is_priced_and_a_long_prompt_pays_its_own_rate() {
        let haiku = PriceTable::claude().rate("claude-haiku-5-5").unwrap();
        let short = Usage::new(100_000, 10_000).with_cache(0, 0);
        // 0.1 * 0.1 + 0.01 * 0.5 = 0.015
        assert!((haiku.cost(short) - 0.015).abs() < 1e-12, "{}", haiku.cost(short));
        let long = Usage::new(50_000, 10_000).with_cache(40_000, 20_000);
        // 110,000 prompt tokens: every token at the long rate.
        let expected = (50_000.0 * 0.5 + 10_000.0 * 2.5 + 40_000.0 * 0.05 + 20_000.0 * 0.625) / 1e6;
        assert!((haiku.cost(long) - expected).abs() < 1e-12, "{} {expected}", haiku.cost(long));
        assert!((haiku.scaled(0.5).cost(long) - expected / 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_table_can_be_overridden_and_extended() {
        let table = PriceTable::claude()
            .with("claude-sonnet-5-5", Prices::per_million(1.0, 1.0, 1.0, 1.0))
            .with("qwen3-32b", Prices::per_million(0.2, 0.6, 0.0, 0.0));
        assert_eq!(table.rate("claude-sonnet-5-5").unwrap().cost(Usage::new(1_000_000, 0)), 1.0);
        assert_eq!(table.rate("qwen3-32b").unwrap().cost(Usage::new(0, 1_000_000)), 0.6);
        assert!(PriceTable::new().rate("claude-sonnet-5-5").is_none());
    }
}
