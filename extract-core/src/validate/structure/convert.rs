//! Turns the errors `jsonschema` finds into violations: one per mistake,
//! each with its own path, code and a message written here.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use crate::schema::TypeInfo;
use crate::vocabulary::text::{a_json_type, count, shorten};
use crate::{Code, FieldPath, Layer, Segment, Violation, quote_prefix};

/// How many `$ref` hops a description of an allowed shape follows (guards cycles).
const MAX_REF_HOPS: usize = 8;
/// How many allowed values or field names a message lists before eliding the rest.
pub(super) const MAX_LISTED: usize = 12;

/// Turns one `jsonschema` error (and, for unions, its branches) into violations.
pub(super) struct Converter<'a> {
    pub root: &'a Value,
    pub value: &'a Value,
    pub info: &'static TypeInfo,
}

/// The message of a `missing_field` violation. For a field tagged
/// `recoverable = false` it tells the reader (a reviewer, at that point) why
/// the run stopped instead of asking the model for a value, saying what the
/// model did, never what the document holds: only a person can tell that.
pub(super) fn missing_message(null: bool, recoverable: bool) -> &'static str {
    match (null, recoverable) {
        (false, true) => "required field is missing",
        (true, true) => "required field is null; give a value",
        (false, false) => {
            "required field is missing: the model gave no value, and a field tagged recoverable = false \
             goes to a person instead of a retry"
        }
        (true, false) => {
            "required field is null: the model answered null, and a field tagged recoverable = false \
             goes to a person instead of a retry"
        }
    }
}

