//! What the derive knows about a type, kept for run time: [`TypeInfo`],
//! [`FieldInfo`] and [`CheckMeta`]. The tool description lists the checks
//! from it, the structure layer gives a missing field its recoverability tag
//! from it (at any depth), and a failed check renders its rule with it, in
//! the JSON names the model sees.

use std::any::Any;
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::{FieldPath, Segment};

/// A derived type's names, tags and checks, as the derive saw them.
pub struct TypeInfo {
    /// The Rust name of the type.
    pub rust_name: &'static str,
    /// The tool name (`#[extract(name = ...)]`, else snake_case of the type name).
    pub tool_name: &'static str,
    /// The tool description (`#[extract(description = ...)]`, else the doc comment).
    pub description: &'static str,
    /// The fields, as written: see [`TypeInfo::fields`].
    fields: Described<FieldInfo>,
    /// The named types' descriptions, in the order an encoded description
    /// names them.
    nested: &'static [NestedInfo],
    /// The `#[check]`s, as written: see [`TypeInfo::checks`].
    checks: Described<CheckMeta>,
    /// What the runtime derives from the description, built on first use.
    state: StateCell,
}

/// A type's fields or checks: typed (a hand-written description), or in
/// the compact encoding the derive writes (see [`TypeInfo::derived`]).
#[derive(Debug)]
enum Described<T: 'static> {
    Typed(&'static [T]),
    Encoded(&'static str),
}

impl<T> Described<T> {
    /// The items; `decode` turns the encoded text into them. What it
    /// allocates lives as long as the static description: leaked once.
    fn resolve(&self, decode: impl FnOnce(&'static str) -> Vec<T>) -> &'static [T] {
        match *self {
            Described::Typed(items) => items,
            Described::Encoded(text) => Box::leak(decode(text).into_boxed_slice()),
        }
    }
}

/// What the runtime keeps for a type for the process: the decoded fields
/// and checks, and the cache [`TypeInfo::cached`] fills.
struct TypeState {
    fields: &'static [FieldInfo],
    checks: &'static [CheckMeta],
    /// Type-erased: what it holds (the structural validator) belongs to a
    /// layer above this one.
    cache: OnceLock<Box<dyn Any + Send + Sync>>,
}

/// The one mutable part of a description: a pointer to its [`TypeState`],
/// null until first use. One atomic, where three `OnceLock`s would each be a
/// chain of `const fn` calls for the user's crate to evaluate per type.
struct StateCell(AtomicPtr<TypeState>);

// `AtomicPtr` is `Sync` whatever it points to: what it shares between
// threads must be too.
const _: () = {
    const fn shared_between_threads<T: Send + Sync>() {}
    shared_between_threads::<TypeState>()
};

impl StateCell {
    const fn empty() -> StateCell {
        StateCell(AtomicPtr::new(std::ptr::null_mut()))
    }
}

impl fmt::Debug for StateCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = !self.0.load(Ordering::Acquire).is_null();
        f.write_str(if built { "TypeState(built)" } else { "TypeState(empty)" })
    }
}

/// A named type's description: `Some` for a derived type, `None` for a leaf.
pub type NestedInfo = Option<&'static TypeInfo>;

/// A nested description shows as its type's name: the descriptions of
/// recursive types point at each other.
struct NestedName(NestedInfo);

impl fmt::Debug for NestedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(info) => f.debug_tuple("Some").field(&info.rust_name).finish(),
            None => f.write_str("None"),
        }
    }
}

impl fmt::Debug for TypeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeInfo")
            .field("rust_name", &self.rust_name)
            .field("tool_name", &self.tool_name)
            .field("description", &self.description)
            .field("fields", &self.fields)
            .field("nested", &self.nested.iter().map(|n| NestedName(*n)).collect::<Vec<_>>())
            .field("checks", &self.checks)
            .field("state", &self.state)
            .finish()
    }
}

