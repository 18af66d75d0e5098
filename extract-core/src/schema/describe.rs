//! What the derive knows about a type, kept for run time: [`TypeInfo`],
//! [`FieldInfo`], [`Shape`] and [`CheckMeta`]. The tool description lists
//! the checks from it, the structure layer gives a missing field its
//! recoverability tag from it (at any depth), and a failed check renders its
//! rule with it, in the JSON names the model sees.
//!
//! The text parts of a derived description (names, tags, checks) arrive
//! encoded as `extract_contract` defines them and are decoded there; the
//! shapes of the fields arrive typed, one [`Shape`] constant per field,
//! which each field's type gives itself (`Audited::SHAPE`), so a type alias
//! is described as the type it names.

use std::any::Any;
use std::fmt;
use std::sync::OnceLock;

use extract_contract::{Malformed, Piece, decode_checks, decode_fields};
use serde_json::Value;

use crate::{FieldPath, Segment};

/// A derived type's names, tags and checks, as the derive saw them.
pub struct TypeInfo {
    /// The Rust name of the type.
    pub rust_name: &'static str,
    /// The tool name (`#[extract(name = ...)]`, else snake_case of the type name).
    pub tool_name: &'static str,
    /// The tool description (`#[extract(description = ...)]`, else the doc comment).
    pub description: &'static str,
    /// The fields: typed (a hand-written description), or the derive's encoding.
    fields: Described,
    /// The `#[check]`s, in the derive's encoding (see `extract_contract`).
    checks: &'static str,
    /// What the runtime builds from the description on first use.
    state: OnceLock<TypeState>,
}

/// A type's fields: typed, or encoded by the derive with one shape per
/// field; or what a type without named fields holds.
#[derive(Debug)]
enum Described {
    Typed(&'static [FieldInfo]),
    Encoded {
        names: &'static str,
        shapes: &'static [&'static Shape],
    },
    /// A newtype (one element: its JSON is the element's) or a tuple struct
    /// (its JSON is an array, `[index]` selects an element).
    Tuple(&'static [&'static Shape]),
    /// An enum: how its JSON names the variant, and the variants.
    Enum {
        tagging: Tagging,
        variants: &'static [Variant],
    },
}

/// How an enum's JSON says which variant it holds: serde's three tagged
/// representations (the derive refuses `untagged`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagging {
    /// `{"card": {...}}`, and a unit variant as the string `"cash"` (serde's default).
    External,
    /// `#[serde(tag = "kind")]`: `{"kind": "card", ...the variant's fields}`.
    Internal {
        /// The tag's key.
        tag: &'static str,
    },
    /// `#[serde(tag = "t", content = "c")]`: `{"t": "card", "c": {...}}`.
    Adjacent {
        /// The tag's key.
        tag: &'static str,
        /// The content's key.
        content: &'static str,
    },
}

/// One variant of an enum the derive describes.
#[derive(Debug)]
pub struct Variant {
    /// The Rust name.
    pub rust_name: &'static str,
    /// The tag the model writes (after serde's `rename` and `rename_all`).
    pub json_name: &'static str,
    /// What the variant holds.
    pub content: VariantContent,
}

/// What a variant holds.
#[derive(Debug)]
pub enum VariantContent {
    /// Nothing.
    Unit,
    /// Named fields, described (with the variant's checks) as a struct is.
    Fields(&'static TypeInfo),
    /// Unnamed fields: one (a newtype variant, whose JSON is the value's) or
    /// more (an array).
    Tuple(&'static [&'static Shape]),
}

impl Variant {
    /// A variant as the derive describes it.
    pub const fn new(rust_name: &'static str, json_name: &'static str, content: VariantContent) -> Variant {
        Variant { rust_name, json_name, content }
    }
}

/// What the runtime keeps for a type for the process: the decoded fields
/// and checks, and the cache [`TypeInfo::cached`] fills.
struct TypeState {
    fields: Vec<FieldInfo>,
    checks: Vec<CheckMeta>,
    /// Type-erased: what it holds (the structural validator) belongs to a
    /// layer above this one.
    cache: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl fmt::Debug for TypeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeInfo")
            .field("rust_name", &self.rust_name)
            .field("tool_name", &self.tool_name)
            .field("description", &self.description)
            .field("fields", &self.fields)
            .field("checks", &self.checks)
            .field("decoded", &self.state.get().is_some())
            .finish()
    }
}

