//! The checked model of a struct: the names, requiredness and tags the model
//! sees, built from the raw attributes with every mistake recorded.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::case::{is_valid_tool_name, snake_case, unraw};
use crate::check::{self, Check};
use crate::ctxt::Errors;

/// A struct the derive can implement `Extractable` for.
pub struct Container {
    pub ident: Ident,
    pub tool_name: String,
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
        if !input.generics.params.is_empty() {
            errors.spanned(
                &input.generics,
                "#[derive(Extractable)] does not support generic types yet; define a concrete struct",
            );
        }

        let extract = attr::container_extract(&input.attrs, errors);
        let serde = attr::container_serde(&input.attrs, errors);
        attr::reject_schemars_shape_keys(&input.attrs, errors);

        let tool_name = match extract.name {
            Some(name) => {
                if !is_valid_tool_name(&name.value) {
                    errors.at(
                        name.span,
                        format!(
                            "invalid tool name \"{}\": a tool name must match ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, `_` and `-`, 1 to 64 characters)",
                            name.value
                        ),
                    );
                }
                name.value
            }
            None => {
                let name = snake_case(&unraw(&input.ident));
                if !is_valid_tool_name(&name) {
                    errors.spanned(
                        &input.ident,
                        format!(
                            "the default tool name \"{name}\" does not match ^[a-zA-Z0-9_-]{{1,64}}$; set one with #[extract(name = \"...\")]"
                        ),
                    );
                }
                name
            }
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
            let mut recoverable = true;
            if let Some(tag) = field_extract.recoverable {
                if !tag.value {
                    if is_option {
                        errors.at(
                            tag.span,
                            format!(
                                "`recoverable = false` on the optional field `{rust_name}`: absence is already a valid answer for an `Option`, so there is nothing to escalate; remove the tag or make the field required"
                            ),
                        );
                    } else if defaulted {
                        errors.at(
                            tag.span,
                            format!(
                                "`recoverable = false` on `{rust_name}`, which has `#[serde(default)]`: absence is already a valid answer there, so there is nothing to escalate; remove the tag or the default"
                            ),
                        );
                    } else if field_serde.skip {
                        errors.at(tag.span, format!("`recoverable = false` on `{rust_name}`, which serde skips: the model never fills it"));
                    }
                }
                recoverable = tag.value;
            }
            fields.push(Field {
                ident,
                rust_name,
                json_name,
                ty: field.ty.clone(),
                skipped: field_serde.skip,
                required: !is_option && !defaulted && !field_serde.skip,
                recoverable,
            });
        }
        if let Some(named) = named {
            let mut seen: Vec<&str> = Vec::new();
            for (field, ast) in fields.iter().zip(&named.named) {
                if field.skipped {
                    continue;
                }
                if seen.contains(&field.json_name.as_str()) {
                    errors.spanned(
                        ast.ident.as_ref(),
                        format!("two fields are named \"{}\" in JSON; rename one", field.json_name),
                    );
                }
                seen.push(&field.json_name);
            }
        }

        let checks = check::parse_all(&input.attrs, &fields, errors);
        named.map(|_| Container { ident: input.ident.clone(), tool_name, description, fields, checks })
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
