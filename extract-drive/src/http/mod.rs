//! What every HTTP backend shares, written once: the transport retry policy
//! ([`retry`]), the exchange with its body limit and credential masking
//! ([`transport`]), the buckets requests are paced by ([`pace`]). Behind the crate-internal `http` feature, which each
//! HTTP backend's feature turns on.

pub mod pace;
pub mod retry;
pub mod sse;
pub mod transport;

pub use transport::DEFAULT_BODY_LIMIT;

/// The transport setters every backend's builder has, written once: the
/// builder has a `settings: Settings` field, and `DEFAULT_TIMEOUT` and
/// `DEFAULT_TRANSPORT_RETRIES` and `DEFAULT_BODY_LIMIT` in scope for the docs.
#[doc(hidden)]
#[macro_export]
macro_rules! transport_setters {
    ($builder:ident) => {
        impl $builder {
            /// How long one HTTP request may take, from connecting to the end of the
            /// body. A request that takes longer is a transport failure (and retried).
            /// Default [`DEFAULT_TIMEOUT`].
            pub fn timeout(mut self, timeout: std::time::Duration) -> $builder {
                self.settings.timeout = timeout;
                self
            }

            /// How many times a failed HTTP request is retried (so a call makes at
            /// most `transport_retries + 1` requests). These never spend a validation
            /// attempt. Default [`DEFAULT_TRANSPORT_RETRIES`].
            pub fn transport_retries(mut self, retries: u32) -> $builder {
                self.settings.retries = retries;
                self
            }

            /// The backoff used when the server gives no usable `retry-after`:
            /// `initial` doubling per retry up to `max`, less up to 25 % jitter.
            /// Default 0.5 s and 8 s, as in the official SDKs; tests set it lower.
            /// No wait is longer than 15 minutes, whatever is set here.
            pub fn retry_backoff(
                mut self,
                initial: std::time::Duration,
                max: std::time::Duration,
            ) -> $builder {
                self.settings.backoff_initial = initial;
                self.settings.backoff_max = max.max(initial);
                self
            }

            /// The body limit: a response larger than `bytes` is an
            /// `Error::InvalidResponse` naming the
            /// limit, and is not read further. Default
            /// [`DEFAULT_BODY_LIMIT`].
            pub fn body_limit(mut self, bytes: usize) -> $builder {
                self.settings.body_limit = bytes;
                self
            }
        }
    };
}