impl TypeInfo {
    /// A type's description with typed fields and no checks.
    ///
    /// ```
    /// use extract_core::__private_v2::{FieldInfo, Shape, TypeInfo};
    ///
    /// static NOTE: TypeInfo =
    ///     TypeInfo::new("Note", "note", "Record one note.", &[FieldInfo::new("title", "title", true, true, &Shape::Leaf)]);
    /// assert_eq!(NOTE.fields()[0].json_name, "title");
    /// ```
    pub const fn new(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        fields: &'static [FieldInfo],
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Typed(fields),
            checks: "",
            state: OnceLock::new(),
        }
    }

    /// A type's description as the derive writes it: the fields' names and
    /// tags and the checks as `extract_contract` encodes them, and the shape
    /// of each field the encoding marks typed, in order (the others are leaves).
    ///
    /// ```
    /// use extract_core::__private_v2::{Shape, TypeInfo};
    ///
    /// static NOTE: TypeInfo =
    ///     TypeInfo::derived("Note", "note", "", "dtitle\u{1}\u{2}cby\u{1}author", &[], "");
    /// let fields = NOTE.fields();
    /// assert_eq!((fields[1].rust_name, fields[1].json_name, fields[1].required), ("by", "author", false));
    /// ```
    pub const fn derived(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        fields: &'static str,
        shapes: &'static [&'static Shape],
        checks: &'static str,
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Encoded { names: fields, shapes },
            checks,
            state: OnceLock::new(),
        }
    }

    /// A newtype's or tuple struct's description: the shape of each
    /// element, in order, and its checks (`with` functions), encoded.
    pub const fn tuple(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        elements: &'static [&'static Shape],
        checks: &'static str,
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Tuple(elements),
            checks,
            state: OnceLock::new(),
        }
    }

    /// An enum's description: its representation and its variants (a
    /// struct variant's checks are in its own description).
    pub const fn enumeration(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        tagging: Tagging,
        variants: &'static [Variant],
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Enum { tagging, variants },
            checks: "",
            state: OnceLock::new(),
        }
    }

    /// The fields the model sees, in declaration order (skipped fields are
    /// absent). An encoded description is decoded on first use. A type
    /// without named fields (an enum, a newtype) has none.
    pub fn fields(&'static self) -> &'static [FieldInfo] {
        match self.fields {
            Described::Typed(fields) => fields,
            Described::Encoded { .. } => &self.state().fields,
            Described::Tuple(_) | Described::Enum { .. } => &[],
        }
    }

    /// An enum's representation and variants; `None` for any other type.
    pub fn variants(&'static self) -> Option<(Tagging, &'static [Variant])> {
        match self.fields {
            Described::Enum { tagging, variants } => Some((tagging, variants)),
            _ => None,
        }
    }

    /// A newtype's or tuple struct's elements; `None` for any other type.
    pub fn elements(&'static self) -> Option<&'static [&'static Shape]> {
        match self.fields {
            Described::Tuple(elements) => Some(elements),
            _ => None,
        }
    }

    /// The description of variant `index` of the enum `info` describes:
    /// what a struct variant's checks report with. Read only when a check
    /// fails.
    #[doc(hidden)]
    pub fn variant_info(info: Option<&'static TypeInfo>, index: usize) -> Option<&'static TypeInfo> {
        match info?.variants()?.1.get(index)?.content {
            VariantContent::Fields(info) => Some(info),
            _ => None,
        }
    }

    /// The `#[check]`s of the type (decoded once, as [`fields`](Self::fields) are).
    pub fn checks(&'static self) -> &'static [CheckMeta] {
        &self.state().checks
    }

    /// The value `init` computes for this type, computed on first use and
    /// kept for the process. Every call for one type must ask for the same
    /// `C` (the runtime keeps one cache type).
    #[doc(hidden)]
    pub fn cached<C: Any + Send + Sync>(&'static self, init: impl FnOnce() -> C) -> &'static C {
        self.state()
            .cache
            .get_or_init(|| Box::new(init()))
            .downcast_ref()
            .expect("a type's cache is always of the runtime's one cache type")
    }

    /// The runtime's part, built on first use.
    fn state(&'static self) -> &'static TypeState {
        self.state.get_or_init(|| {
            // Only a description written by a derive of another contract
            // version could fail to decode, and the versioned hidden module
            // makes that a compile error.
            let malformed = |error: Malformed| -> ! {
                panic!("the derived description of `{}` is {error}", self.rust_name)
            };
            let fields = match self.fields {
                Described::Typed(_) | Described::Tuple(_) | Described::Enum { .. } => Vec::new(),
                Described::Encoded { names, shapes } => {
                    let fields = decode_fields(names).unwrap_or_else(|e| malformed(e));
                    let mut shapes = shapes.iter();
                    let described = fields
                        .into_iter()
                        .map(|f| {
                            let shape = match f.typed {
                                true => shapes
                                    .next()
                                    .unwrap_or_else(|| malformed(Malformed("a shape per typed field"))),
                                false => &Shape::Leaf,
                            };
                            let field =
                                FieldInfo::new(f.rust_name, f.json_name, f.required, f.recoverable, shape);
                            if f.per_window { field.gathered_per_window() } else { field }
                        })
                        .collect();
                    if shapes.next().is_some() {
                        malformed(Malformed("a shape per typed field"));
                    }
                    described
                }
            };
            let checks = decode_checks(self.checks).unwrap_or_else(|e| malformed(e));
            TypeState { fields, checks, cache: OnceLock::new() }
        })
    }
}

/// One field the model sees.
#[derive(Debug)]
pub struct FieldInfo {
    /// The Rust name.
    pub rust_name: &'static str,
    /// The JSON name (after serde's `rename` and `rename_all`).
    pub json_name: &'static str,
    /// Whether the field must be present (not `Option`, not `#[serde(default)]`).
    pub required: bool,
    /// `false` when tagged `#[extract(recoverable = false)]`: absence means the
    /// datum is not in the source.
    pub recoverable: bool,
    /// How the field's type holds values: the containers it passes through
    /// and what sits inside them.
    pub shape: &'static Shape,
    /// Whether the list is gathered window by window (`#[extract(per_window)]`).
    pub per_window: bool,
}

impl FieldInfo {
    /// A field's description, as the derive writes it.
    pub const fn new(
        rust_name: &'static str,
        json_name: &'static str,
        required: bool,
        recoverable: bool,
        shape: &'static Shape,
    ) -> FieldInfo {
        FieldInfo { rust_name, json_name, required, recoverable, shape, per_window: false }
    }

    /// The same field, gathered window by window.
    pub const fn gathered_per_window(mut self) -> FieldInfo {
        self.per_window = true;
        self
    }
}

/// How a field's type holds values: the containers (and the path steps
/// each adds) down to the values inside. Each type the semantic walk knows
/// gives its own (`Audited::SHAPE`), so the description follows what a
/// field's type is, whatever name it was written with. The semantic walk
/// follows the same shape through the values themselves.
pub enum Shape {
    /// Nothing the walk looks into: text, numbers, dates, and any type that
    /// holds no derived value.
    Leaf,
    /// A derived type, with its description.
    Named(&'static TypeInfo),
    /// A derived generic type (`Page<Line>`), whose description is made on
    /// first use for each instantiation: a static cannot depend on a type
    /// parameter, so the description cannot be one.
    Generic(fn() -> &'static TypeInfo),
    /// `Sourced<T>`: a value and its quote; the shape is the value's, under `value`.
    Sourced(&'static Shape),
    /// `Option`, `Box`, `Arc`, `Rc`: the value inside, with no path step.
    Wrap(&'static Shape),
    /// `Vec`, `VecDeque`, arrays, slices, sets: an `[index]` step per element.
    Seq(&'static Shape),
    /// Maps: a key step per value.
    Map(&'static Shape),
    /// A tuple: `[index]` selects an element.
    Tuple(&'static [&'static Shape]),
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Leaf => f.write_str("Leaf"),
            // By name: the descriptions of recursive types point at each other.
            Shape::Named(info) => f.debug_tuple("Named").field(&info.rust_name).finish(),
            Shape::Generic(info) => f.debug_tuple("Generic").field(&info().rust_name).finish(),
            Shape::Sourced(inner) => f.debug_tuple("Sourced").field(inner).finish(),
            Shape::Wrap(inner) => f.debug_tuple("Wrap").field(inner).finish(),
            Shape::Seq(inner) => f.debug_tuple("Seq").field(inner).finish(),
            Shape::Map(inner) => f.debug_tuple("Map").field(inner).finish(),
            Shape::Tuple(elements) => f.debug_tuple("Tuple").field(elements).finish(),
        }
    }
}

impl Shape {
    /// Follows `path` (below a value of this shape) through the container
    /// steps: the derived type reached, and the segments left at its fields.
    pub fn descend<'p>(&'static self, path: &'p [Segment]) -> (Option<&'static TypeInfo>, &'p [Segment]) {
        match (self, path) {
            (Shape::Named(info), _) => (Some(*info), path),
            (Shape::Generic(info), _) => (Some(info()), path),
            (Shape::Wrap(inner), _) => inner.descend(path),
            (Shape::Sourced(inner), [Segment::Key(key), rest @ ..]) if key == "value" => inner.descend(rest),
            (Shape::Seq(inner), [Segment::Index(_), rest @ ..]) => inner.descend(rest),
            (Shape::Map(inner), [Segment::Key(_), rest @ ..]) => inner.descend(rest),
            (Shape::Tuple(elements), [Segment::Index(i), rest @ ..]) => match elements.get(*i) {
                Some(element) => element.descend(rest),
                None => (None, path),
            },
            _ => (None, path),
        }
    }

    /// Calls `visit` with every derived type inside, and whether reaching it
    /// passes through a collection (a sequence or a map).
    pub fn nested(&'static self, visit: &mut dyn FnMut(&'static TypeInfo, bool)) {
        self.nested_in(false, visit);
    }

    fn nested_in(&'static self, many: bool, visit: &mut dyn FnMut(&'static TypeInfo, bool)) {
        match self {
            Shape::Leaf => {}
            Shape::Sourced(inner) => inner.nested_in(many, visit),
            Shape::Named(info) => visit(info, many),
            Shape::Generic(info) => visit(info(), many),
            Shape::Wrap(inner) => inner.nested_in(many, visit),
            Shape::Seq(inner) | Shape::Map(inner) => inner.nested_in(true, visit),
            Shape::Tuple(elements) => elements.iter().for_each(|e| e.nested_in(many, visit)),
        }
    }

    /// The first derived type inside, if any.
    pub fn first_nested(&'static self) -> Option<&'static TypeInfo> {
        let mut first = None;
        self.nested(&mut |info, _| {
            first.get_or_insert(info);
        });
        first
    }

    /// Whether a `Sourced` value sits anywhere inside (nested types included;
    /// `seen` guards recursive types).
    fn holds_sourced(&'static self, seen: &mut Vec<&'static TypeInfo>) -> bool {
        match self {
            Shape::Leaf => false,
            Shape::Sourced(_) => true,
            Shape::Named(info) => info.holds_sourced_in(seen),
            Shape::Generic(info) => info().holds_sourced_in(seen),
            Shape::Wrap(inner) | Shape::Seq(inner) | Shape::Map(inner) => inner.holds_sourced(seen),
            Shape::Tuple(elements) => elements.iter().any(|e| e.holds_sourced(seen)),
        }
    }

    /// Whether the value holds many values (a sequence or a map, through wrappers).
    pub fn is_collection(&self) -> bool {
        match self {
            Shape::Wrap(inner) => inner.is_collection(),
            Shape::Seq(_) | Shape::Map(_) => true,
            _ => false,
        }
    }
}

impl FieldInfo {
    /// Whether the field holds many values (a sequence or a map).
    pub fn is_collection(&self) -> bool {
        self.shape.is_collection()
    }
}

impl TypeInfo {
    /// The lists gathered window by window (`#[extract(per_window)]`), each
    /// with its items' anchor: the JSON name of the item's first `Sourced`
    /// field, whose quote says which window owns the item.
    pub fn per_window(&'static self) -> Vec<(&'static FieldInfo, &'static str)> {
        self.fields()
            .iter()
            .filter(|field| field.per_window)
            .filter_map(|field| {
                let Shape::Seq(item) = field.shape else { return None };
                let item = match item {
                    Shape::Named(info) => *info,
                    Shape::Generic(info) => info(),
                    _ => return None,
                };
                let anchor = item.fields().iter().find(|f| matches!(f.shape, Shape::Sourced(_)))?;
                Some((field, anchor.json_name))
            })
            .collect()
    }

    /// The field with JSON name `json_name`.
    pub fn field(&'static self, json_name: &str) -> Option<&'static FieldInfo> {
        self.fields().iter().find(|f| f.json_name == json_name)
    }

    /// The field a path of `output` names, following nested derived types
    /// through their containers (indices and map keys select inside a
    /// container) and enums through the variant `output` holds there.
    pub fn field_at(&'static self, path: &FieldPath, output: &Value) -> Option<&'static FieldInfo> {
        let (field, rest) = self.walk(path.segments(), output);
        if rest.is_empty() { field } else { None }
    }

    /// Follows `path` as far as the derive's descriptions go: the deepest
    /// field reached, and the segments left over.
    fn walk<'p>(
        &'static self,
        path: &'p [Segment],
        output: &Value,
    ) -> (Option<&'static FieldInfo>, &'p [Segment]) {
        let mut deepest = None;
        let (mut ty, mut rest) = self.fields_at(path, path, output);
        while let [Segment::Key(key), tail @ ..] = rest {
            let Some(field) = ty.and_then(|t| t.field(key)) else { break };
            deepest = Some(field);
            (ty, rest) = follow(field.shape, path, tail, output);
            // A field's fields are keys, never indices: indices left over are
            // the steps of a container the shape could not see (a type alias).
            if ty.is_some() {
                while let [Segment::Index(_), tail @ ..] = rest {
                    rest = tail;
                }
            }
        }
        (deepest, rest)
    }

    /// The description whose named fields `rest` goes on with, below a value
    /// of this type at the start of `rest` (a suffix of `full`, the path from
    /// the root of `output`): the type itself for a struct; through a
    /// newtype's value, a tuple struct's element, and the variant of an enum
    /// (for an internally or adjacently tagged one, the variant `output`'s
    /// tag names there).
    fn fields_at<'p>(
        &'static self,
        full: &'p [Segment],
        rest: &'p [Segment],
        output: &Value,
    ) -> (Option<&'static TypeInfo>, &'p [Segment]) {
        let variant = match self.fields {
            Described::Typed(_) | Described::Encoded { .. } => return (Some(self), rest),
            Described::Tuple(elements) => return follow_elements(elements, full, rest, output),
            Described::Enum { tagging, variants } => {
                let here = value_at(output, &full[..full.len() - rest.len()]);
                let tagged = |tag: &str| {
                    let tag = here.and_then(|v| v.get(tag)).and_then(Value::as_str);
                    variants.iter().find(|v| Some(v.json_name) == tag)
                };
                match (tagging, rest) {
                    (Tagging::External, [Segment::Key(key), tail @ ..]) => {
                        (variants.iter().find(|v| v.json_name == key), tail)
                    }
                    (Tagging::Internal { tag }, _) => (tagged(tag), rest),
                    (Tagging::Adjacent { tag, content }, [Segment::Key(key), tail @ ..])
                        if key == content =>
                    {
                        (tagged(tag), tail)
                    }
                    _ => (None, rest),
                }
            }
        };
        match variant {
            (Some(Variant { content: VariantContent::Fields(info), .. }), rest) => (Some(info), rest),
            (Some(Variant { content: VariantContent::Tuple(elements), .. }), rest) => {
                follow_elements(elements, full, rest, output)
            }
            (_, rest) => (None, rest),
        }
    }

    /// Whether a `Sourced` value sits anywhere in the type, nested types included.
    pub fn holds_sourced(&'static self) -> bool {
        self.holds_sourced_in(&mut Vec::new())
    }

    fn holds_sourced_in(&'static self, seen: &mut Vec<&'static TypeInfo>) -> bool {
        if seen.iter().any(|s| std::ptr::eq(*s, self)) {
            return false;
        }
        seen.push(self);
        let found = match self.fields {
            Described::Tuple(elements) => elements.iter().any(|e| e.holds_sourced(seen)),
            Described::Enum { variants, .. } => variants.iter().any(|v| match v.content {
                VariantContent::Unit => false,
                VariantContent::Fields(info) => info.holds_sourced_in(seen),
                VariantContent::Tuple(elements) => elements.iter().any(|e| e.holds_sourced(seen)),
            }),
            _ => self.fields().iter().any(|f| f.shape.holds_sourced(seen)),
        };
        seen.pop();
        found
    }

    /// Whether an absent value at `path` can be fixed by a retry: the tag of
    /// the deepest field the path reaches that the derive describes, so a
    /// value missing inside a tagged `Sourced` (or other undescribed) field
    /// takes that field's tag; `true` for anything else.
    pub fn recoverable_at(&'static self, path: &FieldPath, output: &Value) -> bool {
        self.walk(path.segments(), output).0.is_none_or(|f| f.recoverable)
    }
}

/// Through a value of `shape` at the start of `rest`: the description whose
/// named fields the path goes on with.
fn follow<'p>(
    shape: &'static Shape,
    full: &'p [Segment],
    rest: &'p [Segment],
    output: &Value,
) -> (Option<&'static TypeInfo>, &'p [Segment]) {
    match shape.descend(rest) {
        (Some(info), tail) => info.fields_at(full, tail, output),
        (None, tail) => (None, tail),
    }
}

/// Through a newtype's value (one element, no path step) or a tuple's
/// element (`[index]`).
fn follow_elements<'p>(
    elements: &'static [&'static Shape],
    full: &'p [Segment],
    rest: &'p [Segment],
    output: &Value,
) -> (Option<&'static TypeInfo>, &'p [Segment]) {
    match (elements, rest) {
        ([one], _) => follow(one, full, rest, output),
        (_, [Segment::Index(i), tail @ ..]) => match elements.get(*i) {
            Some(element) => follow(element, full, tail, output),
            None => (None, rest),
        },
        _ => (None, rest),
    }
}

/// The part of `output` at `path`.
fn value_at<'v>(output: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    path.iter().try_fold(output, |value, segment| match segment {
        Segment::Key(key) => value.get(key.as_ref()),
        Segment::Index(i) => value.get(i),
    })
}

