//! Whole extractions through `Extractor`: the retry loop and its outcomes
//! with a scripted model, documents (text, PDF) and the provenance of
//! `Sourced` values, and the same loop over HTTP against a stand-in of the
//! Messages API on 127.0.0.1, down to the bytes each request costs.

#[path = "../support/mod.rs"]
mod support;

mod caching;
mod cost;
mod documents;
mod ladder;
mod over_http;
mod patch;
mod patch_cost;
mod request_bytes;
mod scripted;
mod streaming;
mod streaming_http;
mod streaming_openai;
mod streaming_scenarios;
mod windows;
