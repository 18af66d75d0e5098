//! What the derive knows about a type, kept for run time: [`TypeInfo`],
//! [`FieldInfo`] and [`CheckMeta`]. The tool description lists the checks
//! from it, the structure layer gives a missing field its recoverability tag
//! from it (at any depth), and a failed check renders its rule with it, in
//! the JSON names the model sees.

use crate::{FieldPath, Segment};

/// A derived type's names, tags and checks, as the derive saw them.
#[derive(Debug)]
pub struct TypeInfo {
    /// The Rust name of the type.
    pub rust_name: &'static str,
    /// The tool name (`#[extract(name = ...)]`, else snake_case of the type name).
    pub tool_name: &'static str,
    /// The tool description (`#[extract(description = ...)]`, else the doc comment).
    pub description: &'static str,
    /// The fields the model sees, in declaration order (skipped fields are absent).
    pub fields: &'static [FieldInfo],
    /// The `#[check]`s of the type.
    pub checks: &'static [CheckMeta],
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
    /// The derived type inside the field (through `Vec`, `Option`, `Box`, maps), if any.
    pub nested: fn() -> Option<&'static TypeInfo>,
    /// A path below this field without the steps that select inside its
    /// containers (an index of a `Vec`, a key of a map).
    pub inner_path: for<'p> fn(&'p [Segment]) -> &'p [Segment],
}

impl FieldInfo {
    /// Whether the field holds many values (a sequence or a map).
    pub fn is_collection(&self) -> bool {
        (self.inner_path)(&[Segment::Index(0)]).is_empty()
            || (self.inner_path)(&[Segment::Key(std::borrow::Cow::Borrowed("key"))]).is_empty()
    }
}

impl TypeInfo {
    /// The field with JSON name `json_name`.
    pub fn field(&self, json_name: &str) -> Option<&'static FieldInfo> {
        self.fields.iter().find(|f| f.json_name == json_name)
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
            rest = (field.inner_path)(tail);
            ty = (field.nested)();
        }
        (deepest, rest)
    }

    /// Whether an absent value at `path` can be fixed by a retry: the tag of
    /// the deepest field the path reaches that the derive describes, so a
    /// value missing inside a tagged `Sourced` (or other undescribed) field
    /// takes that field's tag; `true` for anything else.
    pub fn recoverable_at(&'static self, path: &FieldPath) -> bool {
        self.walk(path.segments()).0.is_none_or(|f| f.recoverable)
    }
}

/// One piece of a rule's text: literal text, or a field path in Rust names
/// that is shown in JSON names.
#[derive(Debug)]
pub enum RulePiece {
    /// Text shown as is.
    Text(&'static str),
    /// A field path, by Rust field names.
    Path(&'static [&'static str]),
}

/// Everything the derive knows about one `#[check]`, kept for run time.
#[derive(Debug)]
pub struct CheckMeta {
    /// The rule, e.g. `sum(line_items.amount) == stated_total`.
    pub rule: &'static [RulePiece],
    /// The operands whose values a failure shows, each as rule pieces.
    pub atoms: &'static [&'static [RulePiece]],
    /// The fields the check reads, by Rust names (a path through a collection
    /// is cut after its first step: `line_items`).
    pub fields: &'static [&'static [&'static str]],
    /// The `tolerance` option as written.
    pub tolerance: Option<&'static str>,
    /// The `message` option: `{lhs}`, `{rhs}` and field names are substituted.
    pub message: Option<&'static str>,
    /// The names `message` placeholders refer to, in the order the recorder fills them.
    pub placeholders: &'static [&'static str],
    /// The `code` option.
    pub code: Option<&'static str>,
    /// `false` when the check says `recoverable = false`.
    pub recoverable: bool,
    /// For `with = function` checks: the function's path as written.
    pub with: Option<&'static str>,
}

impl TypeInfo {
    /// Renders rule pieces in the JSON names of this type and the types it nests.
    pub fn render(&'static self, pieces: &[RulePiece]) -> String {
        let mut out = String::new();
        for piece in pieces {
            match piece {
                RulePiece::Text(text) => out.push_str(text),
                RulePiece::Path(path) => out.push_str(&self.json_path(path).join(".")),
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
                let field = ty.and_then(|t| t.fields.iter().find(|f| f.rust_name == *rust));
                ty = field.and_then(|f| (f.nested)());
                field.map_or(*rust, |f| f.json_name)
            })
            .collect()
    }
}
