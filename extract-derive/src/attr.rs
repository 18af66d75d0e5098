//! Attribute parsing: `#[extract(...)]`, and the parts of `#[serde(...)]` and
//! `#[schemars(...)]` that decide the names and requiredness the model sees.
//! Each parser records its errors and carries on, so all of them are reported.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Attribute, Lit, LitBool, LitStr};

use crate::case::RenameRule;
use crate::ctxt::{Errors, did_you_mean};

/// A value with the span of the token that set it.
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// What `#[extract(...)]` on a struct says.
#[derive(Default)]
pub struct ContainerExtract {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
}

/// What `#[extract(...)]` on a field says.
#[derive(Default)]
pub struct FieldExtract {
    pub recoverable: Option<Spanned<bool>>,
    /// Where `per_window` is written, if it is.
    pub per_window: Option<Span>,
}

/// What `#[serde(...)]` on a struct or enum says, as far as the model's view goes.
#[derive(Default)]
pub struct ContainerSerde {
    pub rename_all: Option<RenameRule>,
    pub default: bool,
    /// An enum's `tag = "..."` (internally or, with `content`, adjacently tagged).
    pub tag: Option<Spanned<String>>,
    /// An enum's `content = "..."`.
    pub content: Option<Spanned<String>>,
    /// An enum's `rename_all_fields`: the rule for its struct variants' fields.
    pub rename_all_fields: Option<RenameRule>,
}

/// What `#[serde(...)]` on an enum's variant says.
#[derive(Default)]
pub struct VariantSerde {
    pub rename: Option<String>,
    /// The rule for this struct variant's fields.
    pub rename_all: Option<RenameRule>,
    pub skip: bool,
}

/// What `#[serde(...)]` on a field says, as far as the model's view goes.
#[derive(Default)]
pub struct FieldSerde {
    pub rename: Option<String>,
    pub default: Option<Span>,
    pub skip: bool,
    pub has_custom_deserializer: bool,
}

const CONTAINER_EXTRACT_KEYS: [&str; 2] = ["name", "description"];
const FIELD_EXTRACT_KEYS: [&str; 2] = ["recoverable", "per_window"];

/// Serde keys that change the shape the model must produce in ways the
/// derive cannot mirror faithfully, with the reason.
const UNSUPPORTED_SERDE: [(&str, &str); 9] = [
    (
        "flatten",
        "`flatten` is not supported: the derive could not list the flattened fields' names, checks or tags",
    ),
    (
        "alias",
        "`alias` is not supported: the tool schema would advertise one name while other names are accepted",
    ),
    ("transparent", "`transparent` is not supported: the tool input must be an object with named fields"),
    (
        "from",
        "`from` is not supported: the schema would describe the struct, not the type it is deserialized from",
    ),
    (
        "try_from",
        "`try_from` is not supported: the schema would describe the struct, not the type it is deserialized from",
    ),
    ("remote", "`remote` is not supported on an extractable type"),
    ("tag", "`tag` applies to enums; the derive supports structs with named fields"),
    ("untagged", "`untagged` applies to enums; the derive supports structs with named fields"),
    ("content", "`content` applies to enums; the derive supports structs with named fields"),
];

/// The doc comment of an item, lines joined, one leading space stripped.
pub fn doc_comment(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) = &nv.value
        {
            let line = s.value();
            lines.push(line.strip_prefix(' ').map(str::to_string).unwrap_or(line));
        }
    }
    lines.join("\n").trim().to_string()
}

/// Calls `f` on every key of every `#[name(...)]` attribute, recording parse errors.
fn each_meta(
    attrs: &[Attribute],
    name: &str,
    errors: &mut Errors,
    mut f: impl FnMut(&ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident(name)) {
        if let Err(e) = attr.parse_nested_meta(|meta| f(&meta, errors)) {
            errors.push(e);
        }
    }
}

