//! Lowers a check to typed Rust: one closure per check, inside the type's
//! `audit`, that evaluates the rule over `__this`, and the check's
//! description (`extract_contract::Check`) the runtime shows in messages
//! and in the tool description. Both come from one traversal of the rule,
//! so the operand the lowered code records as number `i` is the `i`th
//! operand of the description. Calls carry the spans of the user's tokens,
//! so a type error lands inside the attribute.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};

use super::{Check, CheckKind, FieldPath, Func, Node, Op, PlaceholderTarget};
use crate::container::Field;
use crate::encoding::CheckText;

/// The runtime's hidden module by its full path, versioned with the
/// contract (`extract_contract::HIDDEN_MODULE`): for what the derive writes
/// outside a body (impl headers, signatures).
pub fn private() -> TokenStream {
    let module = syn::Ident::new(extract_contract::HIDDEN_MODULE, Span::call_site());
    quote!(::extract::#module)
}

/// The runtime's hidden module inside a derived body, which starts with
/// `use ::extract::__private_v2::probes::*` (see [`probes`]): the glob brings
/// the module in as `__extract`, one token where the full path is six. Every
/// token the derive writes costs it and rustc time in each user's build, and
/// a check is mostly runtime paths.
pub fn runtime() -> TokenStream {
    quote!(__extract)
}

/// The import a derived `audit` starts with: the probe traits, and the
/// runtime's module as [`runtime`] names it.
pub fn probes() -> TokenStream {
    let p = private();
    quote!(use #p::probes::*;)
}

/// A check lowered: the statement that runs it inside the derived `audit`,
/// and its description for the runtime.
pub struct Lowered {
    pub run: TokenStream,
    pub text: CheckText,
}

/// Lowers check `index`. In the statement, `__this` is the value and
/// `__info` its type's description. The rule is a closure, not a function
/// of its own: one body fewer to compile per check.
pub fn check(check: &Check, index: usize, fields: &[Field]) -> Lowered {
    let p = runtime();
    let mut text = CheckText {
        rule: String::new(),
        atoms: Vec::new(),
        fields: Vec::new(),
        tolerance: check.tolerance.as_ref().map(|lit| quote!(#lit).to_string()),
        message: check.message.as_ref().map(syn::LitStr::value),
        placeholders: check.placeholders.iter().map(|ph| ph.name.to_string()).collect(),
        code: check.code.as_ref().map(syn::LitStr::value),
        recoverable: check.recoverable,
        with: None,
    };
    let run = match &check.kind {
        CheckKind::With(path) => {
            let written = quote!(#path).to_string().replace(' ', "");
            text.rule = written.clone();
            text.with = Some(written);
            let call = quote_spanned!(syn::spanned::Spanned::span(path)=> #path(__this));
            quote! { __audit.run_with(__info, #index, #call); }
        }
        CheckKind::Expr(node) => {
            text.rule = rule_text(node);
            node.paths(&mut |path, in_aggregate| {
                let mut names: Vec<String> = path.hops.iter().map(crate::case::unraw).collect();
                if in_aggregate {
                    names.truncate(1);
                }
                let joined = names.join(".");
                if !text.fields.contains(&joined) {
                    text.fields.push(joined);
                }
            });
            let mut lowering = Lowering {
                fields,
                atoms: Vec::new(),
                tolerance: tolerance_tokens(check),
                records_sides: check
                    .placeholders
                    .iter()
                    .any(|ph| matches!(ph.target, PlaceholderTarget::Side)),
            };
            let body = lowering.top(node);
            text.atoms = lowering.atoms;
            let placeholders = check.placeholders.iter().enumerate().filter_map(|(i, ph)| match &ph.target {
                PlaceholderTarget::Field(field) => {
                    let shown = shown(quote!(__a));
                    Some(quote! {
                        if __rec.is_on() {
                            let __a = #p::probe_leaf!(&__this.#field).value();
                            __rec.placeholder(#i, #shown);
                        }
                    })
                }
                PlaceholderTarget::Side => None,
            });
            // A rule that is a comparison, `!` or a logical operator already
            // gives `Option<bool>`; anything else (a `bool` field, `unique`)
            // is turned into one by `verdict`.
            let verdict = if gives_truth(node) { body } else { quote!(#p::verdict(#body)) };
            // The closure's signature comes from `run_check`'s bound.
            quote! {
                __audit.run_check(__info, #index, |__rec| {
                    #(#placeholders)*
                    #p::Ok(#verdict)
                });
            }
        }
    };
    Lowered { run, text }
}

/// Whether the node is a comparison, `!` or `&&`/`||`: an `Option<bool>` as lowered.
fn gives_truth(node: &Node) -> bool {
    match node {
        Node::Binary { op, .. } => op.is_comparison() || matches!(op, Op::And | Op::Or),
        Node::Not(..) => true,
        Node::Paren(inner) => gives_truth(inner),
        _ => false,
    }
}

fn tolerance_tokens(check: &Check) -> TokenStream {
    let p = runtime();
    match &check.tolerance {
        Some(syn::Lit::Float(f)) => {
            let text = f.base10_digits().to_string();
            let value: f64 = f.base10_parse().unwrap_or(0.0);
            quote!(#p::Some(#p::Number::num(&#p::FloatLit(#value, #text))))
        }
        Some(syn::Lit::Int(i)) => {
            let value: i128 = i.base10_parse().unwrap_or(0);
            quote!(#p::Some(#p::Number::num(&#p::IntLit(#value))))
        }
        _ => quote!(#p::None),
    }
}

struct Lowering<'a> {
    /// The struct's fields: an operand that is one of them, of a number
    /// type written as such, needs no probe to be read or shown.
    fields: &'a [Field],
    /// The operands recorded so far, as the description shows them: the
    /// lowered code records operand `i` by its index here.
    atoms: Vec<String>,
    tolerance: TokenStream,
    /// Whether the check's `message` shows `{lhs}` or `{rhs}`, so the two
    /// sides of its comparison are recorded.
    records_sides: bool,
}

impl Lowering<'_> {
    /// The top of a rule: a comparison records its two sides for `{lhs}`/`{rhs}`.
    fn top(&mut self, node: &Node) -> TokenStream {
        match node {
            Node::Binary { op, op_span, lhs, rhs } if op.is_comparison() && self.records_sides => {
                let l = self.operand(lhs);
                let r = self.operand(rhs);
                let cmp = self.comparison(*op, *op_span, lhs, rhs);
                let (shown_l, shown_r) = (shown(quote!(__l)), shown(quote!(__r)));
                quote! {{
                    let __l = #l;
                    let __r = #r;
                    if __rec.is_on() { __rec.sides(#shown_l, #shown_r); }
                    #cmp
                }}
            }
            _ => self.lower(node),
        }
    }

    /// An expression of type `Option<V>` for the node.
    fn lower(&mut self, node: &Node) -> TokenStream {
        let p = runtime();
        match node {
            Node::Path(path) => match self.own_number(path) {
                Some(value) => self.atom(node, value, true),
                None => {
                    let value = single_path(path);
                    self.atom(node, value, false)
                }
            },
            // `validate::check_node` has rejected literals that do not parse.
            Node::Int(lit) => {
                let v: i128 = lit.base10_parse().expect("validated before emission");
                quote_spanned!(lit.span()=> #p::Some(#p::IntLit(#v)))
            }
            Node::Float(lit) => {
                let text = lit.base10_digits().to_string();
                let v: f64 = lit.base10_parse().expect("validated before emission");
                quote_spanned!(lit.span()=> #p::Some(#p::FloatLit(#v, #text)))
            }
            Node::Str(lit) => quote!(#p::Some(#lit)),
            Node::Bool(lit) => quote!(#p::Some(#lit)),
            // Only an operand of `==`/`!=` (see `operand`); `validate::check_node`
            // has rejected a variant anywhere else.
            Node::Variant(_) => unreachable!("validated before emission"),
            Node::Paren(inner) => self.lower(inner),
            Node::Not(inner, span) => {
                let x = self.lower(inner);
                let bound = syn::Ident::new("__x", *span);
                let call = respan(quote!(#p::not(#bound)), *span);
                quote! {{ let __x = #x; #call }}
            }
            Node::Neg(inner, span) => {
                let x = self.lower(inner);
                let bound = syn::Ident::new("__x", *span);
                let call = respan(quote!(#p::neg(#bound)?), *span);
                quote! {{ let __x = #x; #call }}
            }
            Node::Binary { op, op_span, lhs, rhs } => match op {
                Op::And | Op::Or => {
                    let l = self.lower(lhs);
                    let r = self.lower(rhs);
                    let (stop, combine) = match op {
                        Op::And => (false, quote_spanned!(*op_span=> #p::and)),
                        _ => (true, quote_spanned!(*op_span=> #p::or)),
                    };
                    let (x, y) = (syn::Ident::new("__x", *op_span), syn::Ident::new("__y", *op_span));
                    let truth_l = respan(quote!(#p::truth(#x)), *op_span);
                    let truth_r = respan(quote!(#p::truth(#y)), *op_span);
                    quote! {{
                        let __x = #l;
                        let __l: #p::Option<bool> = #truth_l;
                        if __l == #p::Some(#stop) { __l } else { let __y = #r; #combine(__l, #truth_r) }
                    }}
                }
                Op::Add | Op::Sub | Op::Mul | Op::Div => {
                    let l = self.lower(lhs);
                    let r = self.lower(rhs);
                    let arith = match op {
                        Op::Add => quote!(Add),
                        Op::Sub => quote!(Sub),
                        Op::Mul => quote!(Mul),
                        _ => quote!(Div),
                    };
                    let (x, y) = (syn::Ident::new("__x", *op_span), syn::Ident::new("__y", *op_span));
                    let call = respan(quote!(#p::arith(#x, #p::ArithOp::#arith, #y)?), *op_span);
                    quote! {{ let __x = #l; let __y = #r; #call }}
                }
                _ => {
                    let l = self.operand(lhs);
                    let r = self.operand(rhs);
                    let cmp = self.comparison(*op, *op_span, lhs, rhs);
                    quote! {{ let __l = #l; let __r = #r; #cmp }}
                }
            },
            Node::Call { func, name, arg } => {
                let span = name.span();
                let value = match func {
                    Func::Abs => {
                        let x = self.lower(arg);
                        let bound = syn::Ident::new("__x", span);
                        let call = respan(quote!(#p::abs(#bound)?), span);
                        quote! {{ let __x = #x; #call }}
                    }
                    Func::Len | Func::IsSome | Func::IsNone => {
                        let Node::Path(path) = &**arg else { unreachable!("parser requires a path") };
                        let value = single_path(path);
                        match func {
                            Func::Len => quote_spanned!(span=> #p::len(#value)),
                            Func::IsSome => quote_spanned!(span=> #p::Some((#value).is_some())),
                            _ => quote_spanned!(span=> #p::Some((#value).is_none())),
                        }
                    }
                    _ => {
                        let Node::Path(path) = &**arg else { unreachable!("parser requires a path") };
                        let acc = match func {
                            Func::Sum => quote_spanned!(span=> #p::Sum::default()),
                            Func::Count => quote_spanned!(span=> #p::Count::default()),
                            Func::Min => quote_spanned!(span=> #p::MinMax::min()),
                            Func::Max => quote_spanned!(span=> #p::MinMax::max()),
                            _ => quote_spanned!(span=> #p::Unique::default()),
                        };
                        let visit = aggregate_path(path, span);
                        quote! {{
                            let mut __acc = #acc;
                            let mut __absent = false;
                            #visit
                            if __absent { #p::None } else { __acc.finish()? }
                        }}
                    }
                };
                // Every function but these computes a number.
                let computed = !matches!(func, Func::Unique | Func::IsSome | Func::IsNone);
                self.atom(node, value, computed)
            }
        }
    }

    /// `Option<&N>` for a path that is one of the struct's own fields whose
    /// type is written as a number type `N` or `Option<N>`: read directly,
    /// where any other path goes through the probes (the derive cannot see
    /// through a type alias). `None` for any other path.
    fn own_number(&self, path: &FieldPath) -> Option<TokenStream> {
        let p = runtime();
        let [hop] = path.hops.as_slice() else { return None };
        let field = self.fields.iter().find(|f| f.ident == *hop)?;
        if is_number_type(&field.ty) {
            return Some(quote_spanned!(hop.span()=> #p::Some(&__this.#hop)));
        }
        let inner = option_argument(&field.ty)?;
        is_number_type(inner).then(|| quote_spanned!(hop.span()=> __this.#hop.as_ref()))
    }

    /// A comparison operand: an enum variant is allowed here, by reference.
    fn operand(&mut self, node: &Node) -> TokenStream {
        let p = runtime();
        match node {
            Node::Variant(path) => quote!(#p::Some(&#path)),
            _ => self.lower(node),
        }
    }

    /// Records an operand's value for the failure message. A number the
    /// check `computed` is recorded as one; any other value is shown as its
    /// type allows (`shown`).
    fn atom(&mut self, node: &Node, value: TokenStream, computed: bool) -> TokenStream {
        let index = self.atoms.len();
        self.atoms.push(rule_text(node));
        if computed {
            return quote! {{
                let __a = #value;
                __rec.number(#index, &__a);
                __a
            }};
        }
        let shown = shown(quote!(__a));
        // No closures: a failure message is built only when the recorder is
        // on, and every closure would be one more body per check to compile.
        quote! {{
            let __a = #value;
            if __rec.is_on() { __rec.atom(#index, #shown); }
            __a
        }}
    }

    /// `l op r` over the operands bound to `__l` and `__r`; a variant on
    /// either side compares by `PartialEq`. The operands are named with the
    /// operator's span, so a type error lands on the operator.
    fn comparison(&mut self, op: Op, span: Span, lhs: &Node, rhs: &Node) -> TokenStream {
        let p = runtime();
        let l = syn::Ident::new("__l", span);
        let r = syn::Ident::new("__r", span);
        let variant = |n: &Node| matches!(n, Node::Variant(_));
        if variant(lhs) || variant(rhs) {
            let equal = op == Op::Eq;
            return respan(quote!(#p::eq_variant(#l, #r, #equal)), span);
        }
        let cmp = match op {
            Op::Eq => quote!(Eq),
            Op::Ne => quote!(Ne),
            Op::Lt => quote!(Lt),
            Op::Le => quote!(Le),
            Op::Gt => quote!(Gt),
            _ => quote!(Ge),
        };
        let tolerance = if matches!(op, Op::Eq | Op::Ne) { self.tolerance.clone() } else { quote!(#p::None) };
        respan(quote!(#p::compare(#l, #p::CmpOp::#cmp, #r, #tolerance)?), span)
    }
}

/// Whether `ty` is written as one of Rust's number types.
fn is_number_type(ty: &syn::Type) -> bool {
    const NUMBERS: &[&str] = &[
        "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| NUMBERS.contains(&i.to_string().as_str())))
}

/// `T` of a type written as `Option<T>`.
fn option_argument(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last().filter(|s| s.ident == "Option")?;
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => match args.args.first() {
            Some(syn::GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// `Option<&Leaf>` for a single-valued path.
fn single_path(path: &FieldPath) -> TokenStream {
    let p = runtime();
    let hops = &path.hops;
    let last = hops.last().expect("paths have a hop");
    if hops.len() == 1 {
        return quote_spanned!(last.span()=> #p::probe_leaf!(&__this.#last).value());
    }
    let first = &hops[0];
    let mut out = step("__this", first, |value| respan(quote!(#value.single()), first.span()));
    for hop in &hops[1..hops.len() - 1] {
        let next = step("__h", hop, |value| respan(quote!(#value.single()), hop.span()));
        out = quote_spanned!(hop.span()=> #out.and_then(|__h| #next));
    }
    quote_spanned!(last.span()=> #out.and_then(|__h| #p::probe_leaf!(&__h.#last).value()))
}

/// One step into `base.hop`: the demand that the type derives `Extractable`
/// (its error carries the hop's span), then the step itself.
fn step(base: &str, hop: &syn::Ident, then: impl FnOnce(TokenStream) -> TokenStream) -> TokenStream {
    let p = runtime();
    // Every token of the stepped expression carries the hop's span, so an
    // error about the step points at the user's token.
    let base = syn::Ident::new(base, hop.span());
    let require = respan(quote!(#p::require_hop(&#base.#hop)), hop.span());
    let probe = respan(quote!(#p::probe_step!(&#base.#hop)), hop.span());
    let step = then(probe);
    quote!({ #require; #step })
}

/// `tokens` with every span set to the first span of `user` (the user's
/// tokens), so an error about them lands there.
pub fn respan_to(tokens: TokenStream, user: impl quote::ToTokens) -> TokenStream {
    let span = user.into_token_stream().into_iter().next().map_or_else(Span::call_site, |t| t.span());
    respan(tokens, span)
}

/// `tokens` with every span set to `span` (groups included), so rustc can
/// point at the user's token for the whole expression.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    map_tokens(tokens, &mut |mut tree| {
        tree.set_span(span);
        tree
    })
}

/// `tokens` with `f` applied to every token, inside groups too: a group is
/// rebuilt around its mapped stream (keeping its span), then given to `f`.
pub fn map_tokens(tokens: TokenStream, f: &mut impl FnMut(TokenTree) -> TokenTree) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| {
            let tree = match tree {
                TokenTree::Group(group) => {
                    let mut inner = proc_macro2::Group::new(group.delimiter(), map_tokens(group.stream(), f));
                    inner.set_span(group.span());
                    TokenTree::Group(inner)
                }
                other => other,
            };
            f(tree)
        })
        .collect()
}

/// Visits every value of an aggregate's path, adding each to `__acc`; an
/// absent `Option` where the path names one value sets `__absent`.
fn aggregate_path(path: &FieldPath, func_span: Span) -> TokenStream {
    let p = runtime();
    let hops = &path.hops;
    let last = hops.last().expect("paths have a hop");
    // The path starts out naming one value: a single hop is on the struct
    // itself, a deeper one inside the steps below.
    let (base, card) =
        if hops.len() == 1 { (quote!(__this), quote!(#p::One)) } else { (quote!(__h), quote!(__c)) };
    let require = respan(quote!(#p::require_many(__c)), func_span);
    let mut body = quote_spanned!(last.span()=>
        if #p::probe_leaf_each!(&#base.#last, #card).each(|__v, __c| { #require; __acc.add(__v); }) {
            __absent = true;
        }
    );
    for (i, hop) in hops[..hops.len() - 1].iter().enumerate().rev() {
        let base = if i == 0 { "__this" } else { "__h" };
        let card = if i == 0 { quote!(#p::One) } else { quote!(__c) };
        body = step(base, hop, |value| {
            let each = respan(quote!(#value.step_each), hop.span());
            quote!(if #each(#card, |__h, __c| { #body }) { __absent = true; })
        });
    }
    body
}

/// A rule's text (or an operand's) in the contract's encoding: its field
/// paths marked, so the runtime shows them in JSON names.
fn rule_text(node: &Node) -> String {
    let mut pieces = Vec::new();
    write_pieces(node, &mut pieces);
    extract_contract::Rule::encode(pieces.iter().map(|piece| match piece {
        Piece::Text(text) => extract_contract::Piece::Text(text),
        Piece::Path(path) => extract_contract::Piece::Path(path),
    }))
}

/// A piece of a rule's text: a path's hops joined by `.`.
enum Piece {
    Text(String),
    Path(String),
}

fn write_pieces(node: &Node, out: &mut Vec<Piece>) {
    let text = |out: &mut Vec<Piece>, s: String| match out.last_mut() {
        Some(Piece::Text(t)) => t.push_str(&s),
        _ => out.push(Piece::Text(s)),
    };
    match node {
        Node::Path(path) => {
            let hops: Vec<String> = path.hops.iter().map(crate::case::unraw).collect();
            out.push(Piece::Path(hops.join(".")))
        }
        Node::Int(l) => text(out, l.to_string()),
        Node::Float(l) => text(out, l.to_string()),
        Node::Str(l) => text(out, format!("{:?}", l.value())),
        Node::Bool(l) => text(out, l.value.to_string()),
        // A variant is marked as a path holding `::`: the runtime shows it
        // as its JSON tag when it knows the enum (see `extract_contract`).
        Node::Variant(path) => out.push(Piece::Path(quote!(#path).to_string().replace(' ', ""))),
        Node::Binary { op, lhs, rhs, .. } => {
            write_pieces(lhs, out);
            text(out, format!(" {} ", op.text()));
            write_pieces(rhs, out);
        }
        Node::Not(x, _) => {
            text(out, "!".into());
            write_pieces(x, out);
        }
        Node::Neg(x, _) => {
            text(out, "-".into());
            write_pieces(x, out);
        }
        Node::Paren(x) => {
            text(out, "(".into());
            write_pieces(x, out);
            text(out, ")".into());
        }
        Node::Call { name, arg, .. } => {
            text(out, format!("{name}("));
            write_pieces(arg, out);
            text(out, ")".into());
        }
    }
}

/// How the operand `value` (an `Option` of an operand) shows in a message.
fn shown(value: TokenStream) -> TokenStream {
    let p = runtime();
    quote! {
        match &#value {
            #p::Some(__v) => #p::probe_show!(#p::Val::val(__v)).show(),
            #p::None => #p::Shown::absent(),
        }
    }
}
