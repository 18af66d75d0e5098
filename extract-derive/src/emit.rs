//! Code emission: the `Extractable` impl and the hidden impls the check
//! language and the semantic walk reach nested types through.

use proc_macro2::TokenStream;
use quote::quote;

use crate::check::lower::{self, private, probes, runtime};
use crate::container::{Container, Field};
use crate::encoding;
use crate::shape::Shape;

/// Everything the derive generates for a well-formed struct.
pub fn extractable(container: &Container) -> TokenStream {
    let p = private();
    let rt = runtime();
    let probes = probes();
    let ty = &container.ident;
    let rust_name = ty.to_string();
    let tool_name = &container.tool_name;
    let description = &container.description;

    // One string literal and one constant per named type, where a slice of
    // `FieldInfo`s would be many constants for the user's crate to compile.
    let (fields, nested) = encoding::fields(container.fields.iter().filter(|f| !f.skipped));
    // The descriptions live in a static, where `Self` means nothing.
    let nested: Vec<TokenStream> = nested.into_iter().map(|tokens| self_named(tokens, ty)).collect();
    let metas: Vec<String> = container.checks.iter().map(lower::meta).collect();
    let checks = encoding::join(&metas, encoding::CHECK_MARK);
    let runs: Vec<TokenStream> = container
        .checks
        .iter()
        .enumerate()
        .map(|(i, check)| lower::run(check, i, &container.fields))
        .collect();
    let check_scope = (!runs.is_empty()).then(|| {
        quote! {
            let __this = self;
            let __info = <Self as #rt::Audited>::TYPE_INFO;
        }
    });
    let walks: Vec<TokenStream> = container
        .fields
        .iter()
        .filter(|f| !f.skipped)
        .filter_map(|f| {
            let ident = &f.ident;
            let json = &f.json_name;
            let walk = shape_of(f).walk(quote!(&self.#ident), f.recoverable)?;
            Some(quote!(__audit.enter(#json); #walk __audit.leave();))
        })
        .collect();
    // A type with nothing to check or descend into keeps `audit`'s default.
    let audit = (!runs.is_empty() || !walks.is_empty()).then(|| {
        quote! {
            #[allow(clippy::all)]
            fn audit<__L: #p::LazyWalk>(&self, __audit: &mut #p::Audit<'_>, _: bool) {
                #probes
                #check_scope
                #(#runs)*
                #(#walks)*
            }
        }
    });
    let read = container.fields.iter().filter(|f| !f.skipped).map(|f| &f.ident);

    // The items the checks and fields do not shape are written by the
    // runtime's `derived_items!` (see there): rustc expands it itself.
    quote! {
        #[automatically_derived]
        impl #p::Audited for #ty {
            #audit
            #p::derived_items! {
                #ty, #rust_name, #tool_name, #description, #fields,
                [#((#nested))*], #checks, [#(#read)*]
            }
        }
    }
}

/// `tokens` with every `Self` replaced by the type's name `ty`.
fn self_named(tokens: TokenStream, ty: &syn::Ident) -> TokenStream {
    lower::map_tokens(tokens, &mut |tree| match tree {
        proc_macro2::TokenTree::Ident(ident) if ident == "Self" => {
            let mut name = ty.clone();
            name.set_span(ident.span());
            proc_macro2::TokenTree::Ident(name)
        }
        other => other,
    })
}

/// The shape of a field; `validate::walkable` has rejected the fields without one.
pub(crate) fn shape_of(field: &Field) -> &Shape {
    field.shape.as_ref().unwrap_or_else(|_| unreachable!("validated before emission"))
}

/// The head of an impl for the type: its name, its generics, and a where
/// clause that asks of a generic type exactly what `Extractable` needs.
struct TypeHead<'a> {
    ident: &'a syn::Ident,
    impl_generics: syn::ImplGenerics<'a>,
    ty_generics: syn::TypeGenerics<'a>,
    where_clause: TokenStream,
}

impl<'a> TypeHead<'a> {
    /// For a generic type (which the derive rejects): bounds that hold
    /// exactly when the type could be `Extractable`, so the fallback impl
    /// adds no error of its own.
    fn of(input: &'a syn::DeriveInput) -> TypeHead<'a> {
        let p = private();
        let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
        let ident = &input.ident;
        let mut predicates: Vec<TokenStream> =
            where_clause.map(|w| w.predicates.iter().map(|p| quote!(#p)).collect()).unwrap_or_default();
        if !input.generics.params.is_empty() {
            predicates.push(quote!(
                #ident #ty_generics: #p::schemars::JsonSchema + #p::serde::de::DeserializeOwned + 'static
            ));
        }
        let where_clause =
            if predicates.is_empty() { TokenStream::new() } else { quote!(where #(#predicates),*) };
        TypeHead { ident, impl_generics, ty_generics, where_clause }
    }
}

/// After a failed derive: the errors, and an impl that keeps every other use
/// of the type compiling, so one mistake gives one error.
pub fn fallback(input: &syn::DeriveInput, errors: TokenStream) -> TokenStream {
    let p = private();
    let head = TypeHead::of(input);
    let TypeHead { ident, impl_generics, ty_generics, where_clause } = &head;
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics #p::Audited for #ident #ty_generics #where_clause {
            #p::derived_items!(fallback);
        }
    }
}
