//! The check language's syntax tree, parsed from a `syn::Expr` with every
//! unsupported construct reported on its own token.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, UnOp};

use crate::container::Field;
use crate::ctxt::{Errors, did_you_mean};

/// An expression of the check language.
pub enum Node {
    /// A field path by Rust names; the first hop is a field of the struct.
    Path(FieldPath),
    /// An integer literal.
    Int(syn::LitInt),
    /// A float literal.
    Float(syn::LitFloat),
    /// A string literal.
    Str(syn::LitStr),
    /// `true` or `false`.
    Bool(syn::LitBool),
    /// An enum variant or constant, `Status::Paid`.
    Variant(syn::ExprPath),
    /// `a op b`.
    Binary { op: Op, op_span: Span, lhs: Box<Node>, rhs: Box<Node> },
    /// `!a`.
    Not(Box<Node>, Span),
    /// `-a`.
    Neg(Box<Node>, Span),
    /// `f(a)`.
    Call { func: Func, name: Ident, arg: Box<Node> },
    /// `(a)`.
    Paren(Box<Node>),
}

/// `a.b.c`.
pub struct FieldPath {
    pub hops: Vec<Ident>,
}

/// A binary operator.
#[derive(Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl Op {
    pub fn is_comparison(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    pub fn text(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::And => "&&",
            Op::Or => "||",
        }
    }
}

/// A function of the check language.
#[derive(Clone, Copy, PartialEq)]
pub enum Func {
    Sum,
    Count,
    Min,
    Max,
    Unique,
    Len,
    Abs,
    IsSome,
    IsNone,
}

impl Func {
    pub const NAMES: [&'static str; 9] =
        ["sum", "count", "min", "max", "unique", "len", "abs", "is_some", "is_none"];

    fn parse(name: &str) -> Option<Func> {
        Some(match name {
            "sum" => Func::Sum,
            "count" => Func::Count,
            "min" => Func::Min,
            "max" => Func::Max,
            "unique" => Func::Unique,
            "len" => Func::Len,
            "abs" => Func::Abs,
            "is_some" => Func::IsSome,
            "is_none" => Func::IsNone,
            _ => return None,
        })
    }

    /// Aggregates take a path through a collection.
    pub fn is_aggregate(self) -> bool {
        matches!(self, Func::Sum | Func::Count | Func::Min | Func::Max | Func::Unique)
    }

    /// Functions whose argument must be a field path.
    pub fn takes_path(self) -> bool {
        !matches!(self, Func::Abs)
    }
}

/// Parses a check expression; `None` when it holds an error (recorded).
pub fn parse(expr: &Expr, fields: &[Field], errors: &mut Errors) -> Option<Node> {
    Some(match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(i) => Node::Int(i.clone()),
            Lit::Float(f) => Node::Float(f.clone()),
            Lit::Str(s) => Node::Str(s.clone()),
            Lit::Bool(b) => Node::Bool(b.clone()),
            other => {
                errors
                    .spanned(other, "unsupported literal in a check: use numbers, strings or `true`/`false`");
                return None;
            }
        },
        Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
            let ident = p.path.get_ident().expect("checked").clone();
            Node::Path(parse_path(vec![ident], fields, errors)?)
        }
        Expr::Path(p) => Node::Variant(p.clone()),
        Expr::Field(_) => {
            let hops = field_hops(expr, errors)?;
            Node::Path(parse_path(hops, fields, errors)?)
        }
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::Add(_) => Op::Add,
                BinOp::Sub(_) => Op::Sub,
                BinOp::Mul(_) => Op::Mul,
                BinOp::Div(_) => Op::Div,
                BinOp::Eq(_) => Op::Eq,
                BinOp::Ne(_) => Op::Ne,
                BinOp::Lt(_) => Op::Lt,
                BinOp::Le(_) => Op::Le,
                BinOp::Gt(_) => Op::Gt,
                BinOp::Ge(_) => Op::Ge,
                BinOp::And(_) => Op::And,
                BinOp::Or(_) => Op::Or,
                other => {
                    errors.spanned(
                        other,
                        "unsupported operator in a check: use `+ - * /`, `== != < <= > >=`, `&& || !`",
                    );
                    return None;
                }
            };
            if op.is_comparison()
                && let Expr::Binary(inner) = &*b.left
                && is_comparison(&inner.op)
            {
                errors.spanned(b.op, "comparisons cannot be chained in a check: write `a < b && b < c`");
                return None;
            }
            let lhs = parse(&b.left, fields, errors);
            let rhs = parse(&b.right, fields, errors);
            Node::Binary { op, op_span: b.op.span(), lhs: Box::new(lhs?), rhs: Box::new(rhs?) }
        }
        Expr::Unary(u) => {
            let inner = parse(&u.expr, fields, errors)?;
            match u.op {
                UnOp::Not(t) => Node::Not(Box::new(inner), t.span),
                UnOp::Neg(t) => Node::Neg(Box::new(inner), t.span),
                other => {
                    errors.spanned(other, "unsupported operator in a check: use `!` or `-`");
                    return None;
                }
            }
        }
        Expr::Paren(p) => Node::Paren(Box::new(parse(&p.expr, fields, errors)?)),
        Expr::Group(g) => parse(&g.expr, fields, errors)?,
        Expr::Call(call) => {
            let Expr::Path(func) = &*call.func else {
                errors.spanned(
                    &call.func,
                    "unsupported call in a check: call one of the check functions by name",
                );
                return None;
            };
            let Some(name) = func.path.get_ident() else {
                errors.spanned(func, "unsupported call in a check: call one of the check functions by name");
                return None;
            };
            let Some(f) = Func::parse(&name.to_string()) else {
                errors.spanned(
                    name,
                    format!(
                        "unknown function `{name}` in a check; the functions are {}{}",
                        Func::NAMES.join(", "),
                        did_you_mean(&name.to_string(), Func::NAMES)
                    ),
                );
                return None;
            };
            if call.args.len() != 1 {
                errors.spanned(&call.args, format!("`{name}` takes exactly one argument"));
                return None;
            }
            let arg = parse(&call.args[0], fields, errors)?;
            if f.takes_path() && !matches!(arg, Node::Path(_)) {
                errors.spanned(
                    &call.args[0],
                    format!("`{name}` takes a field path, like `{name}(line_items.amount)`"),
                );
                return None;
            }
            Node::Call { func: f, name: name.clone(), arg: Box::new(arg) }
        }
        other => {
            let what = match other {
                Expr::Closure(_) => "a closure",
                Expr::MethodCall(_) => "a method call (use the check functions: `len(x)`, `abs(x)`, ...)",
                Expr::Assign(_) => "an assignment (did you mean `==`?)",
                Expr::Block(_) | Expr::Unsafe(_) => "a block",
                Expr::Macro(_) => "a macro",
                Expr::If(_) | Expr::Match(_) => "a conditional (use `&&`, `||` and `!`)",
                Expr::Index(_) => {
                    "indexing (checks over every element use `sum`, `count`, `min`, `max` or `unique`)"
                }
                Expr::Cast(_) => "a cast (numbers promote automatically)",
                Expr::Reference(_) => "a reference",
                _ => "this syntax",
            };
            errors.spanned(other, format!("unsupported syntax in a check: {what}"));
            return None;
        }
    })
}

