//! The validation stage: every rule that needs the whole model, checked
//! after the model is built and before anything is emitted, so emission
//! never discovers an error. Each finding is recorded with the span of the
//! user's token, and all of them are reported together.

use syn::DeriveInput;

use crate::case::is_valid_tool_name;
use crate::check::{CheckKind, Node, Op};
use crate::container::{Container, Field, Form, Tagging, Variant, VariantKind};
use crate::ctxt::Errors;

/// Checks `container` (built from `input`), recording every mistake.
pub fn container(input: &DeriveInput, container: &Container, errors: &mut Errors) {
    generics(input, container, errors);
    tool_name(container, errors);
    for (fields, checks) in container.field_sets() {
        recoverable_tags(fields, errors);
        walkable(fields, errors);
        json_names(fields, errors);
        for check in checks {
            if let CheckKind::Expr(node) = &check.kind {
                check_node(node, false, errors);
            }
            // The runtime's description of a check separates its parts with
            // the characters U+0001 to U+0004.
            for text in check.message.iter().chain(&check.code) {
                if text.value().chars().any(extract_contract::is_mark) {
                    errors.spanned(
                        text,
                        "this text holds a control character from U+0001 to U+0004; remove it",
                    );
                }
            }
        }
    }
    for element in container.elements() {
        if let Err(hidden) = &element.shape {
            errors.spanned(&element.ty, cannot_walk("this field", hidden));
        }
    }
    if let Form::Enum { tagging, variants } = &container.form {
        variant_names(tagging, variants, errors);
    }
}

/// Two variants the model sees may not share a tag; a tag holds no
/// control character; an internally tagged variant's field may not take
/// the tag's key, nor a newtype variant's value be anything but an object.
fn variant_names(tagging: &Tagging, variants: &[Variant], errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for variant in variants.iter().filter(|v| !v.skipped) {
        if variant.json_name.chars().any(char::is_control) {
            errors.spanned(
                &variant.ident,
                format!("the tag {:?} holds a control character; rename the variant", variant.json_name),
            );
        }
        if seen.contains(&variant.json_name.as_str()) {
            errors.spanned(
                &variant.ident,
                format!("two variants are named \"{}\" in JSON; rename one", variant.json_name),
            );
        }
        seen.push(&variant.json_name);
        if let (Tagging::Internal { tag }, VariantKind::Struct { fields, .. }) = (tagging, &variant.kind)
            && let Some(field) = fields.iter().find(|f| !f.skipped && f.json_name == *tag)
        {
            errors.spanned(
                &field.ident,
                format!(
                    "this field's JSON name \"{tag}\" is the enum's tag key; rename the field or the tag"
                ),
            );
        }
    }
}

/// A generic struct's type parameters are filled by types that are walked
/// (the derive adds `T: Audited + 'static` itself); its checks can read its
/// own fields, but not the fields of a `T`, which the derive cannot see.
fn generics(input: &DeriveInput, container: &Container, errors: &mut Errors) {
    let params = &input.generics.params;
    if params.is_empty() {
        return;
    }
    if !matches!(container.form, Form::Struct) {
        errors.spanned(
            &input.generics,
            "#[derive(Extractable)] supports generic structs with named fields only, not generic enums, newtypes or tuple structs; define a concrete type",
        );
        return;
    }
    for param in params {
        match param {
            syn::GenericParam::Type(_) => {}
            syn::GenericParam::Lifetime(l) => errors.spanned(
                l,
                "#[derive(Extractable)] does not support lifetime parameters: an extracted value owns its data (it is deserialized from the model's output)",
            ),
            syn::GenericParam::Const(c) => errors.spanned(
                c,
                "#[derive(Extractable)] does not support const parameters; use a type parameter or a concrete type",
            ),
        }
    }
    let type_params: Vec<&syn::Ident> = input.generics.type_params().map(|p| &p.ident).collect();
    for check in &container.checks {
        let CheckKind::Expr(node) = &check.kind else { continue };
        node.paths(&mut |path, _| {
            let [first, _, ..] = path.hops.as_slice() else { return };
            let Some(field) = container.fields.iter().find(|f| f.ident == *first) else { return };
            if let Some(param) = type_params.iter().find(|p| mentions(&field.ty, p)) {
                errors.spanned(
                    first,
                    format!(
                        "this check reads a field of `{param}`, a type parameter: its fields are not known where `{}` is defined, so the check cannot be typed; put the check on the type that fills `{param}` (a check on `{}` itself, like `count({})`, works)",
                        container.ident, first, first
                    ),
                );
            }
        });
    }
}

/// Whether `ty` names the type parameter `param` anywhere.
fn mentions(ty: &syn::Type, param: &syn::Ident) -> bool {
    quote::ToTokens::to_token_stream(ty).into_iter().any(|tree| is_ident(&tree, param))
}