/// Skips the value of a key this parser does not read (`= expr` or
/// `(...)`, whatever tokens the parentheses hold: `extend("x" = 1)` too).
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    let path = &meta.path;
    path.get_ident()
        .map(|i| i.to_string())
        .unwrap_or_else(|| quote::quote!(#path).to_string().replace(' ', ""))
}

fn parse_string(meta: &ParseNestedMeta<'_>, key: &str, errors: &mut Errors) -> syn::Result<Option<LitStr>> {
    let value = meta.value()?;
    let lit: Lit = value.parse()?;
    match lit {
        Lit::Str(s) => Ok(Some(s)),
        other => {
            errors.spanned(&other, format!("`{key}` takes a string, like `{key} = \"...\"`"));
            Ok(None)
        }
    }
}

fn parse_bool(meta: &ParseNestedMeta<'_>, key: &str, errors: &mut Errors) -> syn::Result<Option<LitBool>> {
    let value = meta.value()?;
    let lit: Lit = value.parse()?;
    match lit {
        Lit::Bool(b) => Ok(Some(b)),
        other => {
            errors.spanned(&other, format!("`{key}` takes `true` or `false`, like `{key} = false`"));
            Ok(None)
        }
    }
}

/// Remembers which keys one attribute list set, to report duplicates.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn first_time(&mut self, meta: &ParseNestedMeta<'_>, key: &str, errors: &mut Errors) -> bool {
        if self.0.iter().any(|k| k == key) {
            errors.spanned(&meta.path, format!("duplicate `{key}` in `#[extract(...)]`"));
            false
        } else {
            self.0.push(key.to_string());
            true
        }
    }
}

/// Parses every `#[extract(...)]` on a struct.
pub fn container_extract(attrs: &[Attribute], errors: &mut Errors) -> ContainerExtract {
    let mut out = ContainerExtract::default();
    let mut seen = Seen::default();
    each_meta(attrs, "extract", errors, |meta, errors| {
        let key = key_name(meta);
        match key.as_str() {
            "name" => {
                let fresh = seen.first_time(meta, "name", errors);
                if let Some(s) = parse_string(meta, "name", errors)?
                    && fresh
                {
                    out.name = Some(Spanned { value: s.value(), span: s.span() });
                }
            }
            "description" => {
                let fresh = seen.first_time(meta, "description", errors);
                if let Some(s) = parse_string(meta, "description", errors)?
                    && fresh
                {
                    out.description = Some(s.value());
                }
            }
            "recoverable" => {
                errors.spanned(
                    &meta.path,
                    "`recoverable` is a field tag: put `#[extract(recoverable = false)]` on a field",
                );
                skip_value(meta)?;
            }
            "per_window" => {
                errors.spanned(
                    &meta.path,
                    "`per_window` is a field tag: put `#[extract(per_window)]` on the list gathered window by window",
                );
                skip_value(meta)?;
            }
            _ => {
                errors.spanned(
                    &meta.path,
                    format!(
                        "unknown key `{key}` in `#[extract(...)]` on a struct (expected `name` or `description`){}",
                        did_you_mean(&key, CONTAINER_EXTRACT_KEYS)
                    ),
                );
                skip_value(meta)?;
            }
        }
        Ok(())
    });
    out
}

/// Parses every `#[extract(...)]` on a field.
pub fn field_extract(attrs: &[Attribute], errors: &mut Errors) -> FieldExtract {
    let mut out = FieldExtract::default();
    let mut seen = Seen::default();
    each_meta(attrs, "extract", errors, |meta, errors| {
        let key = key_name(meta);
        if key == "recoverable" {
            let fresh = seen.first_time(meta, "recoverable", errors);
            if let Some(b) = parse_bool(meta, "recoverable", errors)?
                && fresh
            {
                out.recoverable = Some(Spanned { value: b.value, span: meta.path.span() });
            }
        } else if key == "per_window" {
            let fresh = seen.first_time(meta, "per_window", errors);
            if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                errors.spanned(&meta.path, "`per_window` takes no value: write `#[extract(per_window)]`");
                skip_value(meta)?;
            } else if fresh {
                out.per_window = Some(meta.path.span());
            }
        } else {
            let hint = if CONTAINER_EXTRACT_KEYS.contains(&key.as_str()) {
                format!("; `{key}` belongs on the struct")
            } else {
                did_you_mean(&key, FIELD_EXTRACT_KEYS)
            };
            errors.spanned(
                &meta.path,
                format!(
                    "unknown key `{key}` in `#[extract(...)]` on a field (expected `recoverable` or `per_window`){hint}"
                ),
            );
            skip_value(meta)?;
        }
        Ok(())
    });
    out
}

