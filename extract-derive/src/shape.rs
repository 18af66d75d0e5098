//! How a field's type holds values, read from its syntax: the containers it
//! passes through down to the named types inside. The semantic walk the
//! derive writes follows it. What the syntax cannot show (a type alias, a
//! renamed import) is left to the type itself: a named type is walked
//! through the runtime's `Audited` impls, which know every container and
//! `Sourced` by type, not by name; a generic type the syntax does not know
//! is walked only if the runtime knows it, else it is a compile error (a
//! check inside it would never run). The runtime's description of a field
//! (its `Shape`) always comes from the field's type.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{GenericArgument, PathArguments, Type};

use crate::check::lower::runtime;

/// A field type's shape.
pub enum Shape {
    /// Holds no derived value: text, numbers, and containers of those.
    Leaf,
    /// A type known by name only: derived or a leaf, as the type system decides.
    Named(Box<Type>),
    /// A type walked by its runtime impl, called through the trait, so a
    /// type the walk does not know is a compile error at the field's type,
    /// never a skip: `Sourced<T>` (its quote, then its value, which a
    /// `Sourced` demands the walk knows), and a generic type the derive does
    /// not know whose arguments may hold derived values (`SmallVec<[Part;
    /// 4]>`, or `S<Part>` for a renamed `Sourced`).
    Direct(Box<Type>),
    /// `Option`, `Box`, `Arc`, `Rc`, a reference: one value inside, no path step.
    Wrap(Box<Shape>),
    /// `Vec`, `VecDeque`, arrays, slices, sets: an index step per element.
    Seq(Box<Shape>),
    /// Maps: a key step per value.
    Map(Box<Shape>),
    /// A tuple: an index step selects an element.
    Tuple(Vec<Shape>),
}

/// Types that hold no derived value, by name: the primitives and `String`.
/// Any other name is `Named`, and the type system decides whether it is
/// derived, so a user's own struct called `Duration` or `Value` is walked.
const LEAVES: &[&str] = &[
    "String", "str", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64",
];

/// Library types that, as the arguments of a generic type the walk cannot
/// see inside (`IndexMap<String, NaiveDate>`), are taken for plain data
/// rather than an error. A heuristic by name, used for nothing else.
const LIBRARY_DATA: &[&str] = &[
    "NaiveDate",
    "NaiveDateTime",
    "NaiveTime",
    "DateTime",
    "Utc",
    "FixedOffset",
    "Local",
    "Decimal",
    "Value",
    "Uuid",
    "Url",
    "PathBuf",
    "Duration",
    "IpAddr",
    "Ipv4Addr",
    "Ipv6Addr",
];
const WRAPPERS: &[&str] = &["Option", "Box", "Arc", "Rc"];
const SEQUENCES: &[&str] = &["Vec", "VecDeque", "LinkedList", "BTreeSet", "HashSet", "BinaryHeap"];
const MAPS: &[&str] = &["BTreeMap", "HashMap"];

impl Shape {
    /// The shape of `ty`, or the part of it the walk cannot see inside.
    pub fn of(ty: &Type) -> Result<Shape, &Type> {
        match ty {
            Type::Paren(inner) => Shape::of(&inner.elem),
            Type::Group(inner) => Shape::of(&inner.elem),
            Type::Reference(inner) => Ok(Shape::Wrap(Box::new(Shape::of(&inner.elem)?)).simplified()),
            Type::Array(inner) => Ok(Shape::Seq(Box::new(Shape::of(&inner.elem)?)).simplified()),
            Type::Slice(inner) => Ok(Shape::Seq(Box::new(Shape::of(&inner.elem)?)).simplified()),
            Type::Tuple(tuple) => {
                let elements = tuple.elems.iter().map(Shape::of).collect::<Result<Vec<_>, _>>()?;
                Ok(Shape::Tuple(elements).simplified())
            }
            Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else { return Ok(Shape::Leaf) };
                let name = last.ident.to_string();
                let types: Vec<&Type> = match &last.arguments {
                    PathArguments::AngleBracketed(args) => args
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            GenericArgument::Type(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let only = |shape: fn(Box<Shape>) -> Shape| -> Result<Shape, &Type> {
                    match types.as_slice() {
                        [inner] => Ok(shape(Box::new(Shape::of(inner)?)).simplified()),
                        _ => Err(ty),
                    }
                };
                if LEAVES.contains(&name.as_str()) {
                    Ok(Shape::Leaf)
                } else if name == "Sourced" {
                    Ok(Shape::Direct(Box::new(ty.clone())))
                } else if WRAPPERS.contains(&name.as_str()) {
                    only(Shape::Wrap)
                } else if SEQUENCES.contains(&name.as_str()) && !types.is_empty() {
                    Ok(Shape::Seq(Box::new(Shape::of(types[0])?)).simplified())
                } else if MAPS.contains(&name.as_str()) && types.len() >= 2 {
                    Ok(Shape::Map(Box::new(Shape::of(types[1])?)).simplified())
                } else if name == "PhantomData" {
                    Ok(Shape::Leaf)
                } else if types.is_empty() {
                    Ok(Shape::Named(Box::new(ty.clone())))
                } else {
                    // An unknown generic type over plain data is known by
                    // name, like any other: a user's derived `Labelled<u32>`
                    // has checks of its own, a library's `IndexMap<String,
                    // NaiveDate>` has none, and the type system tells them
                    // apart. One whose arguments may hold derived values
                    // must be known to the runtime.
                    for inner in types {
                        if !Shape::of(inner)?.is_plain_data() {
                            return Ok(Shape::Direct(Box::new(ty.clone())));
                        }
                    }
                    Ok(Shape::Named(Box::new(ty.clone())))
                }
            }
            Type::Path(_) => Ok(Shape::Named(Box::new(ty.clone()))),
            // Not deserializable, so never a derived value: trait objects,
            // function pointers, `impl Trait`, `!`.
            Type::TraitObject(_) | Type::FnPtr(_) | Type::ImplTrait(_) | Type::Never(_) | Type::Ptr(_) => {
                Ok(Shape::Leaf)
            }
            _ => Err(ty),
        }
    }

    pub fn is_leaf(&self) -> bool {
        matches!(self, Shape::Leaf)
    }

    /// A leaf, or a library type known by name, or containers of those.
    fn is_plain_data(&self) -> bool {
        match self {
            Shape::Leaf => true,
            Shape::Named(ty) => match &**ty {
                Type::Path(path) => path
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| LIBRARY_DATA.contains(&s.ident.to_string().as_str())),
                _ => false,
            },
            Shape::Wrap(inner) | Shape::Seq(inner) | Shape::Map(inner) => inner.is_plain_data(),
            Shape::Tuple(elements) => elements.iter().all(Shape::is_plain_data),
            Shape::Direct(_) => false,
        }
    }

