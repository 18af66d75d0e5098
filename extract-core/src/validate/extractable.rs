//! [`Extractable`], the trait every type that derives it has (through one
//! blanket impl over what the derive writes), and the macro the derive's
//! output calls.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::check::{Audited, Own, Tagged, described};
use super::structure::StructureValidator;
use crate::Tool;
use crate::schema::TypeInfo;

/// A type a model can be asked to fill in, with its tool definition, its
/// structural validator and its semantic checks. Derive it with
/// `#[derive(Extractable)]`; do not implement it by hand.
///
/// The derive writes one small impl per type and nothing else:
/// [`Audited`](super::check::Audited), whose `TYPE_INFO` constant holds the
/// type's description (and its cache), whose walk runs the checks, then the
/// nested values, and whose `Target` and `Card` let other types' check
/// paths step into it. Its `Card` is [`Own`](super::check::Own), which only
/// a derived type says; that makes the type `Extractable` through the one
/// blanket impl below. Everything that does not depend on the type lives in
/// the runtime, behind those few items, to keep down what every crate that
/// derives types compiles (`benches/compile_cost.sh` measures it).
pub trait Extractable: JsonSchema + DeserializeOwned + Audited + Sized {
    /// The tool definition a model fills in: name, description (with the list
    /// of checks) and the input schema.
    fn tool() -> Tool {
        TypeCache::of::<Self>().tool.clone()
    }

    #[doc(hidden)]
    /// The derive's description of the type (kept by its `Audited` impl).
    #[inline]
    fn __describe() -> &'static TypeInfo {
        match <Self as Audited>::SHAPE {
            crate::schema::Shape::Generic(info) => info(),
            _ => described(<Self as Audited>::TYPE_INFO),
        }
    }
}

// The one impl: what the derive writes is the `Audited` impl alone. Its
// `Card` says whether the type's JSON is always an object.
impl<T: Audited<Target = T> + JsonSchema + DeserializeOwned> Extractable for T where T::Card: ObjectRoot {}

/// The [`Audited::Card`] of a derived type whose JSON is always an object,
/// so it can be the top-level type of an extraction (Anthropic requires an
/// object `input_schema`): a struct with named fields ([`Own`]) and an
/// internally or adjacently tagged enum ([`Tagged`]). A unit-only or
/// externally tagged enum, a newtype and a tuple struct say [`NotAnObject`](super::check::NotAnObject),
/// so asking for their tool (`tool()`, `validate`, `Extractor::extract`) is
/// a compile error with this message.
#[diagnostic::on_unimplemented(
    message = "this type's JSON is not always an object, so it can be a field of an extracted type but not the top-level type of an extraction",
    label = "an enum without an internal or adjacent tag, a newtype or a tuple struct: its derive makes it a field type only",
    note = "wrap it in a struct with named fields (`struct Answer {{ value: ... }}`) and extract that, or tag the enum internally (`#[serde(tag = \"kind\")]`)"
)]
pub trait ObjectRoot {}
impl ObjectRoot for Own {}
impl ObjectRoot for Tagged {}

/// The [`Audited::Card`] of a type whose JSON is always an object, as the
/// content of an internally tagged newtype variant must be: serde writes
/// the tag among the content's own keys, so content that is a text, a
/// number, a list, `null` or a unit variant fails to deserialize for every
/// value. The derive asserts it of each such variant, at its type.
#[diagnostic::on_unimplemented(
    message = "the content of an internally tagged newtype variant must always be a JSON object, and this type's JSON is not always one",
    label = "serde puts the tag inside this value, which has no room for it: every answer would fail to deserialize",
    note = "make it a struct variant (`Transfer {{ iban: Iban }}`), or tag and content (`#[serde(tag = \"kind\", content = \"data\")]`)"
)]
pub trait ObjectContent {}
impl ObjectContent for Own {}
impl ObjectContent for Tagged {}

/// Demands that `T`'s JSON is always an object: the derive calls it for
/// the content of each internally tagged newtype variant.
#[doc(hidden)]
pub const fn require_object_content<T: Audited + ?Sized>()
where
    T::Card: ObjectContent,
{
}

/// Demands, in the constant the derive writes, that the type is
/// [`Extractable`]: a missing `JsonSchema` or `Deserialize` is then an error
/// at the derive, not at the first call that extracts the type.
#[doc(hidden)]
pub const fn require_extractable<T: Extractable>() {}

/// A derived struct with a `Sourced` field, whose quote anchors it as an
/// item of a list gathered window by window (`#[extract(per_window)]`):
/// the derive implements it for such a struct.
#[diagnostic::on_unimplemented(
    message = "the items of a `per_window` list need a `Sourced` field, and `{Self}` has none",
    label = "the first `Sourced` field's quote says which window owns each item",
    note = "give `{Self}` a field such as `date: Sourced<String>`, the line the item is read from"
)]
pub trait Anchored {}

