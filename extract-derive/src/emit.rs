//! Code emission: the one `Audited` impl a type gets (the semantic walk,
//! its checks, and a call of the runtime's `derived_items!` for the rest),
//! and the fallback impl after a failed derive.

use proc_macro2::TokenStream;
use quote::quote;

use crate::check::lower::{self, private, probes, runtime};
use crate::container::{Container, Element, Field, Form, Tagging, Variant, VariantKind};
use crate::encoding;
use crate::shape::Shape;

/// Everything the derive generates for a well-formed type.
pub fn extractable(container: &Container) -> TokenStream {
    match &container.form {
        Form::Struct => structure(container),
        Form::Tuple(elements) => tuple(container, elements),
        Form::Enum { tagging, variants } => enumeration(container, tagging, variants),
    }
}

/// What the derive writes for a struct with named fields.
fn structure(container: &Container) -> TokenStream {
    let p = private();
    let rt = runtime();
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
    let (checks, runs) = lowered_checks(&container.checks, &container.fields);
    let generic = !container.generics.params.is_empty();
    let info = if generic {
        quote!(#rt::Some(<Self as #rt::Audited>::__generic_info()))
    } else {
        quote!(<Self as #rt::Audited>::TYPE_INFO)
    };
    let walks: Vec<TokenStream> = described()
        .filter_map(|f| {
            let ident = &f.ident;
            let json = &f.json_name;
            let walk = shape_of(f).walk(quote!(&self.#ident), f.recoverable)?;
            Some(quote!(__audit.enter(#json); #walk __audit.leave();))
        })
        .collect();
    let audit = audit_method(info, &runs, &walks);
    // Each field read, under a binding of the derive's own (see `derived_items!`).
    let reads = described().enumerate().map(|(i, f)| {
        let ident = &f.ident;
        let binding = quote::format_ident!("__field{}", i);
        quote!(#ident #binding)
    });

    let per_window = per_window_lists(container);
    let anchored = anchored(container);
    if generic {
        let generic = generic_structure(container, audit, &fields, &checks);
        return quote!(#generic #anchored #per_window);
    }
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
        // That the type is `Extractable` (a missing `JsonSchema` or
        // `Deserialize` is an error here, at the derive, not at the first
        // extraction); written by the derive itself, so the error comes
        // from the derive's expansion and names no hidden macro.
        const _: () = #p::require_extractable::<#ty>();
        #anchored
        #per_window
    }
}

/// `impl Anchored` for a struct with a `Sourced` field (by its written
/// type), whose quote can anchor it in a list gathered window by window.
fn anchored(container: &Container) -> Option<TokenStream> {
    let p = private();
    let sourced =
        container.fields.iter().filter(|f| !f.skipped).any(|f| written_as(&f.ty, "Sourced").is_some());
    let ty = &container.ident;
    let (impl_generics, ty_generics, where_clause) = container.generics.split_for_impl();
    sourced.then(|| quote!(#[automatically_derived] impl #impl_generics #p::Anchored for #ty #ty_generics #where_clause {}))
}

/// For each `#[extract(per_window)]` list (a `Vec`, as the container
/// checked), the demand that its items are anchored, at the attribute.
fn per_window_lists(container: &Container) -> TokenStream {
    let p = private();
    container
        .fields
        .iter()
        .filter_map(|f| Some((written_as(&f.ty, "Vec")?, f.per_window?)))
        .map(|(item, span)| {
            let item = lower::respan_to(quote!(#item), quote::quote_spanned!(span=> per_window));
            quote::quote_spanned!(span=> const _: () = #p::require_anchored::<#item>();)
        })
        .collect()
}

/// The one type argument of `ty` when it is written as `name<T>`.
pub fn written_as<'t>(ty: &'t syn::Type, name: &str) -> Option<&'t syn::Type> {
    let syn::Type::Path(path) = ty else { return None };
    let last = path.path.segments.last().filter(|segment| segment.ident == name)?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(item)] => Some(item),
        _ => None,
    }
}

/// A generic struct's impl: the walk (`audit`) and description as for
/// any struct, but the description is made on first use for each
/// instantiation (`generic_info`; a static cannot depend on a type
/// parameter), and each type parameter must be walked.
fn generic_structure(
    container: &Container,
    audit: Option<TokenStream>,
    fields: &str,
    checks: &str,
) -> TokenStream {
    let p = private();
    let ty = &container.ident;
    let rust_name = ty.to_string();
    let tool_name = &container.tool_name;
    let description = &container.description;
    let mut generics = container.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#p::Audited));
        param.bounds.push(syn::parse_quote!('static));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let described = || container.fields.iter().filter(|f| !f.skipped);
    let shapes = described().filter(|f| encoding::is_typed(f)).map(|f| {
        let ty = &f.ty;
        quote!({ use #p::nested_probes::*; #p::NestedProbe::<#ty>::SHAPE })
    });
    let reads = described().enumerate().map(|(i, f)| {
        let ident = &f.ident;
        let binding = quote::format_ident!("__field{}", i);
        quote!(#ident: #binding)
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::Audited for #ty #ty_generics #where_clause {
            #audit
            fn __generic_info() -> &'static #p::TypeInfo {
                // Every field is read (see `derived_items!`).
                #[allow(unused_variables)]
                let Self { #(#reads,)* .. };
                #p::generic_info::<Self>(|| #p::TypeInfo::derived(
                    #rust_name,
                    #tool_name,
                    #description,
                    #fields,
                    ::std::boxed::Box::leak(::std::boxed::Box::new([#(#shapes),*])),
                    #checks,
                ))
            }
            const SHAPE: &'static #p::Shape = &#p::Shape::Generic(<Self as #p::Audited>::__generic_info);
            type Target = Self;
            type Card = #p::Own;
        }
    }
}

/// The parenthesized types `derived_items!` reads the shapes of.
fn shape_types<'a>(types: impl Iterator<Item = &'a syn::Type>, ty: &syn::Ident) -> TokenStream {
    let types = types.map(|t| self_named(quote!(#t), ty));
    quote!([#((#types))*])
}

/// The `audit` method of a struct (named fields or not): the checks' `runs`
/// with the value as `__this` and its description (`info`) as `__info`,
/// then the `walks` into its fields. `None` for a type with nothing to
/// check or descend into, which keeps the trait's default.
fn audit_method(info: TokenStream, runs: &[TokenStream], walks: &[TokenStream]) -> Option<TokenStream> {
    if runs.is_empty() && walks.is_empty() {
        return None;
    }
    let p = private();
    let probes = probes();
    let check_scope = (!runs.is_empty()).then(|| {
        quote! {
            let __this = self;
            let __info = #info;
        }
    });
    Some(quote! {
        #[allow(clippy::all)]
        fn audit<__L: #p::LazyWalk>(&self, __audit: &mut #p::Audit<'_>, _: bool) {
            #probes
            #check_scope
            #(#runs)*
            #(#walks)*
        }
    })
}

/// The checks lowered, their descriptions encoded, and the statements that
/// run them (`__this` the value, `__info` its description).
fn lowered_checks(checks: &[crate::check::Check], fields: &[Field]) -> (String, Vec<TokenStream>) {
    let lowered: Vec<lower::Lowered> =
        checks.iter().enumerate().map(|(i, check)| lower::check(check, i, fields)).collect();
    let encoded = encoding::checks(&lowered.iter().map(|l| &l.text).collect::<Vec<_>>());
    (encoded, lowered.into_iter().map(|l| l.run).collect())
}

/// The walk of unnamed fields, each `binding` a reference to one: a
/// newtype's one value at the path of the newtype itself (its JSON is the
/// value's), a tuple's elements each one `[index]` deeper.
fn element_walks(elements: &[Element], bindings: &[TokenStream]) -> Vec<TokenStream> {
    let newtype = elements.len() == 1;
    elements
        .iter()
        .zip(bindings)
        .enumerate()
        .filter_map(|(i, (element, binding))| {
            let shape = element.shape.as_ref().unwrap_or_else(|_| unreachable!("validated before emission"));
            let walk = shape.walk(binding.clone(), true)?;
            Some(if newtype { walk } else { quote!(__audit.at_index(#i, |__audit| { #walk });) })
        })
        .collect()
}

/// What the derive writes for a newtype or tuple struct: its `with`
/// checks, the walk of its elements, and its description.
fn tuple(container: &Container, elements: &[Element]) -> TokenStream {
    let p = private();
    let rt = runtime();
    let ty = &container.ident;
    let rust_name = ty.to_string();
    let tool_name = &container.tool_name;
    let description = &container.description;
    let (checks, runs) = lowered_checks(&container.checks, &[]);
    let bindings: Vec<TokenStream> = (0..elements.len())
        .map(|i| {
            let index = syn::Index::from(i);
            quote!(&self.#index)
        })
        .collect();
    let walks = element_walks(elements, &bindings);
    let audit = audit_method(quote!(<Self as #rt::Audited>::TYPE_INFO), &runs, &walks);
    let shapes = shape_types(elements.iter().map(|e| &e.ty), ty);
    let reads = (0..elements.len()).map(|i| quote::format_ident!("__field{}", i));
    quote! {
        #[automatically_derived]
        impl #p::Audited for #ty {
            #audit
            #p::derived_items! {
                tuple: #ty,
                rust_name: #rust_name,
                tool_name: #tool_name,
                description: #description,
                shapes: #shapes,
                checks: #checks,
                reads: [#(#reads)*],
            }
        }
    }
}

/// What the derive writes for an enum: one walk that enters the variant a
/// value holds (running a struct variant's checks, then walking its fields
/// at the paths its representation gives them), and its description.
fn enumeration(container: &Container, tagging: &Tagging, variants: &[Variant]) -> TokenStream {
    let p = private();
    let rt = runtime();
    let probes = probes();
    let ty = &container.ident;
    let rust_name = ty.to_string();
    let tool_name = &container.tool_name;
    let description = &container.description;
    // The key a variant's content sits under: its tag (external), the
    // content key (adjacent), none (internal: the fields sit beside the tag).
    let content_key = |variant: &Variant| match tagging {
        Tagging::External => Some(variant.json_name.clone()),
        Tagging::Internal { .. } => None,
        Tagging::Adjacent { content, .. } => Some(content.clone()),
    };
    let mut arms = Vec::new();
    let mut described = Vec::new();
    // Under an internal tag, serde writes the tag among a newtype variant's
    // content's keys: that content must always be an object, asserted at
    // its type so the error points at the variant.
    let object_contents =
        variants.iter().filter(|v| !v.skipped).filter_map(|variant| match (tagging, &variant.kind) {
            (Tagging::Internal { .. }, VariantKind::Tuple(elements)) if elements.len() == 1 => {
                let content = &elements[0].ty;
                Some(quote::quote_spanned!(syn::spanned::Spanned::span(content)=>
                    const _: () = #p::require_object_content::<#content>();
                ))
            }
            _ => None,
        });
    let object_contents: Vec<TokenStream> = object_contents.collect();
    // Each variant's tag, for a check to show a value as the model writes it.
    let names: Vec<TokenStream> = variants
        .iter()
        .map(|variant| {
            let ident = &variant.ident;
            let name = if variant.skipped { &variant.rust_name } else { &variant.json_name };
            quote!(Self::#ident { .. } => #name,)
        })
        .collect();
    for variant in variants {
        let ident = &variant.ident;
        if variant.skipped {
            arms.push(quote!(Self::#ident { .. } => {}));
            continue;
        }
        let index = described.len();
        let rust_name = &variant.rust_name;
        let json_name = &variant.json_name;
        let (pattern, body, description) = match &variant.kind {
            VariantKind::Unit => (quote!(Self::#ident), Vec::new(), quote!(#rust_name #json_name unit)),
            VariantKind::Struct { fields, checks } => {
                let bindings: Vec<syn::Ident> = fields.iter().map(|f| variant_binding(&f.ident)).collect();
                let idents = fields.iter().map(|f| &f.ident);
                let pattern = quote!(Self::#ident { #(#idents: #bindings),* });
                let (encoded, runs) = lowered_checks(checks, fields);
                let runs: Vec<TokenStream> = runs.into_iter().map(in_variant).collect();
                let mut body = Vec::new();
                if !runs.is_empty() {
                    body.push(quote! {
                        let __this = self;
                        let __info = #rt::TypeInfo::variant_info(<Self as #rt::Audited>::TYPE_INFO, #index);
                    });
                    body.extend(runs);
                }
                body.extend(fields.iter().zip(&bindings).filter(|(f, _)| !f.skipped).filter_map(
                    |(f, binding)| {
                        let json = &f.json_name;
                        let walk = shape_of(f).walk(quote!(#binding), f.recoverable)?;
                        Some(quote!(__audit.enter(#json); #walk __audit.leave();))
                    },
                ));
                let described = fields.iter().filter(|f| !f.skipped);
                let names = encoding::fields(described.clone());
                let shapes = shape_types(described.filter(|f| encoding::is_typed(f)).map(|f| &f.ty), ty);
                (
                    pattern,
                    body,
                    quote!(#rust_name #json_name fields: #names, shapes: #shapes, checks: #encoded),
                )
            }
            VariantKind::Tuple(elements) => {
                let bindings: Vec<syn::Ident> =
                    (0..elements.len()).map(|i| quote::format_ident!("__v{}", i)).collect();
                let pattern = quote!(Self::#ident(#(#bindings),*));
                let references: Vec<TokenStream> = bindings.iter().map(|b| quote!(#b)).collect();
                let shapes = shape_types(elements.iter().map(|e| &e.ty), ty);
                (pattern, element_walks(elements, &references), quote!(#rust_name #json_name tuple: #shapes))
            }
        };
        let body = match (content_key(variant), body.is_empty()) {
            (Some(key), false) => quote!(__audit.enter(#key); #(#body)* __audit.leave();),
            _ => quote!(#(#body)*),
        };
        arms.push(quote!(#pattern => { #body }));
        described.push(quote!((#description)));
    }
    let tagging_tokens = match tagging {
        Tagging::External => quote!(#p::Tagging::External),
        Tagging::Internal { tag } => quote!(#p::Tagging::Internal { tag: #tag }),
        Tagging::Adjacent { tag, content } => quote!(#p::Tagging::Adjacent { tag: #tag, content: #content }),
    };
    let card = if container.is_object() { quote!(Tagged) } else { quote!(NotAnObject) };
    // The walk binds every field of every variant, so none is reported as
    // never read, even in an enum with nothing to check.
    quote! {
        #[automatically_derived]
        impl #p::Audited for #ty {
            #[allow(clippy::all)]
            fn audit<__L: #p::LazyWalk>(&self, __audit: &mut #p::Audit<'_>, _: bool) {
                #probes
                match self {
                    #(#arms)*
                }
            }
            #p::derived_items! {
                enum: #ty,
                rust_name: #rust_name,
                tool_name: #tool_name,
                description: #description,
                tagging: #tagging_tokens,
                card: #card,
                variants: [#(#described)*],
            }
        }
        #(#object_contents)*
        #[automatically_derived]
        impl #p::VariantName for #ty {
            fn variant_name(&self) -> &'static str {
                match self {
                    #(#names)*
                }
            }
        }
    }
}

/// The binding of a struct variant's field in the derived walk.
fn variant_binding(field: &syn::Ident) -> syn::Ident {
    quote::format_ident!("__v_{}", crate::case::unraw(field))
}

/// A check lowered for a struct reads its fields as `__this.field`; inside
/// a struct variant's arm the fields are the bindings of its pattern, each
/// a reference, so `__this.field` becomes `(*__v_field)` (spans kept, so
/// errors still land on the user's tokens). One lowering serves both.
fn in_variant(tokens: TokenStream) -> TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        match (&trees[i], trees.get(i + 1), trees.get(i + 2)) {
            (TokenTree::Ident(this), Some(TokenTree::Punct(dot)), Some(TokenTree::Ident(field)))
                if this == "__this" && dot.as_char() == '.' =>
            {
                let mut binding = variant_binding(field);
                binding.set_span(field.span());
                let mut group = Group::new(Delimiter::Parenthesis, quote!(*#binding));
                group.set_span(field.span());
                out.push(TokenTree::Group(group));
                i += 3;
            }
            (TokenTree::Group(group), _, _) => {
                let mut inner = Group::new(group.delimiter(), in_variant(group.stream()));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
                i += 1;
            }
            (other, _, _) => {
                out.push(other.clone());
                i += 1;
            }
        }
    }
    out.into_iter().collect()
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
