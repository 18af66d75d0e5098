//! The prompt cache as the Messages API bills it, for the stand-ins: a
//! request is a sequence of segments in the cache's order (each tool, the
//! system text, the tool choice, then each content block of each message);
//! a block marked `cache_control` ends a prefix that may be cached. A
//! request reads the longest marked prefix written before (byte for byte),
//! writes the longer marked prefixes it has not seen, and pays the rest as
//! uncached input. A prefix shorter than the minimum cacheable length is
//! never cached. The tool choice sits between the system text and the
//! messages, so changing it keeps a cached tools-and-system prefix and
//! loses a cached document, as the API's documentation says; changing a
//! tool loses both. Tokens are counted as a quarter of the bytes.

use std::collections::HashSet;

use serde_json::Value;

/// The minimum cacheable prompt of Claude Sonnet, in tokens.
pub const MIN_CACHEABLE_TOKENS: u64 = 1024;

/// What one request's input was billed as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    pub uncached: u64,
    pub read: u64,
    pub written: u64,
}

/// The prefixes written so far.
#[derive(Debug, Default)]
pub struct PromptCache {
    written: HashSet<String>,
}

/// A segment without its `cache_control`, and whether it carried one.
fn segment(value: &Value) -> (String, bool) {
    let mut value = value.clone();
    let marked = value.as_object_mut().and_then(|o| o.remove("cache_control")).is_some();
    (value.to_string(), marked)
}

fn tokens(text: &str) -> u64 {
    text.len() as u64 / 4
}

impl PromptCache {
    /// Bills `body` against the cache, and writes what it marks.
    pub fn bill(&mut self, body: &Value) -> CacheUsage {
        let mut segments: Vec<(String, bool)> = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            segments.push(segment(tool));
        }
        match &body["system"] {
            Value::Array(blocks) => segments.extend(blocks.iter().map(segment)),
            Value::Null => {}
            system => segments.push((system.to_string(), false)),
        }
        segments.push((body["tool_choice"].to_string(), false));
        for message in body["messages"].as_array().into_iter().flatten() {
            match &message["content"] {
                Value::Array(blocks) => segments.extend(blocks.iter().map(segment)),
                content => segments.push((content.to_string(), false)),
            }
        }
        let total: u64 = segments.iter().map(|(text, _)| tokens(text)).sum();
        // Each marked prefix: its text so far, and its tokens.
        let mut prefix = String::new();
        let mut length = 0;
        let mut marked = Vec::new();
        for (text, is_marked) in &segments {
            prefix.push_str(text);
            prefix.push('\u{1}');
            length += tokens(text);
            if *is_marked && length >= MIN_CACHEABLE_TOKENS {
                marked.push((prefix.clone(), length));
            }
        }
        let hit = marked.iter().rposition(|(key, _)| self.written.contains(key));
        let read = hit.map_or(0, |i| marked[i].1);
        let start = hit.map_or(0, |i| i + 1);
        let written = marked[start..].last().map_or(0, |(_, length)| length - read);
        for (key, _) in &marked[start..] {
            self.written.insert(key.clone());
        }
        CacheUsage { uncached: total - read - written, read, written }
    }
}
