//! `#[derive(Extractable)]`.
use proc_macro::TokenStream;

/// Derives `extract::Extractable`.
#[proc_macro_derive(Extractable, attributes(extract, check))]
pub fn derive_extractable(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
