//! The check language: `#[check(EXPR, options...)]` parsed and checked here,
//! lowered to typed Rust in [`lower`].

mod ast;
pub mod lower;

use syn::parse::ParseStream;
use syn::{Attribute, Expr, Lit, LitStr, Token};

use crate::container::{Field, is_option};
use crate::ctxt::{Errors, did_you_mean};
pub use ast::{FieldPath, Func, Node, Op};

/// One `#[check(...)]`.
pub struct Check {
    pub kind: CheckKind,
    pub tolerance: Option<Lit>,
    pub message: Option<LitStr>,
    pub placeholders: Vec<Placeholder>,
    pub code: Option<LitStr>,
    pub recoverable: bool,
}

/// What a check evaluates.
pub enum CheckKind {
    /// An expression of the check language.
    Expr(Node),
    /// `with = path::to::function`.
    With(syn::Path),
}

/// A `{name}` in a check's `message`.
pub struct Placeholder {
    /// As written between the braces.
    pub name: String,
    pub target: PlaceholderTarget,
}

/// What a placeholder shows.
pub enum PlaceholderTarget {
    /// Filled by the recorder's `lhs`/`rhs`.
    Side,
    /// The value of the field with this Rust name.
    Field(syn::Ident),
}

const OPTION_KEYS: [&str; 4] = ["tolerance", "message", "code", "recoverable"];

/// Parses every `#[check(...)]` of a struct or struct variant (`fields`
/// its named fields), or of a newtype or tuple struct (`None`: only `with`
/// functions, since a rule has no field names to read).
pub fn parse_all(attrs: &[Attribute], fields: Option<&[Field]>, errors: &mut Errors) -> Vec<Check> {
    let mut checks = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("check")) {
        let parser = |input: ParseStream<'_>| parse_one(input, fields, errors);
        match attr.parse_args_with(parser) {
            Ok(Some(check)) => checks.push(check),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    checks
}

fn parse_one(
    input: ParseStream<'_>,
    named: Option<&[Field]>,
    errors: &mut Errors,
) -> syn::Result<Option<Check>> {
    let fields = named.unwrap_or_default();
    let kind = if input.peek(syn::Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
        let key: syn::Ident = input.parse()?;
        if key != "with" {
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "a check starts with its rule, like `#[check(total >= 0)]`, or with `with = path::to::function`; `{key} = ...` is an option and comes after the rule"
                ),
            ));
        }
        input.parse::<Token![=]>()?;
        let path: syn::Path =
            if input.peek(LitStr) { input.parse::<LitStr>()?.parse()? } else { input.parse()? };
        Some(CheckKind::With(path))
    } else {
        let expr: Expr = input.parse()?;
        if named.is_none() {
            errors.spanned(
                &expr,
                "a newtype's or tuple struct's fields have no names for a rule to read: check it with a function, `#[check(with = path::to::function)]`, that takes `&Self` and returns `Result<(), impl Display>`",
            );
            None
        } else {
            ast::parse(&expr, fields, errors).map(CheckKind::Expr)
        }
    };

    let mut tolerance = None;
    let mut message: Option<LitStr> = None;
    let mut code: Option<LitStr> = None;
    let mut recoverable = None;
    let mut seen: Vec<String> = Vec::new();
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        let key: syn::Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        let name = key.to_string();
        if seen.contains(&name) {
            errors.spanned(&key, format!("duplicate option `{name}` in `#[check(...)]`"));
            continue;
        }
        seen.push(name.clone());
        let lit = match &value {
            Expr::Lit(l) => Some(l.lit.clone()),
            _ => None,
        };
        match (name.as_str(), lit) {
            ("tolerance", Some(lit @ (Lit::Float(_) | Lit::Int(_)))) => tolerance = Some(lit),
            ("tolerance", _) => errors.spanned(&value, "`tolerance` takes a number, like `tolerance = 0.01`"),
            ("message", Some(Lit::Str(s))) => message = Some(s),
            ("message", _) => errors.spanned(&value, "`message` takes a string, like `message = \"{lhs} != {rhs}\"`"),
            ("code", Some(Lit::Str(s))) => {
                let valid = !s.value().is_empty()
                    && s.value().bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
                if valid {
                    code = Some(s);
                } else {
                    errors.spanned(&s, "`code` must be snake_case (lowercase letters, digits and `_`), like `code = \"total_mismatch\"`");
                }
            }
            ("code", _) => errors.spanned(&value, "`code` takes a string, like `code = \"total_mismatch\"`"),
            ("recoverable", Some(Lit::Bool(b))) => recoverable = Some(b.value),
            ("recoverable", _) => errors.spanned(&value, "`recoverable` takes `true` or `false`"),
            _ => errors.spanned(
                &key,
                format!(
                    "unknown option `{name}` in `#[check(...)]`; the options are tolerance, message, code, recoverable{}",
                    did_you_mean(&name, OPTION_KEYS)
                ),
            ),
        }
    }

    let Some(kind) = kind else { return Ok(None) };
    if let CheckKind::With(path) = &kind {
        if let Some(t) = &tolerance {
            errors.spanned(t, "`tolerance` applies to rules, not to `with` functions");
        }
        if let Some(m) = &message {
            errors.spanned(m, "`message` applies to rules; a `with` function's error is its message");
        }
        let _ = path;
    }
    if let CheckKind::Expr(node) = &kind {
        check_plurality(node, fields, errors);
    }
    let placeholders = match (&message, &kind) {
        (Some(m), CheckKind::Expr(node)) => parse_placeholders(m, node, fields, errors),
        _ => Vec::new(),
    };
    Ok(Some(Check { kind, tolerance, message, placeholders, code, recoverable: recoverable.unwrap_or(true) }))
}