fn is_comparison(op: &BinOp) -> bool {
    matches!(op, BinOp::Eq(_) | BinOp::Ne(_) | BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_))
}

/// The hops of `a.b.c`, outermost first.
fn field_hops(expr: &Expr, errors: &mut Errors) -> Option<Vec<Ident>> {
    match expr {
        Expr::Field(f) => {
            let mut hops = field_hops(&f.base, errors)?;
            match &f.member {
                syn::Member::Named(ident) => hops.push(ident.clone()),
                syn::Member::Unnamed(index) => {
                    errors.spanned(index, "tuple fields cannot be named in a check; use named fields");
                    return None;
                }
            }
            Some(hops)
        }
        Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
            Some(vec![p.path.get_ident().expect("checked").clone()])
        }
        other => {
            errors.spanned(
                other,
                "unsupported syntax in a check: a field path is written `field.nested_field`",
            );
            None
        }
    }
}

/// Resolves the first hop against the struct's own fields.
fn parse_path(hops: Vec<Ident>, fields: &[Field], errors: &mut Errors) -> Option<FieldPath> {
    let first = &hops[0];
    if first == "self" {
        errors.spanned(first, "write field paths without `self.`: `stated_total`, not `self.stated_total`");
        return None;
    }
    let name = crate::case::unraw(first);
    if !fields.iter().any(|f| f.rust_name == name) {
        let by_json = fields.iter().find(|f| f.json_name == name && f.rust_name != name);
        let hint = match by_json {
            Some(f) => {
                format!("; checks use Rust field names: `{}` is the JSON name of `{}`", name, f.rust_name)
            }
            None => did_you_mean(&name, fields.iter().map(|f| f.rust_name.as_str())),
        };
        errors.spanned(first, format!("unknown field `{name}` in a check{hint}"));
        return None;
    }
    Some(FieldPath { hops })
}

impl Node {
    /// Calls `f` on every field path, in reading order.
    pub fn paths<'a>(&'a self, f: &mut impl FnMut(&'a FieldPath, bool)) {
        self.paths_in(f, false)
    }

    fn paths_in<'a>(&'a self, f: &mut impl FnMut(&'a FieldPath, bool), in_aggregate: bool) {
        match self {
            Node::Path(p) => f(p, in_aggregate),
            Node::Binary { lhs, rhs, .. } => {
                lhs.paths_in(f, in_aggregate);
                rhs.paths_in(f, in_aggregate);
            }
            Node::Not(x, _) | Node::Neg(x, _) | Node::Paren(x) => x.paths_in(f, in_aggregate),
            Node::Call { func, arg, .. } => arg.paths_in(f, in_aggregate || func.is_aggregate()),
            Node::Int(_) | Node::Float(_) | Node::Str(_) | Node::Bool(_) | Node::Variant(_) => {}
        }
    }
}