impl Converter<'_> {
    /// Converts the errors of one validation (or one union branch).
    ///
    /// A value of the wrong type where an `enum` or a `const` belongs fails
    /// both `type` and `enum`: one mistake, reported once, as the type error
    /// naming the allowed values (`expected "paid" or "unpaid", got 1`); and
    /// `null` on such a required field is only its `missing_field`.
    pub(super) fn convert_all(&self, errors: &[ValidationError<'_>], out: &mut Vec<Violation>) {
        // One pass indexes the errors by instance location, so converting
        // them stays linear in their number (20,000 bad items are 20,000
        // lookups, not 400 million comparisons).
        let mut typed: HashSet<&str> = HashSet::new();
        let mut allowed: HashMap<&str, &ValidationError<'_>> = HashMap::new();
        for error in errors {
            let at = error.instance_path().as_str();
            match error.kind() {
                ValidationErrorKind::Type { .. } => {
                    typed.insert(at);
                }
                ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
                    allowed.entry(at).or_insert(error);
                }
                _ => {}
            }
        }
        let allowed_at = |at: &Location| -> Option<Vec<String>> {
            allowed.get(at.as_str()).and_then(|e| match e.kind() {
                ValidationErrorKind::Enum { options } => {
                    Some(options.as_array().map(Vec::as_slice).unwrap_or_default().iter().map(show).collect())
                }
                ValidationErrorKind::Constant { expected_value } => Some(vec![show(expected_value)]),
                _ => None,
            })
        };
        for error in errors {
            match error.kind() {
                ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. }
                    if typed.contains(error.instance_path().as_str()) => {}
                ValidationErrorKind::Type { .. } => match allowed_at(error.instance_path()) {
                    Some(allowed) if !allowed.is_empty() && !error.instance().is_null() => {
                        let path = field_path(self.value, error.instance_path());
                        let listed =
                            if allowed.len() > MAX_LISTED { vec![join_list(&allowed)] } else { allowed };
                        out.push(self.mismatch(path, error.instance(), &listed));
                    }
                    _ => self.convert(error, out),
                },
                _ => self.convert(error, out),
            }
        }
    }

    fn convert(&self, error: &ValidationError<'_>, out: &mut Vec<Violation>) {
        let path = field_path(self.value, error.instance_path());
        let instance: &Value = error.instance();
        let structure = |code: Code, path: FieldPath, message: String| {
            Violation::new(Layer::Structure, code, path, message)
        };
        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().map_or_else(|| property.to_string(), str::to_string);
                let path = path.key(name);
                let recoverable = self.info.recoverable_at(&path, self.value);
                out.push(
                    structure(Code::MISSING_FIELD, path, missing_message(false, recoverable).into())
                        .recoverable(recoverable),
                );
            }
            ValidationErrorKind::Type { kind } => {
                let mut expected: Vec<String> = match kind {
                    TypeKind::Single(ty) => vec![type_name(*ty).to_string()],
                    TypeKind::Multiple(set) => set.iter().map(|ty| type_name(ty).to_string()).collect(),
                };
                // "a string or null" reads better than "null or a string".
                expected.sort_by_key(|name| name == "null");
                out.push(self.mismatch(path, instance, &expected));
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let allowed = self.allowed_fields(error.schema_path());
                for name in unexpected {
                    let message = format!("field {} is not allowed here{allowed}", quote_prefix(name));
                    out.push(structure(Code::UNKNOWN_FIELD, path.clone().key(name.clone()), message));
                }
            }
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                self.union(error, path, instance, context, out);
            }
            ValidationErrorKind::OneOfMultipleValid { .. } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!(
                    "{} matches more than one of the allowed shapes; make it match exactly one",
                    got(instance)
                ),
            )),
            ValidationErrorKind::Enum { options } => {
                let allowed = list_values(options.as_array().map(Vec::as_slice).unwrap_or_default());
                out.push(structure(
                    Code::INVALID_VALUE,
                    path,
                    format!("{} is not one of {allowed}", show(instance)),
                ));
            }
            ValidationErrorKind::Constant { expected_value } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be {}, got {}", show(expected_value), show(instance)),
            )),
            ValidationErrorKind::Pattern { pattern } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must match pattern {}, got {}", short_text(pattern), show(instance)),
            )),
            ValidationErrorKind::Format { format } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be a valid {}, got {}", format_hint(format), show(instance)),
            )),
            ValidationErrorKind::Minimum { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be at least {limit}, got {instance}"),
            )),
            ValidationErrorKind::Maximum { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be at most {limit}, got {instance}"),
            )),
            ValidationErrorKind::ExclusiveMinimum { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be greater than {limit}, got {instance}"),
            )),
            ValidationErrorKind::ExclusiveMaximum { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be less than {limit}, got {instance}"),
            )),
            ValidationErrorKind::MultipleOf { multiple_of } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be a multiple of {multiple_of}, got {instance}"),
            )),
            ValidationErrorKind::MinLength { limit } => {
                let len = instance.as_str().map_or(0, |s| s.chars().count());
                out.push(structure(
                    Code::INVALID_VALUE,
                    path,
                    format!(
                        "must be at least {} long, got {} ({})",
                        count(*limit, "character"),
                        show(instance),
                        count(len as u64, "character")
                    ),
                ));
            }
            ValidationErrorKind::MaxLength { limit } => {
                let len = instance.as_str().map_or(0, |s| s.chars().count());
                out.push(structure(
                    Code::INVALID_VALUE,
                    path,
                    format!(
                        "must be at most {} long, got {}",
                        count(*limit, "character"),
                        count(len as u64, "character")
                    ),
                ));
            }
            ValidationErrorKind::MinItems { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must have at least {}, got {}", count(*limit, "item"), array_len(instance)),
            )),
            ValidationErrorKind::MaxItems { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must have at most {}, got {}", count(*limit, "item"), array_len(instance)),
            )),
            ValidationErrorKind::AdditionalItems { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must have at most {}, got {}", count(*limit as u64, "item"), array_len(instance)),
            )),
            ValidationErrorKind::UnevaluatedItems { unexpected } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("has {} that are not allowed here", count(unexpected.len() as u64, "extra item")),
            )),
            ValidationErrorKind::UniqueItems => out.push(structure(
                Code::INVALID_VALUE,
                path,
                "items must be unique, but some are repeated; remove the duplicates".into(),
            )),
            ValidationErrorKind::Contains => out.push(structure(
                Code::INVALID_VALUE,
                path,
                "must contain at least one item of the required shape".into(),
            )),
            ValidationErrorKind::MinProperties { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must have at least {}", count(*limit, "field")),
            )),
            ValidationErrorKind::MaxProperties { limit } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must have at most {}", count(*limit, "field")),
            )),
            ValidationErrorKind::PropertyNames { error } => {
                let name = error.instance().as_str().map_or_else(|| show(error.instance()), quote_prefix);
                out.push(structure(
                    Code::UNKNOWN_FIELD,
                    path,
                    format!("field name {name} is not allowed here"),
                ));
            }
            ValidationErrorKind::FalseSchema => out.push(structure(
                Code::INVALID_VALUE,
                path,
                "no value is allowed here; leave it out".into(),
            )),
            ValidationErrorKind::Not { .. } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("{} is not allowed here", got(instance)),
            )),
            ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!(
                    "{} could not be checked against its pattern; give a shorter, simpler value",
                    got(instance)
                ),
            )),
            ValidationErrorKind::ContentEncoding { content_encoding } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be {} encoded", short_text(content_encoding)),
            )),
            ValidationErrorKind::ContentMediaType { content_media_type } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be valid {}", short_text(content_media_type)),
            )),
            ValidationErrorKind::FromUtf8 { .. } => {
                out.push(structure(Code::INVALID_VALUE, path, "must decode to valid UTF-8 text".into()))
            }
            ValidationErrorKind::Custom { message, .. } => {
                out.push(structure(Code::INVALID_VALUE, path, short_text(message)))
            }
            ValidationErrorKind::Referencing(error) => out.push(
                structure(
                    Code::new_static("invalid_schema"),
                    path,
                    format!(
                        "the type's schema has a reference that does not resolve: {}",
                        short_text(&error.to_string())
                    ),
                )
                .recoverable(false),
            ),
        }
    }

    /// A value of the wrong JSON type; `null` for a field is `missing_field`.
    fn mismatch(&self, path: FieldPath, instance: &Value, expected: &[String]) -> Violation {
        if instance.is_null() && matches!(path.segments().last(), Some(Segment::Key(_))) {
            let field = self.info.field_at(&path, self.value);
            let recoverable = self.info.recoverable_at(&path, self.value);
            let message = if field.is_none_or(|f| f.required) {
                missing_message(true, recoverable)
            } else {
                "must not be null; give a value or leave the field out"
            };
            return Violation::new(Layer::Structure, Code::MISSING_FIELD, path, message)
                .recoverable(recoverable);
        }
        let message = format!("expected {}, got {}", join_or(expected), got(instance));
        Violation::new(Layer::Structure, Code::INVALID_TYPE, path, message)
    }

    /// One sensible violation for a failed `anyOf`/`oneOf` (an `Option<T>`,
    /// an enum with documented variants, an untagged enum): the errors of the
    /// branch whose shape the value has, or one summary of what is allowed.
    fn union(
        &self,
        error: &ValidationError<'_>,
        path: FieldPath,
        instance: &Value,
        branches: &[Vec<ValidationError<'static>>],
        out: &mut Vec<Violation>,
    ) {
        // An enum's union: the branch its tag chose, or one violation at the
        // tag naming the allowed ones.
        match self.discriminated(error.schema_path(), instance) {
            Some(Discriminated::Branch { index, tag }) if index < branches.len() => {
                // Each violation names the variant the model chose, so a
                // correction fixes that variant instead of picking another.
                let from = out.len();
                self.convert_all(&branches[index], out);
                let variant = show(&Value::from(tag.as_str()));
                for violation in &mut out[from..] {
                    violation.message = format!("{} (in the variant {variant})", violation.message);
                }
                return;
            }
            Some(Discriminated::Fieldless { tag }) => {
                let variant = show(&Value::from(tag.as_str()));
                let message = format!(
                    "the variant {variant} has fields: give it as an object, {{{variant}: {{...}}}}, not as a bare name"
                );
                out.push(Violation::new(Layer::Structure, Code::INVALID_TYPE, path, message));
                return;
            }
            Some(Discriminated::UnknownTag { key, allowed }) => {
                let allowed =
                    join_list(&allowed.iter().map(|a| show(&Value::from(a.as_str()))).collect::<Vec<_>>());
                let (code, message) = match instance.get(&key) {
                    Some(tag) if !tag.is_null() => {
                        (Code::INVALID_VALUE, format!("{} is not one of {allowed}", show(tag)))
                    }
                    _ => (Code::MISSING_FIELD, format!("missing; give one of {allowed}")),
                };
                out.push(Violation::new(Layer::Structure, code, path.key(key), message));
                return;
            }
            Some(Discriminated::UnknownKey { allowed }) => {
                let allowed =
                    join_list(&allowed.iter().map(|a| show(&Value::from(a.as_str()))).collect::<Vec<_>>());
                let keys = instance.as_object().map(|o| o.keys().collect::<Vec<_>>()).unwrap_or_default();
                // Never every key of a hostile object: one, or how many.
                let message = match keys.as_slice() {
                    [key] => format!("the variant {} is not one of {allowed}", quote_prefix(key)),
                    _ => format!(
                        "must name one variant, {allowed}, as its only key; got {}",
                        count(keys.len(), "key")
                    ),
                };
                out.push(Violation::new(Layer::Structure, Code::INVALID_VALUE, path, message));
                return;
            }
            _ => {}
        }
        let here = error.instance_path();
        let at_here = |e: &ValidationError<'_>| e.instance_path() == here;
        let shaped: Vec<&Vec<ValidationError<'static>>> = branches
            .iter()
            .filter(|errors| {
                !errors.iter().any(|e| at_here(e) && matches!(e.kind(), ValidationErrorKind::Type { .. }))
            })
            .collect();
        let only_values = |errors: &Vec<ValidationError<'static>>| {
            errors.iter().all(|e| {
                at_here(e)
                    && matches!(
                        e.kind(),
                        ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
                    )
            })
        };
        let allowed = self.union_allowed(error.schema_path());
        if shaped.is_empty() {
            let expected: Vec<String> = allowed.into_iter().map(Allowed::into_text).collect();
            out.push(self.mismatch(path, instance, &expected));
        } else if shaped.iter().all(|errors| only_values(errors)) {
            let values: Vec<String> = allowed
                .into_iter()
                .filter_map(|a| match a {
                    Allowed::Value(v) => Some(v),
                    Allowed::Shape(_) => None,
                })
                .collect();
            let message = format!("{} is not one of {}", show(instance), join_list(&values));
            out.push(Violation::new(Layer::Structure, Code::INVALID_VALUE, path, message));
        } else {
            let best = shaped.iter().min_by_key(|errors| errors.len()).expect("not empty");
            self.convert_all(best, out);
        }
    }

    /// For the union at `schema_path` that is a tagged enum's: which branch
    /// `instance` chose. Internally and adjacently tagged, every branch is an
    /// object that pins one property (the tag) to one string; externally
    /// tagged, every object branch requires exactly one property (the
    /// variant's tag), beside string branches (unit variants). `None` when
    /// the union is not one of these, or the instance is no object.
    fn discriminated(&self, schema_path: &Location, instance: &Value) -> Option<Discriminated> {
        let node = self.root.pointer(schema_path.as_str())?.as_array()?;
        let branches: Vec<&Value> = node.iter().map(|b| self.resolve(b)).collect();
        // Externally tagged, a variant with fields written as its bare name.
        if let Value::String(name) = instance {
            let named = branches.iter().any(|branch| {
                branch
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.len() == 1 && r[0] == *name)
                    && branch.get("properties").and_then(Value::as_object).is_some_and(|p| p.len() == 1)
            });
            return named.then(|| Discriminated::Fieldless { tag: name.clone() });
        }
        let object = instance.as_object()?;
        let pinned = |branch: &Value, key: &str| -> Option<String> {
            let property = self.resolve(branch.get("properties")?.get(key)?);
            let value =
                property.get("const").or_else(|| match property.get("enum")?.as_array()?.as_slice() {
                    [one] => Some(one),
                    _ => None,
                })?;
            value.as_str().map(str::to_string)
        };
        // Internally or adjacently tagged: a key every branch pins.
        let first = branches.first()?;
        let keys = first.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.keys());
        for key in keys {
            let tags: Option<Vec<String>> = branches.iter().map(|b| pinned(b, key)).collect();
            let Some(tags) = tags else { continue };
            let chosen = object.get(key).and_then(Value::as_str);
            return Some(match tags.iter().position(|t| Some(t.as_str()) == chosen) {
                Some(index) => Discriminated::Branch { index, tag: tags[index].clone() },
                None => Discriminated::UnknownTag { key: key.clone(), allowed: tags },
            });
        }
        // Externally tagged: object branches each require one key.
        let mut allowed = Vec::new();
        let mut chosen = None;
        for (i, branch) in branches.iter().enumerate() {
            if let Some(value) = branch.get("const").or_else(|| branch.get("enum")?.as_array()?.first()) {
                allowed.push(value.as_str()?.to_string());
                continue;
            }
            let [Value::String(key)] = branch.get("required")?.as_array()?.as_slice() else { return None };
            if branch.get("properties")?.as_object()?.len() != 1 {
                return None;
            }
            if object.len() == 1 && object.contains_key(key) {
                chosen = Some((i, key.clone()));
            }
            allowed.push(key.clone());
        }
        Some(match chosen {
            Some((index, tag)) => Discriminated::Branch { index, tag },
            None => Discriminated::UnknownKey { allowed },
        })
    }

    /// `schema`, or what its `$ref` names (a few hops).
    fn resolve<'v>(&'v self, schema: &'v Value) -> &'v Value {
        resolve_ref(self.root, schema)
    }

    /// What the branches of the union at `schema_path` accept, described.
    fn union_allowed(&self, schema_path: &Location) -> Vec<Allowed> {
        let mut allowed = Vec::new();
        if let Some(node) = self.root.pointer(schema_path.as_str()) {
            for branch in node.as_array().map(Vec::as_slice).unwrap_or_default() {
                describe_schema(self.root, branch, 0, &mut allowed);
            }
        }
        if allowed.is_empty() {
            allowed.push(Allowed::Shape("one of the allowed shapes".into()));
        }
        allowed
    }

    /// `" (allowed: a, b)"` for the object whose `additionalProperties` failed.
    fn allowed_fields(&self, schema_path: &Location) -> String {
        let pointer = schema_path.as_str();
        let parent = pointer.rsplit_once('/').map_or("", |(parent, _)| parent);
        let names: Vec<&str> = self
            .root
            .pointer(parent)
            .and_then(|node| node.get("properties"))
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if names.is_empty() {
            return String::new();
        }
        let mut text = String::from(" (allowed: ");
        for (i, name) in names.iter().take(MAX_LISTED).enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(name);
        }
        if names.len() > MAX_LISTED {
            let _ = write!(text, ", and {} more", names.len() - MAX_LISTED);
        }
        text.push(')');
        text
    }
}

