#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! `#[derive(Extractable)]`: the procedural macro of `extract`.
//!
//! A pipeline in the manner of garde_derive: `attr` parses the raw
//! attributes, `container` builds the model of the struct (the names,
//! requiredness and tags the model sees) and `check` parses the check
//! language into it; `validate` then checks every rule that needs the whole
//! model; only a model without errors reaches `emit`, which writes the
//! impls (lowering checks through `check::lower`, describing the type in
//! the runtime's compact form through `encoding`) and never finds an error
//! of its own. Every stage records its errors in one `ctxt::Errors` and
//! carries on, so the user sees all of them; a failed derive still emits a
//! fallback impl, so one mistake gives one error.

mod attr;
mod case;
mod check;
mod container;
mod ctxt;
mod emit;
mod encoding;
mod shape;
mod validate;

use proc_macro::TokenStream;

/// Derives `extract::Extractable` for a struct with named fields, an enum
/// (externally, internally or adjacently tagged), a newtype or tuple
/// struct, or a generic struct.
///
/// The reference of its attributes and of the check language, with
/// examples that run, is the `extract::guide` module
/// (<https://docs.rs/extractable/latest/extract/guide/>): `#[extract(name =
/// "...", description = "...")]` on the type, `#[extract(recoverable =
/// false)]` on a field (a struct variant's too), and `#[check(...)]` rules
/// on a struct or struct variant (`#[check(with = function)]` on a newtype
/// or tuple struct), with `tolerance`, `message`, `code` and `recoverable`. Only a type whose JSON is always an object (a struct, an
/// internally or adjacently tagged enum) can be the top-level type of an
/// extraction.
#[proc_macro_derive(Extractable, attributes(extract, check))]
pub fn derive_extractable(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand(&input).into()
}

/// What the derive writes for `input`: the impl, or the errors and the fallback impl.
fn expand(input: &syn::DeriveInput) -> proc_macro2::TokenStream {
    let mut errors = ctxt::Errors::default();
    let container = container::Container::from_ast(input, &mut errors);
    if let Some(container) = &container {
        validate::container(input, container, &mut errors);
    }
    match (errors.into_compile_errors(), container) {
        (None, Some(container)) => emit::extractable(&container),
        // A union gets no fallback impl: it would demand `Deserialize` and
        // `JsonSchema`, which a union cannot have, and so add errors of its own.
        (Some(errors), _) if matches!(input.data, syn::Data::Union(_)) => errors,
        (Some(errors), _) => emit::fallback(input, errors),
        (None, None) => unreachable!("a derive without a model has recorded why"),
    }
}

#[cfg(test)]
mod expansion_snapshots;
