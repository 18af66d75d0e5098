//! Code emission: the one `Audited` impl a type gets (the semantic walk,
//! its checks, and a call of the runtime's `derived_items!` for the rest),
//! and the fallback impl after a failed derive.

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
    let described = || container.fields.iter().filter(|f| !f.skipped);

    let fields = encoding::fields(described());
    // Each typed field's type, whose own `SHAPE` describes it (plain data
    // needs no lookup): the descriptions live in a static, where `Self`
    // means nothing.
    let shapes: Vec<TokenStream> = described()
        .filter(|f| encoding::is_typed(f))
        .map(|f| {
            let ty_tokens = &f.ty;
            self_named(quote!(#ty_tokens), ty)
        })
        .collect();
    let lowered: Vec<lower::Lowered> = container
        .checks
        .iter()
        .enumerate()
        .map(|(i, check)| lower::check(check, i, &container.fields))
        .collect();
    let checks = encoding::checks(&lowered.iter().map(|l| &l.text).collect::<Vec<_>>());
    let runs: Vec<&TokenStream> = lowered.iter().map(|l| &l.run).collect();
    let check_scope = (!runs.is_empty()).then(|| {
        quote! {
            let __this = self;
            let __info = <Self as #rt::Audited>::TYPE_INFO;
        }
    });
    let walks: Vec<TokenStream> = described()
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
    // Each field read, under a binding of the derive's own (see `derived_items!`).
    let reads = described().enumerate().map(|(i, f)| {
        let ident = &f.ident;
        let binding = quote::format_ident!("__field{}", i);
        quote!(#ident #binding)
    });

    // The items the checks and fields do not shape are written by the
    // runtime's `derived_items!` (see there): rustc expands it itself.
    quote! {
        #[automatically_derived]
        impl #p::Audited for #ty {
            #audit
            #p::derived_items! {
                type: #ty,
                rust_name: #rust_name,
                tool_name: #tool_name,
                description: #description,
                fields: #fields,
                shapes: [#((#shapes))*],
                checks: #checks,
                reads: [#(#reads)*],
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

/// After a failed derive: the errors, and an impl that keeps every other use
/// of the type compiling, so one mistake gives one error.
pub fn fallback(input: &syn::DeriveInput, errors: TokenStream) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    // A generic type (which the derive rejects) gets the impl too.
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #errors
        #[automatically_derived]
        impl #impl_generics #p::Audited for #ident #ty_generics #where_clause {
            #p::derived_items!(fallback);
        }
    }
}
