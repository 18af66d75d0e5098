//! What the derive knows about a type, kept for run time: [`TypeInfo`] and
//! [`FieldInfo`]. The structure layer reads it to give a missing field its
//! recoverability tag, at any depth.

use crate::{FieldPath, violation::Segment};

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
    pub checks: &'static [crate::check::CheckMeta],
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