/// Whether a field's declared type is a collection the derive can see: `Vec<..>`
/// or `Option<Vec<..>>` (deeper hops are checked by the type system).
fn is_collection(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else { return false };
    if last.ident == "Vec" || last.ident == "VecDeque" {
        return true;
    }
    if is_option(ty)
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return is_collection(inner);
    }
    false
}

/// The plural-path rule the derive can decide from the struct's own fields: a
/// path through a field written as a `Vec` names many values.
fn check_plurality(node: &Node, fields: &[Field], errors: &mut Errors) {
    node.paths(&mut |path, in_aggregate| {
        let first = &path.hops[0];
        let Some(field) = fields.iter().find(|f| f.rust_name == crate::case::unraw(first)) else { return };
        let collection = is_collection(&field.ty);
        if !in_aggregate && collection && path.hops.len() > 1 {
            errors.spanned(
                first,
                format!(
                    "`{}` is a collection, so this path names many values; use it inside `sum`, `count`, `min`, `max` or `unique`",
                    field.rust_name
                ),
            );
        }
        // "An aggregate over no collection" is left to the type system
        // (`IsMany`): a map, a type alias or a `Box<Vec<_>>` are collections the
        // syntax does not show.
    });
}

fn parse_placeholders(
    message: &LitStr,
    node: &Node,
    fields: &[Field],
    errors: &mut Errors,
) -> Vec<Placeholder> {
    let text = message.value();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else {
            errors.spanned(message, "unclosed `{` in `message`");
            break;
        };
        // Not trimmed: the message substitutes `{name}` exactly as written.
        let name = after[..end].to_string();
        rest = &after[end + 1..];
        if out.iter().any(|p: &Placeholder| p.name == name) {
            continue;
        }
        let target = if name == "lhs" || name == "rhs" {
            let top_is_binary = matches!(node, Node::Binary { op, .. } if op.is_comparison());
            if !top_is_binary {
                errors.spanned(
                    message,
                    format!("`{{{name}}}` needs a rule that is a comparison, like `a == b`"),
                );
                continue;
            }
            PlaceholderTarget::Side
        } else if let Some(field) = fields.iter().find(|f| f.rust_name == name || f.json_name == name) {
            PlaceholderTarget::Field(field.ident.clone())
        } else {
            errors.spanned(
                message,
                format!(
                    "placeholder `{{{name}}}` in `message` names nothing; use `{{lhs}}`, `{{rhs}}` or a field name{}",
                    did_you_mean(&name, fields.iter().map(|f| f.rust_name.as_str()))
                ),
            );
            continue;
        };
        out.push(Placeholder { name, target });
    }
    out
}