/// The branch of a tagged enum's union an output chose.
enum Discriminated {
    /// The branch at `index`, the variant the value's tag names.
    Branch { index: usize, tag: String },
    /// Externally tagged: the value is the bare name of a variant with fields.
    Fieldless { tag: String },
    /// Internally or adjacently tagged: the tag `key` names no variant.
    UnknownTag { key: String, allowed: Vec<String> },
    /// Externally tagged: the object's key names no variant.
    UnknownKey { allowed: Vec<String> },
}

/// One alternative a schema accepts: an exact value or a JSON type.
#[derive(PartialEq)]
enum Allowed {
    /// An exact value (`enum`, `const`), shown: `"paid"`.
    Value(String),
    /// A type: `an object`, `null`.
    Shape(String),
}

impl Allowed {
    fn into_text(self) -> String {
        match self {
            Allowed::Value(text) | Allowed::Shape(text) => text,
        }
    }
}

/// Describes what `schema` accepts, one entry per alternative: `"paid"`,
/// `an object`, `null`. Follows `$ref` a few hops.
fn describe_schema(root: &Value, schema: &Value, hops: usize, out: &mut Vec<Allowed>) {
    let mut push = |entry: Allowed| {
        if !out.contains(&entry) {
            out.push(entry);
        }
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
        && hops < MAX_REF_HOPS
        && let Some(target) = reference.strip_prefix('#').and_then(|p| root.pointer(p))
    {
        describe_schema(root, target, hops + 1, out);
        return;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        values.iter().take(MAX_LISTED).for_each(|v| push(Allowed::Value(show(v))));
        return;
    }
    if let Some(value) = schema.get("const") {
        push(Allowed::Value(show(value)));
        return;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            for branch in branches {
                describe_schema(root, branch, hops, out);
            }
            return;
        }
    }
    match schema.get("type") {
        Some(Value::String(ty)) => push(Allowed::Shape(json_type_name(ty))),
        Some(Value::Array(types)) => {
            types.iter().filter_map(Value::as_str).for_each(|ty| push(Allowed::Shape(json_type_name(ty))))
        }
        _ if schema.get("properties").is_some() => push(Allowed::Shape("an object".into())),
        _ => {}
    }
}

