//! What every HTTP backend shares, written once: the transport retry policy
//! ([`retry`]), the exchange with its body limit and credential masking
//! ([`transport`]). Behind the crate-internal `http` feature, which each
//! HTTP backend's feature turns on.

pub(crate) mod retry;
pub(crate) mod transport;

pub use transport::DEFAULT_BODY_LIMIT;
