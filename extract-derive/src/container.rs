//! The model of a type the derive works from: the names, requiredness and
//! tags the model sees, built from the raw attributes. Mistakes in an
//! attribute's own syntax are recorded as it is read; mistakes that need the
//! whole model (a tag that contradicts the field's type, two fields with one
//! JSON name, a bad tool name, a check's bad literal) are found afterwards
//! by [`validate`](crate::validate), before anything is emitted.

use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::case::{RenameRule, snake_case, unraw};
use crate::check::{self, Check};
use crate::ctxt::Errors;
use crate::shape::Shape;

/// A type the derive can implement `Extractable` for.
pub struct Container {
    pub ident: Ident,
    pub generics: syn::Generics,
    pub tool_name: String,
    /// Where `#[extract(name = ...)]` sets the tool name; `None` for the default name.
    pub tool_name_span: Option<Span>,
    pub description: String,
    /// A struct's named fields (none for the other forms).
    pub fields: Vec<Field>,
    /// A struct's or tuple struct's checks.
    pub checks: Vec<Check>,
    pub form: Form,
}

/// What kind of type it is, beyond a struct's named fields.
pub enum Form {
    /// A struct with named fields (`fields`).
    Struct,
    /// A newtype (one element) or tuple struct.
    Tuple(Vec<Element>),
    /// An enum.
    Enum { tagging: Tagging, variants: Vec<Variant> },
}

/// How an enum's JSON names its variant (serde's tagged representations).
pub enum Tagging {
    External,
    Internal { tag: String },
    Adjacent { tag: String, content: String },
}

/// An unnamed field of a tuple struct or tuple variant.
pub struct Element {
    pub ty: Type,
    pub shape: Result<Shape, Type>,
}

/// One variant of an enum.
pub struct Variant {
    pub ident: Ident,
    pub rust_name: String,
    /// The tag the model writes (after serde's renames).
    pub json_name: String,
    /// Skipped by serde: never deserialized, not in the schema.
    pub skipped: bool,
    pub kind: VariantKind,
}

/// What a variant holds.
pub enum VariantKind {
    Unit,
    Struct { fields: Vec<Field>, checks: Vec<Check> },
    Tuple(Vec<Element>),
}

/// One named field.
pub struct Field {
    pub ident: Ident,
    pub rust_name: String,
    /// The name the model sees (after serde's renames).
    pub json_name: String,
    pub ty: Type,
    /// Skipped by serde: not in the schema, never filled by the model.
    pub skipped: bool,
    /// Must be present: not an `Option`, no `#[serde(default)]`.
    pub required: bool,
    /// `false` under `#[extract(recoverable = false)]`.
    pub recoverable: bool,
    /// Where `#[extract(recoverable = ...)]` is written, if it is.
    pub recoverable_tag: Option<Span>,
    /// Under `#[extract(per_window)]`: where it is written.
    pub per_window: Option<Span>,
    /// Written as `Option<..>`.
    pub is_option: bool,
    /// Under `#[serde(default)]` (on the field or the struct).
    pub defaulted: bool,
    /// How the type holds values, or the part of it the walk cannot see inside.
    pub shape: Result<Shape, Type>,
}