/// The output path of a jsonschema instance location, walking the value so a
/// numeric object key stays a key and only array positions become indices.
pub(super) fn field_path(value: &Value, location: &Location) -> FieldPath {
    let mut current = Some(value);
    let mut segments = Vec::new();
    for segment in location.segments() {
        let (segment, next) = match (segment, current) {
            (LocationSegment::Index(i), Some(Value::Array(items))) => (Segment::Index(i), items.get(i)),
            (LocationSegment::Index(i), node) => {
                let key = i.to_string();
                let next = node.and_then(|n| n.get(&key));
                (Segment::Key(key.into()), next)
            }
            (LocationSegment::Property(key), node) => {
                let next = node.and_then(|n| n.get(key.as_ref()));
                (Segment::Key(key.into_owned().into()), next)
            }
        };
        segments.push(segment);
        current = next;
    }
    FieldPath::from_segments(segments)
}

/// `"abc"`, `300`, `true`, `null`, or `an array`/`an object` for containers.
pub(super) fn show(value: &Value) -> String {
    match value {
        Value::String(s) => quote_prefix(s),
        Value::Array(_) | Value::Object(_) => got(value),
        scalar => scalar.to_string(),
    }
}

/// What came, for a message: `a string "abc"`, `300`, `an array of 3 items`.
pub(super) fn got(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("a string {}", quote_prefix(s)),
        Value::Array(items) => format!("an array of {}", count(items.len() as u64, "item")),
        Value::Object(fields) => format!("an object with {}", count(fields.len() as u64, "field")),
    }
}

