//! The model clients against HTTP stand-ins on 127.0.0.1 (real sockets,
//! responses written by hand): the Claude client (`anthropic`) and the
//! OpenAI-compatible client (`openai`), each with its requests, retries,
//! fallbacks, errors and secrecy.

#[path = "../../../tests/support/mod.rs"]
mod support;

mod anthropic;
mod openai;
