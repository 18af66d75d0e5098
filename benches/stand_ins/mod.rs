//! The stand-ins of the tests (`tests/support`), for the benches that run
//! against a server on 127.0.0.1: the Messages API that meters rate limits
//! and bills the prompt cache, and the invoices it answers.
#![allow(dead_code)]

#[path = "../../tests/support/cached_invoices.rs"]
pub mod cached_invoices;
#[path = "../../tests/support/prompt_cache.rs"]
pub mod prompt_cache;
#[path = "../../tests/support/rate_limited.rs"]
pub mod rate_limited;
#[path = "../../tests/support/server.rs"]
pub mod server;