impl TypeInfo {
    /// A type's description with typed fields (with an empty cache).
    ///
    /// ```
    /// use extract_core::{FieldInfo, Shape, TypeInfo};
    ///
    /// static NOTE: TypeInfo = TypeInfo::new(
    ///     "Note",
    ///     "note",
    ///     "Record one note.",
    ///     &[FieldInfo::new("title", "title", true, true, &Shape::Leaf)],
    ///     &[],
    /// );
    /// assert_eq!(NOTE.fields()[0].json_name, "title");
    /// ```
    pub const fn new(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        fields: &'static [FieldInfo],
        checks: &'static [CheckMeta],
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Typed(fields),
            nested: &[],
            checks: Described::Typed(checks),
            state: StateCell::empty(),
        }
    }

    /// A type's description as the derive writes it: the fields as one
    /// string, which a crate of many derived types compiles far faster than
    /// a slice of `FieldInfo`s. Fields are separated by [`ITEM_MARK`]; each
    /// is a flag character (`a` + 1 if required + 2 if recoverable), the
    /// Rust name, [`PATH_MARK`], the JSON name (empty when the same),
    /// [`PATH_MARK`] and the shape: `L` leaf, `N` named (the next entry
    /// of `nested`), `Q`/`W`/`S`/`M` followed by the inner shape (sourced,
    /// wrapper, sequence, map), `T<n>:` followed by `n` shapes (a tuple).
    /// Checks are separated by [`CHECK_MARK`]; each is its parts separated
    /// by [`PART_MARK`]: the rule, the operands and the fields (encoded as
    /// [`CheckMeta`] keeps them), then tolerance, message, placeholders,
    /// code, `1`/`0` for recoverable, and the `with` function; an optional
    /// part is empty for none, else `=` and its text.
    ///
    /// ```
    /// use extract_core::TypeInfo;
    ///
    /// static NOTE: TypeInfo = TypeInfo::derived(
    ///     "Note", "note", "", "dtitle\u{1}\u{1}L\u{2}cby\u{1}author\u{1}WL", &[], "",
    /// );
    /// let fields = NOTE.fields();
    /// assert_eq!((fields[1].rust_name, fields[1].json_name, fields[1].required), ("by", "author", false));
    /// ```
    pub const fn derived(
        rust_name: &'static str,
        tool_name: &'static str,
        description: &'static str,
        fields: &'static str,
        nested: &'static [NestedInfo],
        checks: &'static str,
    ) -> TypeInfo {
        TypeInfo {
            rust_name,
            tool_name,
            description,
            fields: Described::Encoded(fields),
            nested,
            checks: Described::Encoded(checks),
            state: StateCell::empty(),
        }
    }

    /// The fields the model sees, in declaration order (skipped fields are
    /// absent). An encoded description is decoded on first use (at most
    /// once per thread racing to it; one result is kept for the process).
    pub fn fields(&'static self) -> &'static [FieldInfo] {
        self.state().fields
    }

    /// The `#[check]`s of the type (decoded once, as [`fields`](Self::fields) are).
    pub fn checks(&'static self) -> &'static [CheckMeta] {
        self.state().checks
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

    /// The runtime's part, built on first use: decoding happens at most
    /// once per racing thread, and the first to publish wins.
    fn state(&'static self) -> &'static TypeState {
        let built = self.state.0.load(Ordering::Acquire);
        if !built.is_null() {
            // SAFETY: a non-null pointer was published by `build_state`
            // from a leaked `Box` and is never freed or replaced.
            return unsafe { &*built };
        }
        self.build_state()
    }

    #[cold]
    fn build_state(&'static self) -> &'static TypeState {
        let fresh = Box::into_raw(Box::new(TypeState {
            fields: self.fields.resolve(|text| decode_fields(self.rust_name, text, self.nested)),
            checks: self.checks.resolve(|text| decode_checks(self.rust_name, text)),
            cache: OnceLock::new(),
        }));
        match self.state.0.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: `fresh` came from `Box::into_raw` and is now published for good.
            Ok(_) => unsafe { &*fresh },
            Err(winner) => {
                // Another thread published first: ours was never shared. Its
                // decoded slices are leaked, as each race's would be.
                // SAFETY: `fresh` came from `Box::into_raw` and was never
                // published; `winner` was published and lives for good.
                drop(unsafe { Box::from_raw(fresh) });
                unsafe { &*winner }
            }
        }
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
        FieldInfo { rust_name, json_name, required, recoverable, shape }
    }
}

/// How a field's type holds values, as the derive read it: the containers
/// (and the path steps each adds) down to the values inside. The semantic
/// walk follows the same shape through the values themselves.
pub enum Shape {
    /// Nothing the walk looks into: text, numbers, dates, and any type the
    /// derive knows holds no derived value.
    Leaf,
    /// A type known by name only: a derived type (with its description) or
    /// a leaf (`None`).
    Named(NestedInfo),
    /// `Sourced<T>`: a value and its quote; the shape is the value's, under `value`.
    Sourced(&'static Shape),
    /// `Option`, `Box`, `Arc`, `Rc`: the value inside, with no path step.
    Wrap(&'static Shape),
    /// `Vec`, `VecDeque`, arrays, slices, sets: an `[index]` step per element.
    Seq(&'static Shape),
    /// Maps: a key step per value.
    Map(&'static Shape),
    /// A tuple: `[index]` selects an element.
    Tuple(&'static [Shape]),
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Leaf => f.write_str("Leaf"),
            Shape::Named(info) => f.debug_tuple("Named").field(&NestedName(*info)).finish(),
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
            (Shape::Named(info), _) => (*info, path),
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
            Shape::Named(info) => {
                if let Some(info) = *info {
                    visit(info, many);
                }
            }
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
            Shape::Named(info) => info.is_some_and(|info| info.holds_sourced_in(seen)),
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
    /// The field with JSON name `json_name`.
    pub fn field(&'static self, json_name: &str) -> Option<&'static FieldInfo> {
        self.fields().iter().find(|f| f.json_name == json_name)
    }

    /// The field a path names, following nested derived types through their
    /// containers (indices and map keys select inside a container).
    pub fn field_at(&'static self, path: &FieldPath) -> Option<&'static FieldInfo> {
        let (field, rest) = self.walk(path.segments());
        if rest.is_empty() { field } else { None }
    }

    /// Follows `path` as far as the derive's descriptions go: the deepest
    /// field reached, and the segments left over.
    fn walk<'p>(&'static self, path: &'p [Segment]) -> (Option<&'static FieldInfo>, &'p [Segment]) {
        let mut ty = Some(self);
        let mut deepest = None;
        let mut rest = path;
        while let [Segment::Key(key), tail @ ..] = rest {
            let Some(field) = ty.and_then(|t| t.field(key)) else { break };
            deepest = Some(field);
            (ty, rest) = field.shape.descend(tail);
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

    /// Whether a `Sourced` value sits anywhere in the type, nested types included.
    pub fn holds_sourced(&'static self) -> bool {
        self.holds_sourced_in(&mut Vec::new())
    }

    fn holds_sourced_in(&'static self, seen: &mut Vec<&'static TypeInfo>) -> bool {
        if seen.iter().any(|s| std::ptr::eq(*s, self)) {
            return false;
        }
        seen.push(self);
        let found = self.fields().iter().any(|f| f.shape.holds_sourced(seen));
        seen.pop();
        found
    }

    /// Whether an absent value at `path` can be fixed by a retry: the tag of
    /// the deepest field the path reaches that the derive describes, so a
    /// value missing inside a tagged `Sourced` (or other undescribed) field
    /// takes that field's tag; `true` for anything else.
    pub fn recoverable_at(&'static self, path: &FieldPath) -> bool {
        self.walk(path.segments()).0.is_none_or(|f| f.recoverable)
    }
}

/// Marks a field path in a rule's text ([`CheckMeta::rule`]): the text
/// between two marks is a path by Rust names, joined by `.`. A rule's own
/// text never holds it (string literals are written escaped).
pub const PATH_MARK: char = '\u{1}';

/// Separates the items of a list: [`CheckMeta::atoms`], [`CheckMeta::fields`],
/// [`CheckMeta::placeholders`], the fields of [`TypeInfo::derived`].
pub const ITEM_MARK: char = '\u{2}';

/// Separates the checks of [`TypeInfo::derived`].
pub const CHECK_MARK: char = '\u{3}';

/// Separates the parts of one check of [`TypeInfo::derived`].
pub const PART_MARK: char = '\u{4}';

/// Everything the derive knows about one `#[check]`, kept for run time. The
/// rule, its operands and its fields are each one string (see [`PATH_MARK`]
/// and [`ITEM_MARK`]): a crate that derives many types compiles one literal
/// per list rather than a slice of slices.
#[derive(Debug)]
pub struct CheckMeta {
    /// The rule, e.g. `sum(line_items.amount) == stated_total`, its field
    /// paths marked with [`PATH_MARK`].
    pub rule: &'static str,
    /// The operands whose values a failure shows, in the rule's encoding,
    /// separated by [`ITEM_MARK`].
    pub atoms: &'static str,
    /// The fields the check reads, by Rust names joined by `.` (a path
    /// through a collection is cut after its first step: `line_items`),
    /// separated by [`ITEM_MARK`].
    pub fields: &'static str,
    /// The `tolerance` option as written.
    pub tolerance: Option<&'static str>,
    /// The `message` option: `{lhs}`, `{rhs}` and field names are substituted.
    pub message: Option<&'static str>,
    /// The names `message` placeholders refer to, in the order the recorder
    /// fills them, separated by [`ITEM_MARK`].
    pub placeholders: &'static str,
    /// The `code` option.
    pub code: Option<&'static str>,
    /// `false` when the check says `recoverable = false`.
    pub recoverable: bool,
    /// For `with = function` checks: the function's path as written.
    pub with: Option<&'static str>,
}

/// Item `index` of a list separated by [`ITEM_MARK`] (empty past its end).
fn nth_item(list: &'static str, index: usize) -> &'static str {
    list.split(ITEM_MARK).nth(index).unwrap_or("")
}

impl CheckMeta {
    /// Operand `index`, in the rule's encoding.
    pub fn atom(&self, index: usize) -> &'static str {
        nth_item(self.atoms, index)
    }

    /// Placeholder `index` of the message.
    pub fn placeholder(&self, index: usize) -> &'static str {
        nth_item(self.placeholders, index)
    }

    /// The fields the check reads, each a path by Rust names.
    pub fn field_paths(&self) -> impl Iterator<Item = Vec<&'static str>> {
        self.fields.split(ITEM_MARK).filter(|f| !f.is_empty()).map(|f| f.split('.').collect())
    }
}

impl TypeInfo {
    /// Renders a rule's text (or an operand's) in the JSON names of this
    /// type and the types it nests.
    pub fn render(&'static self, encoded: &'static str) -> String {
        let mut out = String::new();
        for (i, piece) in encoded.split(PATH_MARK).enumerate() {
            if i % 2 == 0 {
                out.push_str(piece);
            } else {
                let path: Vec<&'static str> = piece.split('.').collect();
                out.push_str(&self.json_path(&path).join("."));
            }
        }
        out
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

/// Decodes the fields [`TypeInfo::derived`] describes. What it allocates
/// lives as long as the static description, so it is leaked once per type.
fn decode_fields(type_name: &str, text: &'static str, nested: &'static [NestedInfo]) -> Vec<FieldInfo> {
    let malformed = |what: &str| -> ! {
        panic!("the derived description of `{type_name}` is malformed ({what}): {text:?}")
    };
    let mut nested = nested.iter();
    let mut fields = Vec::new();
    for field in text.split(ITEM_MARK).filter(|f| !f.is_empty()) {
        let flags = field.as_bytes()[0].wrapping_sub(b'a');
        let mut parts = field[1..].split(PATH_MARK);
        let (Some(rust_name), Some(json_name), Some(shape), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            malformed("a field is not flags, names and shape")
        };
        if flags > 3 {
            malformed("a field's flags");
        }
        let mut at = shape;
        let shape = decode_shape(&mut at, &mut nested).unwrap_or_else(|| malformed("a shape"));
        if !at.is_empty() {
            malformed("a shape");
        }
        let json_name = if json_name.is_empty() { rust_name } else { json_name };
        fields.push(FieldInfo::new(
            rust_name,
            json_name,
            flags & 1 != 0,
            flags & 2 != 0,
            Box::leak(Box::new(shape)),
        ));
    }
    if nested.next().is_some() {
        malformed("more named types than shapes name");
    }
    fields
}

/// Decodes the checks [`TypeInfo::derived`] describes.
fn decode_checks(type_name: &str, text: &'static str) -> Vec<CheckMeta> {
    let malformed = || -> ! { panic!("the derived checks of `{type_name}` are malformed: {text:?}") };
    let optional = |part: &'static str| match part.strip_prefix('=') {
        Some(text) => Some(text),
        None if part.is_empty() => None,
        None => malformed(),
    };
    text.split(CHECK_MARK)
        .filter(|c| !c.is_empty())
        .map(|check| {
            let parts: Vec<&'static str> = check.split(PART_MARK).collect();
            let &[rule, atoms, fields, tolerance, message, placeholders, code, recoverable, with] =
                parts.as_slice()
            else {
                malformed()
            };
            CheckMeta {
                rule,
                atoms,
                fields,
                tolerance: optional(tolerance),
                message: optional(message),
                placeholders,
                code: optional(code),
                recoverable: match recoverable {
                    "1" => true,
                    "0" => false,
                    _ => malformed(),
                },
                with: optional(with),
            }
        })
        .collect()
}

/// Decodes the shape at the start of `at`, consuming it.
fn decode_shape(at: &mut &'static str, nested: &mut std::slice::Iter<'static, NestedInfo>) -> Option<Shape> {
    let (tag, rest) = at.split_at_checked(1)?;
    *at = rest;
    let mut inner = |at: &mut &'static str| -> Option<&'static Shape> {
        Some(Box::leak(Box::new(decode_shape(at, nested)?)))
    };
    Some(match tag {
        "L" => Shape::Leaf,
        "N" => Shape::Named(*nested.next()?),
        "Q" => Shape::Sourced(inner(at)?),
        "W" => Shape::Wrap(inner(at)?),
        "S" => Shape::Seq(inner(at)?),
        "M" => Shape::Map(inner(at)?),
        "T" => {
            let (count, rest) = at.split_once(':')?;
            *at = rest;
            let count: usize = count.parse().ok()?;
            let elements = (0..count).map(|_| decode_shape(at, nested)).collect::<Option<Vec<_>>>()?;
            Shape::Tuple(Box::leak(elements.into_boxed_slice()))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    static ITEM: TypeInfo = TypeInfo::derived("Item", "item", "", "damount\u{1}\u{1}L", &[], "");
    const IN_ITEM: NestedInfo = Some(&ITEM);

    static ORDER: TypeInfo = TypeInfo::derived(
        "Order",
        "order",
        "",
        "dlines\u{1}items\u{1}SN\u{2}bpair\u{1}\u{1}T2:LWN\u{2}cquote\u{1}\u{1}QL",
        &[IN_ITEM, IN_ITEM],
        "sum(\u{1}lines.amount\u{1}) > 0\u{4}sum(\u{1}lines.amount\u{1})\u{4}lines\u{4}\u{4}=too small\u{4}\u{4}=small\u{4}0\u{4}",
    );

    #[test]
    fn a_recursive_description_debugs_as_names_not_forever() {
        static NODE: TypeInfo =
            TypeInfo::derived("Node", "node", "", "dchildren\u{1}\u{1}SN", &[Some(&NODE)], "");
        let shown = format!("{NODE:?} {:?}", NODE.fields());
        assert!(shown.contains(r#"nested: [Some("Node")]"#), "{shown}");
        assert!(shown.contains(r#"shape: Seq(Named(Some("Node")))"#), "{shown}");
    }

    #[test]
    fn threads_racing_to_decode_a_description_all_get_the_one_published() {
        static RACED: TypeInfo = TypeInfo::derived("Raced", "raced", "", "damount\u{1}\u{1}L", &[], "");
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
        // Both named shapes found their descriptions, in order.
        let mut nested = Vec::new();
        for field in fields {
            field.shape.nested(&mut |info, many| nested.push((info.rust_name, many)));
        }
        assert_eq!(nested, [("Item", true), ("Item", false)]);

        let [check] = ORDER.checks() else { panic!("one check") };
        assert_eq!(ORDER.render(check.rule), "sum(items.amount) > 0");
        assert_eq!(ORDER.render(check.atom(0)), "sum(items.amount)");
        assert_eq!(check.field_paths().collect::<Vec<_>>(), [vec!["lines"]]);
        assert_eq!((check.tolerance, check.message, check.code), (None, Some("too small"), Some("small")));
        assert!(!check.recoverable && check.with.is_none());
        // Decoded once: the same slice every time.
        assert!(std::ptr::eq(ORDER.fields(), ORDER.fields()));
    }

    #[test]
    #[should_panic(expected = "the derived description of `Bad` is malformed (a shape)")]
    fn a_malformed_encoding_is_a_clear_panic_naming_the_type() {
        static BAD: TypeInfo = TypeInfo::derived("Bad", "bad", "", "dx\u{1}\u{1}Z", &[], "");
        BAD.fields();
    }

    #[test]
    #[should_panic(expected = "more named types than shapes name")]
    fn an_unused_named_type_is_malformed_too() {
        static BAD: TypeInfo = TypeInfo::derived("Bad", "bad", "", "dx\u{1}\u{1}L", &[IN_ITEM], "");
        BAD.fields();
    }
}