impl Container {
    /// Builds the model, or `None` when the item is a form the derive does
    /// not support (the error is recorded).
    pub fn from_ast(input: &DeriveInput, errors: &mut Errors) -> Option<Container> {
        let is_enum = matches!(input.data, Data::Enum(_));
        let extract = attr::container_extract(&input.attrs, errors);
        let serde = attr::container_serde(&input.attrs, is_enum, errors);
        attr::reject_schemars_shape_keys(&input.attrs, errors);

        let (tool_name, tool_name_span) = match extract.name {
            Some(name) => (name.value, Some(name.span)),
            None => (snake_case(&unraw(&input.ident)), None),
        };
        let description = extract.description.unwrap_or_else(|| attr::doc_comment(&input.attrs));
        let (fields, checks, form) = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => {
                    let generic = !input.generics.params.is_empty();
                    let fields = named_fields(named, serde.rename_all, serde.default, generic, errors);
                    let checks = check::parse_all(&input.attrs, Some(&fields), errors);
                    (fields, checks, Form::Struct)
                }
                Fields::Unnamed(unnamed) => {
                    let checks = check::parse_all(&input.attrs, None, errors);
                    (Vec::new(), checks, Form::Tuple(elements(unnamed, errors)))
                }
                Fields::Unit => {
                    errors.spanned(
                        &input.ident,
                        "#[derive(Extractable)] supports structs with fields, enums, newtypes and tuple structs; a unit struct has nothing for the model to fill",
                    );
                    return None;
                }
            },
            Data::Enum(e) => {
                if e.variants.is_empty() {
                    errors
                        .spanned(&input.ident, "an enum with no variants has no value for the model to give");
                }
                for attr in input.attrs.iter().filter(|a| a.path().is_ident("check")) {
                    errors.spanned(
                        attr,
                        "a `#[check]` on an enum has no fields to read: put it on the struct variant whose fields it checks",
                    );
                }
                let tagging = match (serde.tag, serde.content) {
                    (None, None) => Tagging::External,
                    (Some(tag), None) => Tagging::Internal { tag: tag.value },
                    (Some(tag), Some(content)) => {
                        Tagging::Adjacent { tag: tag.value, content: content.value }
                    }
                    (None, Some(content)) => {
                        errors.at(content.span, "serde's `content` needs a `tag` beside it");
                        Tagging::External
                    }
                };
                let variants = e
                    .variants
                    .iter()
                    .map(|v| variant(v, serde.rename_all, serde.rename_all_fields, errors))
                    .collect();
                (Vec::new(), Vec::new(), Form::Enum { tagging, variants })
            }
            Data::Union(u) => {
                errors.spanned(
                    u.union_token,
                    "#[derive(Extractable)] supports structs, enums, newtypes and tuple structs, not unions",
                );
                return None;
            }
        };
        Some(Container {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            tool_name,
            tool_name_span,
            description,
            fields,
            checks,
            form,
        })
    }

    /// Each list of named fields with the checks over it: the struct's own,
    /// a tuple struct's checks (over no named fields), each struct variant's.
    pub fn field_sets(&self) -> Vec<(&[Field], &[Check])> {
        match &self.form {
            Form::Struct | Form::Tuple(_) => vec![(&self.fields, &self.checks)],
            Form::Enum { variants, .. } => variants
                .iter()
                .filter_map(|v| match &v.kind {
                    VariantKind::Struct { fields, checks } => Some((fields.as_slice(), checks.as_slice())),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Every unnamed field: a tuple struct's, each tuple variant's.
    pub fn elements(&self) -> Vec<&Element> {
        match &self.form {
            Form::Struct => Vec::new(),
            Form::Tuple(elements) => elements.iter().collect(),
            Form::Enum { variants, .. } => variants
                .iter()
                .flat_map(|v| match &v.kind {
                    VariantKind::Tuple(elements) => elements.iter().collect(),
                    _ => Vec::new(),
                })
                .collect(),
        }
    }

    /// Whether the type's JSON is always an object, so it can be the
    /// top-level type of an extraction.
    pub fn is_object(&self) -> bool {
        match &self.form {
            Form::Struct => true,
            Form::Tuple(_) => false,
            Form::Enum { tagging, .. } => !matches!(tagging, Tagging::External),
        }
    }
}

/// The named fields of a struct or struct variant, `rename_all` and a
/// container's `default` applied.
fn named_fields(
    named: &syn::FieldsNamed,
    rename_all: Option<RenameRule>,
    container_default: bool,
    generic: bool,
    errors: &mut Errors,
) -> Vec<Field> {
    let mut fields = Vec::new();
    for field in &named.named {
        let ident = field.ident.clone().expect("named fields have names");
        let rust_name = unraw(&ident);
        let field_serde = attr::field_serde(&field.attrs, errors);
        let field_extract = attr::field_extract(&field.attrs, errors);
        let schema_override = attr::reject_schemars_shape_keys(&field.attrs, errors);
        if field_serde.has_custom_deserializer && !schema_override {
            errors.spanned(
                &ident,
                "a field with serde's `with`/`deserialize_with` needs `#[schemars(with = \"...\")]` too, so the schema matches what is deserialized",
            );
        }
        let json_name = field_serde
            .rename
            .clone()
            .unwrap_or_else(|| rename_all.map_or(rust_name.clone(), |r| r.apply_to_field(&rust_name)));
        let is_option = is_option(&field.ty);
        let defaulted = field_serde.default.is_some() || container_default;
        if let Some(span) = field_extract.per_window {
            if generic {
                errors.at(span, "`per_window` on a generic struct is not supported: name the item type");
            } else if crate::emit::written_as(&field.ty, "Vec").is_none() {
                let ty = &field.ty;
                errors.at(
                    span,
                    format!(
                        "`per_window` gathers a list window by window: it goes on a `Vec` of items, and `{}` is not one",
                        quote::quote!(#ty).to_string().replace(' ', "")
                    ),
                );
            }
        }
        fields.push(Field {
            ident,
            rust_name,
            json_name,
            ty: field.ty.clone(),
            skipped: field_serde.skip,
            required: !is_option && !defaulted && !field_serde.skip,
            recoverable: field_extract.recoverable.as_ref().is_none_or(|tag| tag.value),
            recoverable_tag: field_extract.recoverable.map(|tag| tag.span),
            per_window: field_extract.per_window,
            is_option,
            defaulted,
            shape: Shape::of(&field.ty).map_err(Clone::clone),
        });
    }
    fields
}

/// The unnamed fields of a tuple struct or tuple variant. Their tags and
/// renames have no name to attach to.
fn elements(unnamed: &syn::FieldsUnnamed, errors: &mut Errors) -> Vec<Element> {
    unnamed
        .unnamed
        .iter()
        .map(|field| {
            let tagged = attr::field_extract(&field.attrs, errors);
            if let Some(tag) = tagged.recoverable {
                errors.at(
                    tag.span,
                    "`recoverable` tags a named field, whose absence the model can report; an unnamed field is never absent on its own",
                );
            }
            if let Some(span) = tagged.per_window {
                errors.at(span, "`per_window` tags a named field of the extracted struct: a `Vec` of items");
            }
            let serde = attr::field_serde(&field.attrs, errors);
            if serde.skip || serde.default.is_some() || serde.has_custom_deserializer {
                errors.spanned(
                    &field.ty,
                    "#[derive(Extractable)]: serde's `skip`, `default` and `with` are not supported on an unnamed field: the array the schema describes would not be the one serde reads",
                );
            }
            attr::reject_schemars_shape_keys(&field.attrs, errors);
            Element { ty: field.ty.clone(), shape: Shape::of(&field.ty).map_err(Clone::clone) }
        })
        .collect()
}

/// One variant, its name under `rename_all` and its fields under
/// `rename_all_fields` (or its own `rename_all`).
fn variant(
    variant: &syn::Variant,
    rename_all: Option<RenameRule>,
    rename_all_fields: Option<RenameRule>,
    errors: &mut Errors,
) -> Variant {
    let rust_name = unraw(&variant.ident);
    let serde = attr::variant_serde(&variant.attrs, errors);
    let json_name = serde
        .rename
        .clone()
        .unwrap_or_else(|| rename_all.map_or(rust_name.clone(), |r| r.apply_to_variant(&rust_name)));
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("extract")) {
        errors.spanned(attr, "`#[extract(...)]` goes on a field or on the type, not on a variant");
    }
    attr::reject_schemars_shape_keys(&variant.attrs, errors);
    let checks_written = variant.attrs.iter().filter(|a| a.path().is_ident("check"));
    let kind = match &variant.fields {
        Fields::Named(named) => {
            let fields = named_fields(named, serde.rename_all.or(rename_all_fields), false, false, errors);
            // Lists are gathered window by window on the extracted struct only.
            for span in fields.iter().filter_map(|f| f.per_window) {
                errors.at(span, "`per_window` tags a list of the extracted struct, not of an enum's variant");
            }
            let checks = check::parse_all(&variant.attrs, Some(&fields), errors);
            VariantKind::Struct { fields, checks }
        }
        Fields::Unnamed(unnamed) => {
            for attr in checks_written {
                errors.spanned(
                    attr,
                    "a `#[check]` goes on a struct variant, whose fields it names; a tuple variant's fields have no names (make it a struct variant, or check its value's own type)",
                );
            }
            VariantKind::Tuple(elements(unnamed, errors))
        }
        Fields::Unit => {
            for attr in checks_written {
                errors.spanned(attr, "a `#[check]` on a unit variant has no fields to read");
            }
            VariantKind::Unit
        }
    };
    Variant { ident: variant.ident.clone(), rust_name, json_name, skipped: serde.skip, kind }
}

/// Whether a type is written as `Option<..>` (the derive sees syntax only; a
/// type alias of `Option` counts as required).
pub fn is_option(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|s| {
            s.ident == "Option" && matches!(s.arguments, syn::PathArguments::AngleBracketed(_))
        }),
        Type::Group(g) => is_option(&g.elem),
        Type::Paren(p) => is_option(&p.elem),
        _ => false,
    }
}
