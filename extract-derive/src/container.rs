//! The model of a struct the derive works from: the names, requiredness and
//! tags the model sees, built from the raw attributes. Mistakes in an
//! attribute's own syntax are recorded as it is read; mistakes that need the
//! whole model (a tag that contradicts the field's type, two fields with one
//! JSON name, a bad tool name, a check's bad literal) are found afterwards
//! by [`validate`](crate::validate), before anything is emitted.

use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::case::{snake_case, unraw};
use crate::check::{self, Check};
use crate::ctxt::Errors;
use crate::shape::Shape;

/// A struct the derive can implement `Extractable` for.
pub struct Container {
    pub ident: Ident,
    pub tool_name: String,
    /// Where `#[extract(name = ...)]` sets the tool name; `None` for the default name.
    pub tool_name_span: Option<Span>,
    pub description: String,
    pub fields: Vec<Field>,
    pub checks: Vec<Check>,
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
    /// Written as `Option<..>`.
    pub is_option: bool,
    /// Under `#[serde(default)]` (on the field or the struct).
    pub defaulted: bool,
    /// How the type holds values, or the part of it the walk cannot see inside.
    pub shape: Result<Shape, Type>,
}

impl Container {
    /// Builds the model, or `None` when the item is not a struct with named
    /// fields (the error is recorded).
    pub fn from_ast(input: &DeriveInput, errors: &mut Errors) -> Option<Container> {
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => Some(named),
                Fields::Unnamed(_) => {
                    errors.spanned(
                        &input.ident,
                        "#[derive(Extractable)] supports structs with named fields; a tuple struct has no field names for the model to fill",
                    );
                    None
                }
                Fields::Unit => {
                    errors.spanned(
                        &input.ident,
                        "#[derive(Extractable)] supports structs with named fields; a unit struct has nothing for the model to fill",
                    );
                    None
                }
            },
            Data::Enum(e) => {
                errors.spanned(
                    e.enum_token,
                    "#[derive(Extractable)] supports structs with named fields; an enum cannot be the top-level type yet (use it as a field of a struct)",
                );
                None
            }
            Data::Union(u) => {
                errors.spanned(
                    u.union_token,
                    "#[derive(Extractable)] supports structs with named fields, not unions",
                );
                None
            }
        };
        let extract = attr::container_extract(&input.attrs, errors);
        let serde = attr::container_serde(&input.attrs, errors);
        attr::reject_schemars_shape_keys(&input.attrs, errors);

        let (tool_name, tool_name_span) = match extract.name {
            Some(name) => (name.value, Some(name.span)),
            None => (snake_case(&unraw(&input.ident)), None),
        };
        let description = extract.description.unwrap_or_else(|| attr::doc_comment(&input.attrs));

        let mut fields = Vec::new();
        for field in named.into_iter().flat_map(|n| &n.named) {
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
            let json_name = field_serde.rename.clone().unwrap_or_else(|| {
                serde.rename_all.map_or(rust_name.clone(), |r| r.apply_to_field(&rust_name))
            });
            let is_option = is_option(&field.ty);
            let defaulted = field_serde.default.is_some() || serde.default;
            fields.push(Field {
                ident,
                rust_name,
                json_name,
                ty: field.ty.clone(),
                skipped: field_serde.skip,
                required: !is_option && !defaulted && !field_serde.skip,
                recoverable: field_extract.recoverable.as_ref().is_none_or(|tag| tag.value),
                recoverable_tag: field_extract.recoverable.map(|tag| tag.span),
                is_option,
                defaulted,
                shape: Shape::of(&field.ty).map_err(Clone::clone),
            });
        }
        let checks = check::parse_all(&input.attrs, &fields, errors);
        named.map(|_| Container {
            ident: input.ident.clone(),
            tool_name,
            tool_name_span,
            description,
            fields,
            checks,
        })
    }
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