fn array_len(value: &Value) -> String {
    count(value.as_array().map_or(0, Vec::len) as u64, "item")
}

fn type_name(ty: JsonType) -> &'static str {
    a_json_type(&ty.to_string()).expect("jsonschema names JSON types")
}

fn json_type_name(ty: &str) -> String {
    a_json_type(ty).map_or_else(|| format!("a {}", shorten(ty, 30)), str::to_string)
}

/// The name of a `format` with a hint of its shape.
fn format_hint(format: &str) -> String {
    match format {
        "date" => "date (YYYY-MM-DD)".into(),
        "date-time" => "date-time (RFC 3339, e.g. 2024-01-31T09:30:00Z)".into(),
        "time" => "time (HH:MM:SS, RFC 3339)".into(),
        "duration" => "duration (ISO 8601, e.g. P3DT4H)".into(),
        "email" => "email address".into(),
        "uri" => "URI".into(),
        "uuid" => "UUID".into(),
        "ipv4" => "IPv4 address".into(),
        "ipv6" => "IPv6 address".into(),
        other => format!("{} (format {other:?})", shorten(other, 40)),
    }
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn join_or(items: &[String]) -> String {
    match items {
        [] => "a value".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `"a", "b", "c"` (elided past [`MAX_LISTED`]).
pub(super) fn join_list(items: &[String]) -> String {
    let mut text = items.iter().take(MAX_LISTED).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > MAX_LISTED {
        let _ = write!(text, ", ... ({} in all)", items.len());
    }
    text
}

fn list_values(values: &[Value]) -> String {
    join_list(&values.iter().map(show).collect::<Vec<_>>())
}

/// A message fragment from elsewhere (a pattern, a library's text), kept short.
pub(super) fn short_text(text: &str) -> String {
    shorten(text, 120)
}

/// `schema`, or what its local `$ref` names in `root` (a few hops; a
/// reference that names nothing stays as it is).
pub(crate) fn resolve_ref<'v>(root: &'v Value, mut schema: &'v Value) -> &'v Value {
    for _ in 0..MAX_REF_HOPS {
        match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => match root.pointer(pointer) {
                Some(target) => schema = target,
                None => break,
            },
            None => break,
        }
    }
    schema
}