/// Everything the derive knows about one `#[check]`, kept for run time
/// (see `extract_contract::Check`).
pub type CheckMeta = extract_contract::Check<'static>;

impl TypeInfo {
    /// Renders a rule's text (or an operand's) in the JSON names of this
    /// type and the types it nests.
    pub fn render(&'static self, rule: extract_contract::Rule<'static>) -> String {
        let mut out = String::new();
        for piece in rule.pieces() {
            match piece {
                Piece::Text(text) => out.push_str(text),
                // An enum's variant (`Status::Paid`): its tag, as the model writes it.
                Piece::Path(path) if path.contains("::") => match self.variant_json_name(path) {
                    Some(json) => out.push_str(&format!("{json:?}")),
                    None => out.push_str(path),
                },
                Piece::Path(path) => {
                    let path: Vec<&'static str> = path.split('.').collect();
                    out.push_str(&self.json_path(&path).join("."));
                }
            }
        }
        out
    }

    /// The tag of the variant `path` names (`Status::Paid`, or a longer
    /// path to the enum), found among the enums this type's fields hold (a
    /// few levels deep); `None` when none of them is that enum.
    fn variant_json_name(&'static self, path: &str) -> Option<&'static str> {
        let (enum_path, variant) = path.rsplit_once("::")?;
        let enum_name = enum_path.rsplit("::").next()?;
        let mut seen: Vec<&'static TypeInfo> = vec![self];
        let mut level: Vec<&'static TypeInfo> = vec![self];
        for _ in 0..4 {
            let mut next = Vec::new();
            for info in level {
                if let (true, Some((_, variants))) = (info.rust_name == enum_name, info.variants())
                    && let Some(found) = variants.iter().find(|v| v.rust_name == variant)
                {
                    return Some(found.json_name);
                }
                let mut inner = |nested: &'static TypeInfo, _| {
                    if !seen.iter().any(|s| std::ptr::eq(*s, nested)) {
                        seen.push(nested);
                        next.push(nested);
                    }
                };
                for field in info.fields() {
                    field.shape.nested(&mut inner);
                }
                if let Some((_, variants)) = info.variants() {
                    for variant in variants {
                        if let VariantContent::Fields(fields) = variant.content {
                            inner(fields, false);
                        }
                    }
                }
            }
            level = next;
        }
        None
    }

