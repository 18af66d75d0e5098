//! Token accounting: [`Usage`].

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Deserializer, Serialize};

/// Tokens one call (or a sum of calls) spent.
///
/// The counts come from a server, so nothing bounds them: sums and
/// [`total`](Usage::total) saturate at `u64::MAX` instead of overflowing
/// (a panic in a debug build, a wrapped budget in a release one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Usage with the given uncached input and output tokens.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage { input_tokens, output_tokens, cache_read_tokens: 0, cache_write_tokens: 0 }
    }

    /// The same usage with cache reads and writes.
    pub const fn with_cache(mut self, read: u64, write: u64) -> Usage {
        self.cache_read_tokens = read;
        self.cache_write_tokens = write;
        self
    }

    /// Every token counted: input, output, cache reads and writes
    /// (`u64::MAX` at most).
    pub const fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

impl Add for Usage {
    type Output = Usage;
    fn add(mut self, rhs: Usage) -> Usage {
        self += rhs;
        self
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(rhs.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(rhs.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(rhs.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(rhs.cache_write_tokens);
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

/// A token count as a server wrote it (`#[serde(default, deserialize_with =
/// "wire_count")]`), read so that no claim fails the whole reply: past
/// `u64::MAX` (which JSON parsers read as a float) it saturates, a
/// negative count is 0, a fraction is cut.
pub fn wire_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let number = Option::<serde_json::Number>::deserialize(deserializer)?;
    // A float to integer `as` saturates, and NaN is 0.
    Ok(number.map(|n| n.as_u64().unwrap_or_else(|| n.as_f64().map_or(0, |f| f as u64))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_totals_saturate() {
        let huge = Usage::new(u64::MAX, 1).with_cache(u64::MAX, 1);
        assert_eq!(huge.total(), u64::MAX);
        let twice: Usage = [huge, huge].into_iter().sum();
        assert_eq!(twice, Usage::new(u64::MAX, 2).with_cache(u64::MAX, 2));
    }

    #[test]
    fn wire_counts_saturate_instead_of_failing() {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default, deserialize_with = "wire_count")]
            n: Option<u64>,
        }
        let read = |json: &str| serde_json::from_str::<Wire>(json).unwrap().n;
        assert_eq!(read(r#"{"n": 18446744073709551615}"#), Some(u64::MAX));
        assert_eq!(read(r#"{"n": 18446744073709551616}"#), Some(u64::MAX));
        assert_eq!(read(r#"{"n": 1e300}"#), Some(u64::MAX));
        assert_eq!(read(r#"{"n": -5}"#), Some(0));
        assert_eq!(read(r#"{"n": 12.7}"#), Some(12));
        assert_eq!(read(r#"{"n": null}"#), None);
        assert_eq!(read(r#"{}"#), None);
    }
}