/// Demands, in the constant the derive writes for a `per_window` list,
/// that its items are [`Anchored`].
#[doc(hidden)]
pub const fn require_anchored<T: Anchored>() {}

/// The description of the derived generic type `T` (one instantiation,
/// `Page<Line>`), made by `make` on first use and kept for the process: a
/// static cannot depend on a type parameter, so the descriptions of
/// generic types are kept by [`TypeId`](std::any::TypeId).
#[doc(hidden)]
pub fn generic_info<T: ?Sized + 'static>(make: impl FnOnce() -> TypeInfo) -> &'static TypeInfo {
    use std::any::TypeId;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static INFOS: OnceLock<Mutex<HashMap<TypeId, &'static TypeInfo>>> = OnceLock::new();
    let infos = INFOS.get_or_init(Default::default);
    if let Some(info) = infos.lock().unwrap_or_else(|e| e.into_inner()).get(&TypeId::of::<T>()) {
        return info;
    }
    // Made outside the lock: `make` may describe other generic types.
    let made: &'static TypeInfo = Box::leak(Box::new(make()));
    infos.lock().unwrap_or_else(|e| e.into_inner()).entry(TypeId::of::<T>()).or_insert(made)
}

/// The same demand for a derived enum, newtype or tuple struct, which may
/// not be a top-level type: the traits a value nested in another needs.
#[doc(hidden)]
pub const fn require_nested<T: JsonSchema + DeserializeOwned + Audited>() {}