    /// A container of leaves is a leaf.
    fn simplified(self) -> Shape {
        match &self {
            Shape::Wrap(inner) | Shape::Seq(inner) | Shape::Map(inner) if inner.is_leaf() => Shape::Leaf,
            Shape::Tuple(elements) if elements.iter().all(Shape::is_leaf) => Shape::Leaf,
            _ => self,
        }
    }

    /// Whether the runtime's `Audited` impls walk a value of this shape as
    /// the derive would: options and sequences, down to one named type. A
    /// map is left out (its impl also asks the key to serialize, and a key
    /// that does not must be a compile error, not a map skipped), and so are
    /// tuples (whose impls stop at four elements).
    fn walked_by_runtime(&self) -> bool {
        match self {
            Shape::Named(_) => true,
            Shape::Wrap(inner) | Shape::Seq(inner) => inner.walked_by_runtime(),
            _ => false,
        }
    }

    /// The statement that walks `value` (an expression of a reference to a
    /// value of this shape) with `__audit`, or nothing for a leaf. A shape
    /// the runtime walks the same way is one probe of the whole value (a
    /// named type that is not derived leaves nothing to walk in it); any
    /// other is walked step by step here.
    pub fn walk(&self, value: TokenStream, recoverable: bool) -> Option<TokenStream> {
        let p = runtime();
        if self.walked_by_runtime() {
            return Some(quote!(#p::AuditProbe(#value).audit_value::<__L>(__audit, #recoverable);));
        }
        self.walk_steps(value, recoverable)
    }

    fn walk_steps(&self, value: TokenStream, recoverable: bool) -> Option<TokenStream> {
        let p = runtime();
        let walk_inner = |inner: &Shape| inner.walk(quote!(__v), recoverable);
        Some(match self {
            Shape::Leaf => return None,
            Shape::Named(_) => unreachable!("walked by the runtime"),
            Shape::Direct(ty) => {
                let call = quote!(#p::Audited::audit::<__L>(#value, __audit, #recoverable););
                crate::check::lower::respan_to(call, ty)
            }
            Shape::Wrap(inner) => {
                let inner = walk_inner(inner)?;
                quote!(__audit.wrapped(#value, |__v, __audit| { #inner });)
            }
            Shape::Seq(inner) => {
                let inner = walk_inner(inner)?;
                quote!(__audit.each(#value, |__v, __audit| { #inner });)
            }
            Shape::Map(inner) => {
                let inner = walk_inner(inner)?;
                quote!(__audit.each_entry(#value, |__v, __audit| { #inner });)
            }
            Shape::Tuple(elements) => {
                let steps = elements.iter().enumerate().filter_map(|(i, element)| {
                    let index = syn::Index::from(i);
                    let inner = element.walk(quote!(&__t.#index), recoverable)?;
                    Some(quote!(__audit.at_index(#i, |__audit| { #inner });))
                });
                quote!({ let __t = #value; #(#steps)* })
            }
        })
    }
}
