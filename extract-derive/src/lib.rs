//! `#[derive(Extractable)]`: the procedural macro of `extract`.
//!
//! A pipeline in the manner of garde_derive: [`attr`] parses the raw
//! attributes, [`model`] builds the checked model of the struct (the names,
//! requiredness and tags the model sees), [`check`] parses and lowers the
//! check language, and [`emit`] writes the impls. Every stage records its
//! errors in one [`ctxt::Errors`] and carries on, so the user sees all of
//! them; a failed derive still emits a fallback impl, so one mistake gives
//! one error.

mod attr;
mod case;
mod check;
mod ctxt;
mod emit;
mod model;

use proc_macro::TokenStream;

/// Derives `extract::Extractable` for a struct with named fields.
///
/// See the `extract` crate for the attributes: `#[extract(name = "...",
/// description = "...")]` on the struct, `#[extract(recoverable = false)]` on
/// a field, and `#[check(...)]` rules on the struct.
#[proc_macro_derive(Extractable, attributes(extract, check))]
pub fn derive_extractable(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = ctxt::Errors::default();
    let container = model::Container::from_ast(&input, &mut errors);
    let output = match container {
        Some(container) if !errors.any() => emit::extractable(&container, &mut errors),
        _ => proc_macro2::TokenStream::new(),
    };
    match errors.into_compile_errors() {
        // A generic type or a union gets no fallback impl: it could not name
        // the type's parameters, or would demand `Deserialize` and
        // `JsonSchema` a union cannot have, and so add errors of its own.
        Some(errors) if !input.generics.params.is_empty() || matches!(input.data, syn::Data::Union(_)) => {
            errors.into()
        }
        Some(errors) => emit::fallback(&input.ident, errors).into(),
        None => output.into(),
    }
}