/// The items of a derived type's `Audited` impl that its checks and fields
/// do not shape: the description (`TYPE_INFO`, with the demand that the
/// type is [`Extractable`] and a read of every field), and what check paths
/// step into (`Target`, `Card`). `#[derive(Extractable)]` writes one call of
/// this macro in place of these tokens: rustc expands a declarative macro
/// itself, where every token a derive writes crosses the proc-macro bridge
/// and costs each user's build (`benches/compile_cost.sh` measures it).
///
/// Its arguments are named, in this order:
///
/// - `type`: the type's name;
/// - `rust_name`, `tool_name`, `description`: string literals;
/// - `fields`: the fields' names and tags, encoded (`extract_contract::encode_fields`);
/// - `shapes`: the type of each field `fields` marks typed, in the same
///   order, parenthesized (its shape is the type's own `Audited::SHAPE`,
///   else a leaf);
/// - `checks`: the checks, encoded (`extract_contract::encode_checks`);
/// - `reads`: each field's name and the derive's own binding for it.
#[doc(hidden)]
#[macro_export]
macro_rules! __derived_items {
    (
        type: $ty:ident,
        rust_name: $rust_name:literal,
        tool_name: $tool_name:literal,
        description: $description:literal,
        fields: $fields:literal,
        shapes: [$(($($shape:tt)*))*],
        checks: $checks:literal,
        reads: [$($field:tt $binding:tt)*] $(,)?
    ) => {
        const TYPE_INFO: $crate::__private_v2::Option<&'static $crate::__private_v2::TypeInfo> = {
            // The model fills every field: the derived code reads them all,
            // as a validator of them, so none is reported as never read. A
            // pattern that binds a field reads it, and a `let` of it without
            // a value needs no function body of its own. The bindings are
            // the derive's own names, so no field name can clash with an
            // item in scope.
            #[allow(unused_variables)]
            let $ty { $($field: $binding,)* .. };
            static INFO: $crate::__private_v2::TypeInfo = $crate::__private_v2::TypeInfo::derived(
                $rust_name,
                $tool_name,
                $description,
                $fields,
                // Each field's shape, from its type: `NestedNone` is the
                // fallback of a type the walk does not know (a leaf).
                &[$({
                    use $crate::__private_v2::nested_probes::*;
                    $crate::__private_v2::NestedProbe::<$($shape)*>::SHAPE
                }),*],
                $checks,
            );
            $crate::__private_v2::Some(&INFO)
        };
        // What check paths step into: the type itself, one value (`Own`
        // also gives it the trait's default `visit` and makes it
        // `Extractable`). Written out here and below, not as a third arm:
        // one more expansion per type costs more than these two lines.
        type Target = Self;
        type Card = $crate::__private_v2::Own;
    };
    // An enum: its representation (a `Tagging`, as an expression), the
    // `Card` that says whether its JSON is always an object (`Tagged`) or
    // not (`NotAnObject`), and each variant (`@variant` below).
    (
        enum: $ty:ident,
        rust_name: $rust_name:literal,
        tool_name: $tool_name:literal,
        description: $description:literal,
        tagging: $tagging:expr,
        card: $card:ident,
        variants: [$(($($variant:tt)*))*] $(,)?
    ) => {
        const TYPE_INFO: $crate::__private_v2::Option<&'static $crate::__private_v2::TypeInfo> = {
            $crate::__private_v2::require_nested::<$ty>();
            static INFO: $crate::__private_v2::TypeInfo = $crate::__private_v2::TypeInfo::enumeration(
                $rust_name,
                $tool_name,
                $description,
                $tagging,
                &[$($crate::__private_v2::derived_items!(@variant $($variant)*)),*],
            );
            $crate::__private_v2::Some(&INFO)
        };
        // A check path cannot step into an enum (its variants hold
        // different fields): `Tagged` and `NotAnObject` are no `Card`.
        type Target = Self;
        type Card = $crate::__private_v2::$card;
    };
    (@variant $rust_name:literal $json_name:literal unit) => {
        $crate::__private_v2::Variant::new($rust_name, $json_name, $crate::__private_v2::VariantContent::Unit)
    };
    // A struct variant: its fields and checks, described as a struct's are.
    (@variant $rust_name:literal $json_name:literal fields: $fields:literal, shapes: [$(($($shape:tt)*))*], checks: $checks:literal) => {
        $crate::__private_v2::Variant::new($rust_name, $json_name, $crate::__private_v2::VariantContent::Fields({
            static VARIANT: $crate::__private_v2::TypeInfo = $crate::__private_v2::TypeInfo::derived(
                $rust_name,
                "",
                "",
                $fields,
                &[$({
                    use $crate::__private_v2::nested_probes::*;
                    $crate::__private_v2::NestedProbe::<$($shape)*>::SHAPE
                }),*],
                $checks,
            );
            &VARIANT
        }))
    };
    // A tuple variant: the type of each element.
    (@variant $rust_name:literal $json_name:literal tuple: [$(($($shape:tt)*))*]) => {
        $crate::__private_v2::Variant::new($rust_name, $json_name, $crate::__private_v2::VariantContent::Tuple(&[$({
            use $crate::__private_v2::nested_probes::*;
            $crate::__private_v2::NestedProbe::<$($shape)*>::SHAPE
        }),*]))
    };
    // A newtype or tuple struct: the type of each element, its checks
    // (`with` functions), and a binding per element, so none is reported
    // as never read.
    (
        tuple: $ty:ident,
        rust_name: $rust_name:literal,
        tool_name: $tool_name:literal,
        description: $description:literal,
        shapes: [$(($($shape:tt)*))*],
        checks: $checks:literal,
        reads: [$($binding:ident)*] $(,)?
    ) => {
        const TYPE_INFO: $crate::__private_v2::Option<&'static $crate::__private_v2::TypeInfo> = {
            $crate::__private_v2::require_nested::<$ty>();
            #[allow(unused_variables)]
            let $ty($($binding,)*);
            static INFO: $crate::__private_v2::TypeInfo = $crate::__private_v2::TypeInfo::tuple(
                $rust_name,
                $tool_name,
                $description,
                &[$({
                    use $crate::__private_v2::nested_probes::*;
                    $crate::__private_v2::NestedProbe::<$($shape)*>::SHAPE
                }),*],
                $checks,
            );
            $crate::__private_v2::Some(&INFO)
        };
        type Target = Self;
        type Card = $crate::__private_v2::NotAnObject;
    };
    // A type whose derive failed: no description, but the type stays
    // `Extractable`, so its other uses compile and one mistake is one error.
    (fallback) => {
        const TYPE_INFO: $crate::__private_v2::Option<&'static $crate::__private_v2::TypeInfo> =
            $crate::__private_v2::None;
        type Target = Self;
        type Card = $crate::__private_v2::Own;
    };
}

/// What is computed once per type and kept for the process: the tool and the
/// structural validator compiled from its schema.
#[doc(hidden)]
pub struct TypeCache {
    pub tool: Tool,
    pub structure: StructureValidator,
    /// Whether the type holds `Sourced` values anywhere (its packets then carry `sources`).
    pub has_sources: bool,
}

impl TypeCache {
    /// The cache of `T`, built on first use.
    pub fn of<T: Extractable>() -> &'static TypeCache {
        // Kept in the type's description (its only static); built on first
        // use, so a type only ever nested inside others never builds one.
        T::__describe().cached(|| {
            let schema =
                serde_json::to_value(schemars::schema_for!(T)).expect("a schemars schema serializes");
            TypeCache::build(T::__describe(), schema)
        })
    }

    /// The cache of the type `info` describes, from its schemars schema; the
    /// same code for every type.
    fn build(info: &'static TypeInfo, schema: serde_json::Value) -> TypeCache {
        // The validator keeps the schema as the type is: `null` on a
        // required field is a violation. The tool's schema admits `null`
        // for fields tagged `recoverable = false`, so a model that obeys
        // the schema can say "absent" instead of inventing a value.
        let structure = StructureValidator::new(&schema);
        let tool = crate::schema::tool_of(info, schema);
        TypeCache { tool, structure, has_sources: info.holds_sourced() }
    }
}