    /// The JSON names of a path given by Rust names (a name the tables do not
    /// know is kept as written).
    pub fn json_path(&'static self, rust_path: &[&'static str]) -> Vec<&'static str> {
        let mut ty = Some(self);
        rust_path
            .iter()
            .map(|rust| {
                let field = ty.and_then(|t| t.fields().iter().find(|f| f.rust_name == *rust));
                ty = field.and_then(|f| f.shape.first_nested());
                field.map_or(*rust, |f| f.json_name)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static ITEM: TypeInfo = TypeInfo::derived("Item", "item", "", "damount\u{1}", &[], "");
    const IN_ITEM: Shape = Shape::Named(&ITEM);

    static ORDER: TypeInfo = TypeInfo::derived(
        "Order",
        "order",
        "",
        "hlines\u{1}items\u{2}fpair\u{1}\u{2}gquote\u{1}",
        &[
            &Shape::Seq(&IN_ITEM),
            &Shape::Tuple(&[&Shape::Leaf, &Shape::Wrap(&IN_ITEM)]),
            &Shape::Sourced(&Shape::Leaf),
        ],
        "sum(\u{1}lines.amount\u{1}) > 0\u{4}sum(\u{1}lines.amount\u{1})\u{4}lines\u{4}\u{4}=too small\u{4}\u{4}=small\u{4}0\u{4}",
    );

    #[test]
    fn a_recursive_description_debugs_as_names_not_forever() {
        static NODE: TypeInfo =
            TypeInfo::derived("Node", "node", "", "hchildren\u{1}", &[&Shape::Seq(&Shape::Named(&NODE))], "");
        let shown = format!("{NODE:?} {:?}", NODE.fields());
        assert!(shown.contains(r#"shape: Seq(Named("Node"))"#), "{shown}");
    }

    #[test]
    fn threads_racing_to_decode_a_description_all_get_the_one_published() {
        static RACED: TypeInfo = TypeInfo::derived("Raced", "raced", "", "damount\u{1}", &[], "");
        let start = std::sync::Barrier::new(8);
        let seen: Vec<(usize, usize)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        (RACED.fields().as_ptr() as usize, RACED.cached(|| 7_u32) as *const u32 as usize)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            seen.iter().all(|s| *s == seen[0]),
            "every thread sees the same decoded fields and cache: {seen:?}"
        );
        assert_eq!(RACED.fields()[0].rust_name, "amount");
        assert_eq!(*RACED.cached(|| 8_u32), 7);
    }

    #[test]
    fn an_encoded_description_decodes_to_the_fields_and_checks_it_names() {
        let fields = ORDER.fields();
        assert_eq!(fields.len(), 3);
        assert_eq!((fields[0].rust_name, fields[0].json_name), ("lines", "items"));
        assert!(fields[0].required && fields[0].recoverable && fields[0].is_collection());
        assert!(fields[1].required && !fields[1].recoverable);
        assert!(!fields[2].required && fields[2].recoverable);
        assert!(matches!(fields[1].shape, Shape::Tuple([Shape::Leaf, Shape::Wrap(Shape::Named(_))])));
        assert!(ORDER.holds_sourced());
        let mut nested = Vec::new();
        for field in fields {
            field.shape.nested(&mut |info, many| nested.push((info.rust_name, many)));
        }
        assert_eq!(nested, [("Item", true), ("Item", false)]);

        let [check] = ORDER.checks() else { panic!("one check") };
        assert_eq!(ORDER.render(check.rule), "sum(items.amount) > 0");
        assert_eq!(ORDER.render(check.atoms[0]), "sum(items.amount)");
        assert_eq!(check.fields, ["lines"]);
        assert_eq!((check.tolerance, check.message, check.code), (None, Some("too small"), Some("small")));
        assert!(!check.recoverable && check.with.is_none());
        // Decoded once: the same slice every time.
        assert!(std::ptr::eq(ORDER.fields(), ORDER.fields()));
    }

    #[test]
    #[should_panic(expected = "the derived description of `Bad` is malformed description: a field's flags")]
    fn a_malformed_encoding_is_a_clear_panic_naming_the_type() {
        static BAD: TypeInfo = TypeInfo::derived("Bad", "bad", "", "zx\u{1}", &[], "");
        BAD.fields();
    }

    #[test]
    #[should_panic(expected = "a shape per typed field")]
    fn a_shape_for_each_typed_field() {
        static BAD: TypeInfo = TypeInfo::derived("Bad", "bad", "", "hx\u{1}", &[], "");
        BAD.fields();
    }
}