/// Reads `rename(serialize = .., deserialize = ..)`-style values: both sides
/// must agree, since the tool input and the output packet use one set of names.
fn symmetric_string(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(syn::Token![=]) {
        return parse_string(meta, key, errors);
    }
    let mut serialize = None;
    let mut deserialize = None;
    meta.parse_nested_meta(|inner| {
        let which = key_name(&inner);
        let value = parse_string(&inner, &which, errors)?;
        match which.as_str() {
            "serialize" => serialize = value,
            "deserialize" => deserialize = value,
            _ => {}
        }
        Ok(())
    })?;
    match (serialize, deserialize) {
        (Some(s), Some(d)) if s.value() == d.value() => Ok(Some(d)),
        _ => {
            errors.spanned(
                &meta.path,
                format!(
                    "asymmetric `{key}` is not supported: the tool schema and the output packet must use the same names; write `{key} = \"...\"`"
                ),
            );
            Ok(None)
        }
    }
}

/// A `rename_all`-style rule.
fn rename_rule(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<Option<RenameRule>> {
    let Some(rule) = symmetric_string(meta, key, errors)? else { return Ok(None) };
    let parsed = RenameRule::parse(&rule.value());
    if parsed.is_none() {
        errors.spanned(
            &rule,
            format!(
                "unknown `{key}` rule \"{}\"; expected one of {}",
                rule.value(),
                RenameRule::NAMES.join(", ")
            ),
        );
    }
    Ok(parsed)
}

/// Parses every `#[serde(...)]` on a struct or (`is_enum`) an enum.
pub fn container_serde(attrs: &[Attribute], is_enum: bool, errors: &mut Errors) -> ContainerSerde {
    let mut out = ContainerSerde::default();
    each_meta(attrs, "serde", errors, |meta, errors| {
        let key = key_name(meta);
        match key.as_str() {
            "rename_all" => out.rename_all = rename_rule(meta, "rename_all", errors)?,
            "rename_all_fields" if is_enum => {
                out.rename_all_fields = rename_rule(meta, "rename_all_fields", errors)?
            }
            "tag" | "content" if is_enum => {
                if let Some(s) = parse_string(meta, &key, errors)? {
                    let value = Some(Spanned { value: s.value(), span: s.span() });
                    if key == "tag" { out.tag = value } else { out.content = value }
                }
            }
            "untagged" if is_enum => errors.spanned(
                &meta.path,
                "#[derive(Extractable)]: serde's `untagged` is not supported: without a tag, an output that fits no variant cannot be told which variant it meant, so its feedback would be vague; tag the enum (`#[serde(tag = \"kind\")]`, or leave serde's default external tag)",
            ),
            "default" => {
                out.default = true;
                skip_value(meta)?;
            }
            _ => other_serde_key(meta, &key, errors)?,
        }
        Ok(())
    });
    out
}

/// A serde key the model's view does not depend on is skipped; one whose
/// shape the derive cannot mirror is an error.
fn other_serde_key(meta: &ParseNestedMeta<'_>, key: &str, errors: &mut Errors) -> syn::Result<()> {
    if let Some((_, why)) = UNSUPPORTED_SERDE.iter().find(|(k, _)| *k == key) {
        errors.spanned(&meta.path, format!("#[derive(Extractable)]: serde's {why}"));
    }
    skip_value(meta)
}

/// Parses every `#[serde(...)]` on an enum's variant.
pub fn variant_serde(attrs: &[Attribute], errors: &mut Errors) -> VariantSerde {
    let mut out = VariantSerde::default();
    each_meta(attrs, "serde", errors, |meta, errors| {
        let key = key_name(meta);
        match key.as_str() {
            "rename" => {
                if let Some(name) = symmetric_string(meta, "rename", errors)? {
                    out.rename = Some(name.value());
                }
            }
            "rename_all" => out.rename_all = rename_rule(meta, "rename_all", errors)?,
            "skip" | "skip_deserializing" => out.skip = true,
            "other" => errors.spanned(
                &meta.path,
                "#[derive(Extractable)]: serde's `other` is not supported: the tool schema would list this variant's tag while any unknown tag is accepted as it; name the open category as a variant of its own (an `Other` variant with a detail field)",
            ),
            "untagged" => errors.spanned(
                &meta.path,
                "#[derive(Extractable)]: serde's `untagged` is not supported on a variant: an output that fits no variant could not be told which variant it meant",
            ),
            "with" | "deserialize_with" | "serialize_with" => {
                errors.spanned(
                    &meta.path,
                    format!("#[derive(Extractable)]: serde's `{key}` is not supported on a variant: the schema would describe the variant, not what is deserialized"),
                );
                skip_value(meta)?;
            }
            _ => other_serde_key(meta, &key, errors)?,
        }
        Ok(())
    });
    out
}

/// Parses every `#[serde(...)]` on a field.
pub fn field_serde(attrs: &[Attribute], errors: &mut Errors) -> FieldSerde {
    let mut out = FieldSerde::default();
    each_meta(attrs, "serde", errors, |meta, errors| {
        let key = key_name(meta);
        match key.as_str() {
            "rename" => {
                if let Some(name) = symmetric_string(meta, "rename", errors)? {
                    out.rename = Some(name.value());
                }
            }
            "default" => {
                out.default = Some(meta.path.span());
                skip_value(meta)?;
            }
            "skip" | "skip_deserializing" => out.skip = true,
            "with" | "deserialize_with" => {
                out.has_custom_deserializer = true;
                skip_value(meta)?;
            }
            _ => other_serde_key(meta, &key, errors)?,
        }
        Ok(())
    });
    out
}

/// `#[schemars(...)]` keys that would make the schema disagree with serde.
/// `#[schemars(...)]` keys that keep the schema's names and shape as the
/// derive reads them: descriptions and examples, and validation keywords the
/// structure layer enforces.
const SCHEMARS_KEYS_KEPT: &[&str] = &[
    "description",
    "title",
    "example",
    "examples",
    "deprecated",
    "inline",
    "range",
    "length",
    "regex",
    "pattern",
    "contains",
    "email",
    "url",
    "inner",
    "with",
    "schema_with",
    "crate",
    "bound",
];

pub fn reject_schemars_shape_keys(attrs: &[Attribute], errors: &mut Errors) -> bool {
    let mut has_schema_override = false;
    each_meta(attrs, "schemars", errors, |meta, errors| {
        let key = key_name(meta);
        match key.as_str() {
            "rename" | "rename_all" | "skip" | "flatten" | "default" | "skip_deserializing" => {
                errors.spanned(
                    &meta.path,
                    format!(
                        "put `{key}` in `#[serde(...)]`, not `#[schemars(...)]`: the schema the model sees and the deserializer must agree"
                    ),
                );
            }
            "with" | "schema_with" => has_schema_override = true,
            key if SCHEMARS_KEYS_KEPT.contains(&key) => {}
            "extend" | "transform" => errors.spanned(
                &meta.path,
                format!(
                    "`{key}` is not supported by #[derive(Extractable)]: it can change the schema (its required fields, its names) in ways the derive's model of the type cannot follow; state the constraint with a `#[check]`, or with schemars' validation keys (`range`, `length`, `regex`, ...)"
                ),
            ),
            _ => errors.spanned(
                &meta.path,
                format!(
                    "`{key}` in `#[schemars(...)]` is not supported by #[derive(Extractable)]: the derive does not read it, and cannot vouch that the schema still matches what it validates; the keys it supports are {}",
                    SCHEMARS_KEYS_KEPT.join(", ")
                ),
            ),
        }
        skip_value(meta)
    });
    has_schema_override
}