fn is_ident(tree: &proc_macro2::TokenTree, param: &syn::Ident) -> bool {
    match tree {
        proc_macro2::TokenTree::Ident(ident) => ident == param,
        proc_macro2::TokenTree::Group(group) => group.stream().into_iter().any(|t| is_ident(&t, param)),
        _ => false,
    }
}

fn tool_name(container: &Container, errors: &mut Errors) {
    if is_valid_tool_name(&container.tool_name) {
        return;
    }
    match container.tool_name_span {
        Some(span) => errors.at(
            span,
            format!(
                "invalid tool name \"{}\": a tool name must match ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, `_` and `-`, 1 to 64 characters)",
                container.tool_name
            ),
        ),
        None => errors.spanned(
            &container.ident,
            format!(
                "the default tool name \"{}\" does not match ^[a-zA-Z0-9_-]{{1,64}}$; set one with #[extract(name = \"...\")]",
                container.tool_name
            ),
        ),
    }
}

/// `recoverable = false` means "absent from the source": only a field whose
/// absence is otherwise an error can carry it.
fn recoverable_tags(fields: &[Field], errors: &mut Errors) {
    for field in fields {
        let (Some(span), false) = (field.recoverable_tag, field.recoverable) else { continue };
        let name = &field.rust_name;
        if field.is_option {
            errors.at(
                span,
                format!(
                    "`recoverable = false` on the optional field `{name}`: absence is already a valid answer for an `Option`, so there is nothing to escalate; remove the tag or make the field required"
                ),
            );
        } else if field.defaulted {
            errors.at(
                span,
                format!(
                    "`recoverable = false` on `{name}`, which has `#[serde(default)]`: absence is already a valid answer there, so there is nothing to escalate; remove the tag or the default"
                ),
            );
        } else if field.skipped {
            errors.at(
                span,
                format!("`recoverable = false` on `{name}`, which serde skips: the model never fills it"),
            );
        }
    }
}

/// The semantic walk must reach every derived value a field may hold: a
/// type it cannot see inside is an error, never a silent skip.
fn walkable(fields: &[Field], errors: &mut Errors) {
    for field in fields.iter().filter(|f| !f.skipped) {
        if let Err(hidden) = &field.shape {
            errors.spanned(&field.ty, cannot_walk(&format!("field `{}`", field.rust_name), hidden));
        }
    }
}

fn cannot_walk(what: &str, hidden: &syn::Type) -> String {
    let hidden = type_text(hidden);
    format!(
        "#[derive(Extractable)] cannot walk {what}: it cannot see inside `{hidden}`, which may hold a type with #[check]s, and a check that does not run would pass a failed output as valid; hold the values in a container the walk knows (Option, Box, Arc, Rc, Vec, VecDeque, an array or slice, BTreeSet, HashSet, BTreeMap, HashMap, a tuple)"
    )
}

/// Two fields the model sees may not share a JSON name, and a JSON name
/// holds no control character (no model writes one in a key, and the
/// runtime's description of the type separates its names with them).
fn json_names(fields: &[Field], errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for field in fields.iter().filter(|f| !f.skipped) {
        if field.json_name.chars().any(char::is_control) {
            errors.spanned(
                &field.ident,
                format!("the JSON name {:?} holds a control character; rename the field", field.json_name),
            );
        }
        if seen.contains(&field.json_name.as_str()) {
            errors.spanned(
                &field.ident,
                format!("two fields are named \"{}\" in JSON; rename one", field.json_name),
            );
        }
        seen.push(&field.json_name);
    }
}

/// What lowering relies on: literals that parse, and enum variants only as
/// a direct operand of `==` or `!=`. `operand` says whether `node` is one.
fn check_node(node: &Node, operand: bool, errors: &mut Errors) {
    match node {
        Node::Int(lit) => {
            if let Err(e) = lit.base10_parse::<i128>() {
                errors.push(e);
            }
        }
        Node::Float(lit) => {
            if let Err(e) = lit.base10_parse::<f64>() {
                errors.push(e);
            }
        }
        Node::Variant(path) if !operand => errors.spanned(
            path,
            "an enum variant can only be compared with `==` or `!=`, like `status == Status::Paid`",
        ),
        Node::Path(_) | Node::Str(_) | Node::Bool(_) | Node::Variant(_) => {}
        Node::Paren(inner) | Node::Not(inner, _) | Node::Neg(inner, _) => check_node(inner, false, errors),
        Node::Call { arg, .. } => check_node(arg, false, errors),
        Node::Binary { op, op_span, lhs, rhs } => {
            let comparison = op.is_comparison();
            let has_variant = matches!(**lhs, Node::Variant(_)) || matches!(**rhs, Node::Variant(_));
            if comparison && has_variant && !matches!(op, Op::Eq | Op::Ne) {
                errors.at(*op_span, "an enum variant can only be compared with `==` or `!=`");
            }
            check_node(lhs, comparison, errors);
            check_node(rhs, comparison, errors);
        }
    }
}

/// A type as the user wrote it, near enough: `Bag<Part>`, not `Bag < Part >`.
fn type_text(ty: &syn::Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" :: ", "::")
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&")
}
