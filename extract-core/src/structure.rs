//! The structure layer: does the output match the type?
//!
//! A [`StructureValidator`] is compiled once per type from the type's JSON
//! Schema (schemars 1.x, draft 2020-12) and turns every error the `jsonschema`
//! crate finds into a [`Violation`] with its own path, code, message and
//! recoverability. [`serde_violation`] covers what only serde rejects (a
//! number out of range for an `i64`, say), so an output serde refuses always
//! gets at least one violation.
//!
//! Messages are written here, never copied from the validator (whose text
//! embeds whole offending values): they say what was expected and what came,
//! quoting at most a short prefix of a long value.

use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::Value;

use crate::violation::Segment;
use crate::{Code, FieldPath, Layer, TypeInfo, Violation, quote_prefix};

/// How many `$ref` hops a description of an allowed shape follows (guards cycles).
const MAX_REF_HOPS: usize = 8;
/// How many allowed values or field names a message lists before eliding the rest.
const MAX_LISTED: usize = 12;
/// How deep [`needs_schema_pass`] looks into a schema (guards pathological schemas).
const MAX_SCHEMA_DEPTH: usize = 128;
/// How deep into an output the schema pass looks when the schema itself has
/// no bound (a recursive type). Deeper parts are cut before validation, so a
/// value nested 1,000 levels deep never makes a deep copy (the validator clones
/// the values it reports inside `anyOf` branches, recursively).
const MAX_VALUE_DEPTH: usize = 128;

/// The compiled schema validator of one type.
///
/// Build it once per type (the derive keeps it in a `OnceLock`) and call
/// [`violations`](StructureValidator::violations) for every output serde
/// rejects, and for every output when
/// [`needs_schema_pass`](StructureValidator::needs_schema_pass) says serde
/// alone does not enforce the whole schema.
///
/// ```
/// use extract_core::structure::StructureValidator;
/// use serde_json::json;
///
/// static INFO: extract_core::TypeInfo = extract_core::TypeInfo {
///     rust_name: "Note", tool_name: "note", description: "", fields: &[], checks: &[],
/// };
/// let schema = json!({
///     "type": "object",
///     "properties": {"title": {"type": "string", "maxLength": 5}},
///     "required": ["title"],
/// });
/// let validator = StructureValidator::new(&schema);
/// assert!(validator.needs_schema_pass()); // serde does not enforce maxLength
/// let found = validator.violations(&json!({"title": "far too long"}), &INFO);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].path, "title");
/// assert_eq!(found[0].code, "invalid_value");
/// ```
pub struct StructureValidator {
    /// The schema, kept to resolve schema locations (allowed fields, union branches).
    schema: Value,
    /// The compiled validator, or why the schema did not compile.
    compiled: Result<Validator, String>,
    /// Whether the schema holds keywords serde does not enforce.
    needs_schema_pass: bool,
    /// Whether the type has `f32` numbers, which serde saturates to infinity.
    has_f32: bool,
    /// How many levels of an output the schema can judge; deeper parts are cut.
    judged_depth: usize,
    /// Whether `judged_depth` is the schema's own bound (so cutting below it
    /// loses nothing) rather than the [`MAX_VALUE_DEPTH`] cap.
    depth_is_exact: bool,
}

impl std::fmt::Debug for StructureValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StructureValidator")
            .field("compiled", &self.compiled.is_ok())
            .field("needs_schema_pass", &self.needs_schema_pass)
            .finish_non_exhaustive()
    }
}

impl StructureValidator {
    /// Compiles the validator of `schema`, with `format` assertions on.
    ///
    /// Never panics: a schema that does not compile (a bad `pattern` regex in
    /// a `#[schemars]` attribute, say) makes every call of
    /// [`violations`](StructureValidator::violations) report one
    /// non-recoverable `invalid_schema` violation, and
    /// [`compile_error`](StructureValidator::compile_error) says why.
    pub fn new(schema: &Value) -> StructureValidator {
        // serde turns 1e300 into an infinite `f32` without a word; the
        // validator's copy of the schema bounds every `f32` to its range.
        let needs_pass_by_keywords = needs_schema_pass(schema, 0);
        let mut schema = schema.clone();
        let has_f32 = bound_f32(&mut schema);
        let schema = &schema;
        let compiled = jsonschema::options().should_validate_formats(true).build(schema).map_err(|error| {
            format!("the type's JSON Schema does not compile: {}", short(&error.to_string()))
        });
        let needs_schema_pass = compiled.is_err() || needs_pass_by_keywords;
        // A node at depth `d + 1` is judged by its type alone (its children are
        // beyond every keyword); keep it, and cut below it.
        // `uniqueItems` compares whole subtrees, so nothing may be cut under it.
        let bound = schema_depth(schema, schema, &mut Vec::new())
            .filter(|d| d + 1 < MAX_VALUE_DEPTH && !mentions_unique_items(schema, 0));
        let (judged_depth, depth_is_exact) = bound.map_or((MAX_VALUE_DEPTH, false), |d| (d + 1, true));
        StructureValidator {
            schema: schema.clone(),
            compiled,
            needs_schema_pass,
            has_f32,
            judged_depth,
            depth_is_exact,
        }
    }

    /// Whether the schema holds keywords serde does not enforce by itself
    /// (`pattern`, `minimum`/`maximum`/`exclusive*`, `multipleOf`,
    /// `minLength`/`maxLength`, `minItems`/`maxItems`, `uniqueItems`,
    /// `format`, `const`, ...). When true, run
    /// [`violations`](StructureValidator::violations) even after serde
    /// accepted the output.
    ///
    /// Keywords schemars derives from a Rust type and that serde enforces
    /// exactly are not counted: the numeric formats (`uint8`, `int64`,
    /// `double`, ...) and the bounds that merely restate an integer type's
    /// range (`minimum: 0, maximum: 255` on a `u8`).
    pub fn needs_schema_pass(&self) -> bool {
        self.needs_schema_pass
    }

    /// Whether `value`, which serde accepted, must still go through the
    /// schema pass: always when [`needs_schema_pass`](Self::needs_schema_pass),
    /// and for a type with `f32` fields when the value holds a number beyond
    /// `f32`'s range (a cheap scan instead of a schema pass on every output).
    pub fn must_check(&self, value: &Value) -> bool {
        self.needs_schema_pass || (self.has_f32 && exceeds_f32(value))
    }

    /// Why the schema did not compile, if it did not.
    pub fn compile_error(&self) -> Option<&str> {
        self.compiled.as_ref().err().map(String::as_str)
    }

    /// Every structural violation of `value`, each with its JSON path, in the
    /// order the schema lists the keywords. Empty when the value matches.
    ///
    /// A required field that is absent, or `null` where the schema does not
    /// allow `null`, is `missing_field` at the field's own path and takes the
    /// field's recoverability tag from `info`; every other structural
    /// violation is recoverable. `null` on an `Option` field is valid.
    pub fn violations(&self, value: &Value, info: &'static TypeInfo) -> Vec<Violation> {
        let validator = match &self.compiled {
            Ok(validator) => validator,
            Err(reason) => {
                return vec![
                    Violation::new(
                        Layer::Structure,
                        Code::new_static("invalid_schema"),
                        FieldPath::root(),
                        reason,
                    )
                    .recoverable(false),
                ];
            }
        };
        let mut out = Vec::new();
        let cut;
        let value = match too_deep(value, self.judged_depth) {
            None => value,
            Some(deep_path) => {
                if !self.depth_is_exact {
                    out.push(Violation::new(
                        Layer::Structure,
                        Code::INVALID_VALUE,
                        deep_path,
                        format!("nested more than {MAX_VALUE_DEPTH} levels deep; flatten this value"),
                    ));
                }
                cut = cut_below(value, self.judged_depth);
                &cut
            }
        };
        let converter = Converter { root: &self.schema, value, info };
        let errors: Vec<ValidationError<'_>> = validator.iter_errors(value).collect();
        converter.convert_all(&errors, &mut out);
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert((v.path.clone(), v.code.clone(), v.message.clone())));
        out
    }
}

/// Turns one `jsonschema` error (and, for unions, its branches) into violations.
struct Converter<'a> {
    root: &'a Value,
    value: &'a Value,
    info: &'static TypeInfo,
}

/// The message of a `missing_field` violation. For a field tagged
/// `recoverable = false` it tells the reader (a reviewer, at that point) why
/// the run stopped instead of asking the model for a value.
fn missing_message(null: bool, recoverable: bool) -> &'static str {
    match (null, recoverable) {
        (false, true) => "required field is missing",
        (true, true) => "required field is null; give a value",
        (false, false) => {
            "required field is missing: the document does not state it, so the extraction escalates instead of retrying"
        }
        (true, false) => {
            "required field is null: the document does not state it, so the extraction escalates instead of retrying"
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
    fn convert_all(&self, errors: &[ValidationError<'_>], out: &mut Vec<Violation>) {
        let is_type = |e: &ValidationError<'_>| matches!(e.kind(), ValidationErrorKind::Type { .. });
        let allowed_at = |at: &Location| -> Option<Vec<String>> {
            errors.iter().filter(|e| e.instance_path() == at).find_map(|e| match e.kind() {
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
                    if errors.iter().any(|e| is_type(e) && e.instance_path() == error.instance_path()) => {}
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
                let recoverable = self.info.recoverable_at(&path);
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
                format!("must match pattern {}, got {}", short(pattern), show(instance)),
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
                format!("must be {} encoded", short(content_encoding)),
            )),
            ValidationErrorKind::ContentMediaType { content_media_type } => out.push(structure(
                Code::INVALID_VALUE,
                path,
                format!("must be valid {}", short(content_media_type)),
            )),
            ValidationErrorKind::FromUtf8 { .. } => {
                out.push(structure(Code::INVALID_VALUE, path, "must decode to valid UTF-8 text".into()))
            }
            ValidationErrorKind::Custom { message, .. } => {
                out.push(structure(Code::INVALID_VALUE, path, short(message)))
            }
            ValidationErrorKind::Referencing(error) => out.push(
                structure(
                    Code::new_static("invalid_schema"),
                    path,
                    format!(
                        "the type's schema has a reference that does not resolve: {}",
                        short(&error.to_string())
                    ),
                )
                .recoverable(false),
            ),
        }
    }

    /// A value of the wrong JSON type; `null` for a field is `missing_field`.
    fn mismatch(&self, path: FieldPath, instance: &Value, expected: &[String]) -> Violation {
        if instance.is_null() && matches!(path.segments().last(), Some(Segment::Key(_))) {
            let field = self.info.field_at(&path);
            let recoverable = self.info.recoverable_at(&path);
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

/// How many levels of an instance `schema` constrains (`properties`, `items`
/// and the like add one; `$ref` and unions add none); `None` for a recursive
/// schema, whose depth has no bound.
fn schema_depth(root: &Value, schema: &Value, refs: &mut Vec<String>) -> Option<usize> {
    let Some(node) = schema.as_object() else { return Some(0) };
    if refs.len() > MAX_SCHEMA_DEPTH {
        return None;
    }
    let mut depth = node.get("const").map_or(0, literal_depth);
    for literal in node.get("enum").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        depth = depth.max(literal_depth(literal));
    }
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        if refs.iter().any(|r| r == reference) {
            return None;
        }
        if let Some(target) = reference.strip_prefix('#').and_then(|p| root.pointer(p)) {
            refs.push(reference.to_string());
            let inner = schema_depth(root, target, refs);
            refs.pop();
            depth = depth.max(inner?);
        }
    }
    const SAME_LEVEL: &[&str] = &["not", "if", "then", "else"];
    const LEVEL_BELOW: &[&str] = &[
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "additionalItems",
    ];
    for key in SAME_LEVEL {
        if let Some(sub) = node.get(*key) {
            depth = depth.max(schema_depth(root, sub, refs)?);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for sub in node.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            depth = depth.max(schema_depth(root, sub, refs)?);
        }
    }
    for key in LEVEL_BELOW {
        if let Some(sub) = node.get(*key) {
            depth = depth.max(1 + schema_depth(root, sub, refs)?);
        }
    }
    for sub in node.get("prefixItems").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        depth = depth.max(1 + schema_depth(root, sub, refs)?);
    }
    for key in ["properties", "patternProperties"] {
        for sub in node.get(key).and_then(Value::as_object).map(|m| m.values()).into_iter().flatten() {
            depth = depth.max(1 + schema_depth(root, sub, refs)?);
        }
    }
    Some(depth)
}

/// The path of the first node of `value` deeper than `limit` (the root is
/// depth 0), if there is one. Iterative, linear in the size of `value`.
fn too_deep(value: &Value, limit: usize) -> Option<FieldPath> {
    // Every visited node: its parent's index in `nodes` and its own segment.
    let mut nodes: Vec<(usize, Option<Segment>)> = vec![(0, None)];
    let mut stack = vec![(value, 0usize, 0usize)];
    while let Some((node, depth, index)) = stack.pop() {
        let children: Vec<(Segment, &Value)> = match node {
            Value::Array(items) => items.iter().enumerate().map(|(i, v)| (Segment::Index(i), v)).collect(),
            Value::Object(fields) => {
                fields.iter().map(|(k, v)| (Segment::Key(k.clone().into()), v)).collect()
            }
            _ => continue,
        };
        for (segment, child) in children {
            nodes.push((index, Some(segment)));
            let child_index = nodes.len() - 1;
            if depth + 1 > limit {
                let mut segments = Vec::new();
                let mut at = child_index;
                while let (parent, Some(segment)) = &nodes[at] {
                    segments.push(segment.clone());
                    at = *parent;
                }
                segments.reverse();
                return Some(FieldPath::from_segments(segments));
            }
            stack.push((child, depth + 1, child_index));
        }
    }
    None
}

/// Whether a schema uses `uniqueItems` anywhere.
fn mentions_unique_items(schema: &Value, depth: usize) -> bool {
    depth > MAX_SCHEMA_DEPTH
        || schema.get("uniqueItems").is_some_and(|u| u != &Value::Bool(false))
        || subschemas(schema).any(|sub| mentions_unique_items(sub, depth + 1))
}

/// How deep a literal value (`const`, `enum` entry) nests. Iterative.
fn literal_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match node {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(fields) => stack.extend(fields.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// A copy of `value` with every node deeper than `limit` replaced by `null`
/// (containers at `limit` keep their keys and lengths). Recursion is bounded by `limit`.
fn cut_below(value: &Value, limit: usize) -> Value {
    match value {
        _ if limit == 0 => match value {
            Value::Array(items) => Value::Array(vec![Value::Null; items.len()]),
            Value::Object(fields) => Value::Object(fields.keys().map(|k| (k.clone(), Value::Null)).collect()),
            scalar => scalar.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_below(v, limit - 1)).collect()),
        Value::Object(fields) => {
            Value::Object(fields.iter().map(|(k, v)| (k.clone(), cut_below(v, limit - 1))).collect())
        }
        scalar => scalar.clone(),
    }
}

/// Whether `schema` holds a keyword serde does not enforce by itself.
fn needs_schema_pass(schema: &Value, depth: usize) -> bool {
    let Some(node) = schema.as_object() else { return false };
    if depth > MAX_SCHEMA_DEPTH {
        return true;
    }
    const SCHEMA_ONLY: &[&str] = &[
        "pattern",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "const",
        "contains",
        "minContains",
        "maxContains",
        "not",
        "if",
        "propertyNames",
        "patternProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
    ];
    if SCHEMA_ONLY.iter().any(|k| node.contains_key(*k)) {
        return true;
    }
    let format = node.get("format").and_then(Value::as_str);
    let range = format.and_then(integer_format_range);
    if let Some(format) = format
        && range.is_none()
        && !matches!(format, "float" | "double")
    {
        return true;
    }
    let bound_is_natural = |key: &str, natural: Option<f64>| {
        node.get(key).is_none_or(|b| b.as_f64().is_some_and(|b| natural.is_some_and(|n| b == n)))
    };
    if !bound_is_natural("minimum", range.map(|r| r.0))
        || !bound_is_natural("maximum", range.and_then(|r| r.1))
    {
        return true;
    }
    subschemas(schema).any(|sub| needs_schema_pass(sub, depth + 1))
}

/// Adds `f32`'s range to every `format: "float"` number schema that has no
/// bounds of its own; whether there was one.
fn bound_f32(schema: &mut Value) -> bool {
    match schema {
        Value::Object(node) => {
            let mut found = false;
            if node.get("format").and_then(Value::as_str) == Some("float") {
                let max = f64::from(f32::MAX);
                node.entry("minimum").or_insert(Value::from(-max));
                node.entry("maximum").or_insert(Value::from(max));
                found = true;
            }
            // Every child is visited (no short circuit): each must be bounded.
            for child in node.values_mut() {
                found |= bound_f32(child);
            }
            found
        }
        Value::Array(items) => {
            let mut found = false;
            for child in items {
                found |= bound_f32(child);
            }
            found
        }
        _ => false,
    }
}

/// Whether any number in `value` lies beyond `f32`'s range (iteratively, so
/// deep values cannot overflow the stack).
fn exceeds_f32(value: &Value) -> bool {
    let limit = f64::from(f32::MAX);
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(n) if n.as_f64().is_some_and(|x| x.abs() > limit) => return true,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// The range serde enforces for a schemars integer `format`: `(min, max)`.
pub(crate) fn integer_format_range(format: &str) -> Option<(f64, Option<f64>)> {
    Some(match format {
        "int8" => (i8::MIN as f64, Some(i8::MAX as f64)),
        "int16" => (i16::MIN as f64, Some(i16::MAX as f64)),
        "int32" => (i32::MIN as f64, Some(i32::MAX as f64)),
        "int64" | "int" => (i64::MIN as f64, Some(i64::MAX as f64)),
        "int128" => (i128::MIN as f64, Some(i128::MAX as f64)),
        "uint8" => (0.0, Some(u8::MAX as f64)),
        "uint16" => (0.0, Some(u16::MAX as f64)),
        "uint32" => (0.0, Some(u32::MAX as f64)),
        "uint64" | "uint" | "uint128" => (0.0, None),
        _ => return None,
    })
}

/// Every direct subschema of a schema node (properties, items, branches, `$defs`, ...).
pub(crate) fn subschemas(schema: &Value) -> impl Iterator<Item = &Value> {
    const SINGLE: &[&str] = &[
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "additionalItems",
    ];
    const LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
    const MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
    let node = schema.as_object();
    let singles = SINGLE.iter().filter_map(move |k| node?.get(*k)).filter(|v| v.is_object());
    let lists = LISTS.iter().filter_map(move |k| node?.get(*k)?.as_array()).flatten();
    let maps = MAPS.iter().filter_map(move |k| node?.get(*k)?.as_object()).flat_map(|m| m.values());
    singles.chain(lists).chain(maps)
}

/// The output path of a jsonschema instance location, walking the value so a
/// numeric object key stays a key and only array positions become indices.
fn field_path(value: &Value, location: &Location) -> FieldPath {
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

/// The fallback violation when serde rejects an output the schema pass
/// accepted (a `u8` given 300 where the schema states no bound, an `i64` out
/// of range: schemars sets no upper bound for `i64`/`u64`). Never panics.
///
/// The path comes from `serde_path_to_error`, in the JSON names serde read;
/// the message is written here from the value found at that path, never
/// copied from serde (whose text embeds whole values).
///
/// ```
/// # use serde::Deserialize;
/// use extract_core::structure::serde_violation;
///
/// #[derive(Deserialize, Debug)]
/// struct Row { count: u8 }
/// static INFO: extract_core::TypeInfo = extract_core::TypeInfo {
///     rust_name: "Row", tool_name: "row", description: "", fields: &[], checks: &[],
/// };
/// let value = serde_json::json!({"count": 300});
/// let error = serde_path_to_error::deserialize::<_, Row>(&value).unwrap_err();
/// let violation = serde_violation(&value, error, &INFO);
/// assert_eq!(violation.path, "count");
/// assert_eq!(violation.code, "invalid_type");
/// assert_eq!(violation.message, "expected an integer from 0 to 255, got 300");
/// ```
pub fn serde_violation(
    value: &Value,
    error: serde_path_to_error::Error<serde_json::Error>,
    info: &'static TypeInfo,
) -> Violation {
    let mut path = FieldPath::root();
    for segment in error.path().iter() {
        path = match segment {
            serde_path_to_error::Segment::Seq { index } => path.index(*index),
            serde_path_to_error::Segment::Map { key } => path.key(key.clone()),
            serde_path_to_error::Segment::Enum { variant } => path.key(variant.clone()),
            serde_path_to_error::Segment::Unknown => path,
        };
    }
    let text = error.inner().to_string();
    let found = value_at(value, &path);
    let structure =
        |code: Code, path: FieldPath, message: String| Violation::new(Layer::Structure, code, path, message);

    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default().to_string();
        let path = if matches!(path.segments().last(), Some(Segment::Key(k)) if *k == name) {
            path
        } else {
            path.key(name)
        };
        let recoverable = info.recoverable_at(&path);
        return structure(Code::MISSING_FIELD, path, missing_message(false, recoverable).into())
            .recoverable(recoverable);
    }
    if let Some(rest) = text.strip_prefix("unknown field `") {
        let (name, allowed) = split_backticked(rest);
        let path = if matches!(path.segments().last(), Some(Segment::Key(k)) if *k == name) {
            path
        } else {
            path.key(name.clone())
        };
        let allowed =
            if allowed.is_empty() { String::new() } else { format!(" (allowed: {})", allowed.join(", ")) };
        return structure(
            Code::UNKNOWN_FIELD,
            path,
            format!("field {} is not allowed here{allowed}", quote_prefix(&name)),
        );
    }
    if let Some(rest) = text.strip_prefix("unknown variant `") {
        let (_, allowed) = split_backticked(rest);
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let shown = found.map_or_else(|| "the value".to_string(), show);
        let message = if quoted.is_empty() {
            format!("{shown} is not an allowed value")
        } else {
            format!("{shown} is not one of {}", join_list(&quoted))
        };
        return structure(Code::INVALID_VALUE, path, message);
    }
    let expected = text.rsplit_once(", expected ").map(|(_, e)| rust_expected(e));
    if text.starts_with("invalid type: ") || text.starts_with("invalid value: ") {
        if found.is_some_and(Value::is_null) && matches!(path.segments().last(), Some(Segment::Key(_))) {
            let recoverable = info.recoverable_at(&path);
            return structure(Code::MISSING_FIELD, path, missing_message(true, recoverable).into())
                .recoverable(recoverable);
        }
        let expected = expected.unwrap_or_else(|| "a value of the field's type".into());
        let got = found.map_or_else(|| "a value of another type".into(), got);
        return structure(Code::INVALID_TYPE, path, format!("expected {expected}, got {got}"));
    }
    if let Some(rest) = text.strip_prefix("invalid length ") {
        let len = rest.split(',').next().unwrap_or_default();
        let expected = expected.unwrap_or_else(|| "another length".into());
        return structure(
            Code::INVALID_VALUE,
            path,
            format!("wrong number of items: expected {expected}, got {}", short(len)),
        );
    }
    if let Some(rest) = text.strip_prefix("duplicate field `") {
        let name = rest.split('`').next().unwrap_or_default();
        return structure(
            Code::INVALID_VALUE,
            path,
            format!("field {} appears twice; give it once", quote_prefix(name)),
        );
    }
    // A custom message from a type's own Deserialize (a date that does not parse, say).
    let got = found.map_or_else(String::new, |v| format!(", got {}", got(v)));
    structure(Code::INVALID_VALUE, path, format!("{}{got}", short(&text)))
}

/// `a`, `b` from "x`, expected one of `a`, `b`": the first name and the listed ones.
fn split_backticked(rest: &str) -> (String, Vec<String>) {
    let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
    let listed = tail.split('`').skip(1).step_by(2).take(MAX_LISTED).map(|s| prefix_chars(s, 60)).collect();
    (name.to_string(), listed)
}

/// Serde's "expected" text in the words the model sees (`u8` -> a range).
fn rust_expected(expected: &str) -> String {
    fn range<T: std::fmt::Display>(min: T, max: T) -> String {
        format!("an integer from {min} to {max}")
    }
    match expected {
        "u8" => range(u8::MIN, u8::MAX),
        "u16" => range(u16::MIN, u16::MAX),
        "u32" => range(u32::MIN, u32::MAX),
        "u64" => range(u64::MIN, u64::MAX),
        "u128" => range(u128::MIN, u128::MAX),
        "usize" => range(usize::MIN, usize::MAX),
        "i8" => range(i8::MIN, i8::MAX),
        "i16" => range(i16::MIN, i16::MAX),
        "i32" => range(i32::MIN, i32::MAX),
        "i64" => range(i64::MIN, i64::MAX),
        "i128" => range(i128::MIN, i128::MAX),
        "isize" => range(isize::MIN, isize::MAX),
        "f32" | "f64" => "a number".into(),
        "a string" | "a borrowed string" | "a character" => expected.to_string(),
        other => prefix_chars(other, 100),
    }
}

/// The value at `path` inside `value`.
fn value_at<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    path.segments().iter().try_fold(value, |node, segment| match segment {
        Segment::Key(key) => node.get(key.as_ref()),
        Segment::Index(i) => node.get(*i),
    })
}

/// `"abc"`, `300`, `true`, `null`, or `an array`/`an object` for containers.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => quote_prefix(s),
        Value::Array(_) | Value::Object(_) => got(value),
        scalar => scalar.to_string(),
    }
}

/// What came, for a message: `a string "abc"`, `300`, `an array of 3 items`.
fn got(value: &Value) -> String {
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
    match ty {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

fn json_type_name(ty: &str) -> String {
    match ty {
        "null" => "null".into(),
        "boolean" => "a boolean".into(),
        "integer" => "an integer".into(),
        "number" => "a number".into(),
        "string" => "a string".into(),
        "array" => "an array".into(),
        "object" => "an object".into(),
        other => format!("a {}", prefix_chars(other, 30)),
    }
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
        other => format!("{} (format {other:?})", prefix_chars(other, 40)),
    }
}

fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[String]) -> String {
    match items {
        [] => "a value".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `"a", "b", "c"` (elided past [`MAX_LISTED`]).
fn join_list(items: &[String]) -> String {
    let mut text = items.iter().take(MAX_LISTED).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > MAX_LISTED {
        let _ = write!(text, ", ... ({} in all)", items.len());
    }
    text
}

fn list_values(values: &[Value]) -> String {
    join_list(&values.iter().map(show).collect::<Vec<_>>())
}

/// At most `max` characters of `text`, marked when cut.
fn prefix_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

/// A message fragment from elsewhere (a pattern, a library's text), kept short.
fn short(text: &str) -> String {
    prefix_chars(text, 120)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static INFO: TypeInfo =
        TypeInfo { rust_name: "T", tool_name: "t", description: "", fields: &[], checks: &[] };

    #[test]
    fn numeric_formats_and_their_natural_bounds_need_no_schema_pass() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "b": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "c": {"type": "number", "format": "double"},
                "d": {"type": "integer", "format": "int64"}
            }
        });
        assert!(!StructureValidator::new(&schema).needs_schema_pass());
    }

    #[test]
    fn tighter_bounds_and_string_keywords_need_a_schema_pass() {
        for extra in [
            json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255}),
            json!({"type": "number", "format": "double", "maximum": 100}),
            json!({"type": "string", "pattern": "^a$"}),
            json!({"type": "string", "format": "email"}),
            json!({"type": "array", "items": {"type": "string", "maxLength": 3}}),
            json!({"const": "x"}),
        ] {
            let schema = json!({"type": "object", "properties": {"x": extra}});
            assert!(StructureValidator::new(&schema).needs_schema_pass(), "{schema}");
        }
    }

    #[test]
    fn keywords_hidden_in_defs_are_found() {
        let schema = json!({
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "string", "minLength": 1}}}}
        });
        assert!(StructureValidator::new(&schema).needs_schema_pass());
    }

    #[test]
    fn a_property_named_like_a_keyword_is_not_a_keyword() {
        let schema = json!({"type": "object", "properties": {"pattern": {"type": "string"}}});
        assert!(!StructureValidator::new(&schema).needs_schema_pass());
    }

    #[test]
    fn a_schema_that_does_not_compile_is_one_non_recoverable_violation() {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(unclosed"}}});
        let validator = StructureValidator::new(&schema);
        assert!(validator.compile_error().is_some());
        assert!(validator.needs_schema_pass());
        let found = validator.violations(&json!({"x": "a"}), &INFO);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, "invalid_schema");
        assert!(!found[0].recoverable);
    }

    #[test]
    fn numeric_object_keys_stay_keys() {
        let value = json!({"7": {"a": [1, 2]}});
        let location = Location::new().join("7").join("a").join(1usize);
        assert_eq!(field_path(&value, &location).to_string(), "7.a[1]");
        assert_eq!(field_path(&value, &location).segments()[0], Segment::Key("7".into()));
    }

    fn nested_objects(depth: usize) -> Value {
        let mut value = json!("leaf");
        for _ in 0..depth {
            value = json!({ "child": value });
        }
        value
    }

    #[test]
    fn schema_depth_counts_levels_and_sees_recursion() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(schema_depth(&flat, &flat, &mut Vec::new()), Some(1));
        let nested = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
            "$defs": {"Item": {"anyOf": [{"type": "object", "properties": {"n": {"type": "number"}}}, {"type": "null"}]}}
        });
        assert_eq!(schema_depth(&nested, &nested, &mut Vec::new()), Some(3));
        let recursive = json!({
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}
        });
        assert_eq!(schema_depth(&recursive, &recursive, &mut Vec::new()), None);
    }

    #[test]
    fn cutting_keeps_shape_down_to_the_limit() {
        let value = nested_objects(5);
        assert_eq!(too_deep(&value, 4).map(|p| p.to_string()), Some("child.child.child.child.child".into()));
        assert_eq!(too_deep(&value, 5), None);
        let cut = cut_below(&value, 2);
        assert_eq!(cut, json!({"child": {"child": {"child": null}}}));
    }

    #[test]
    fn a_recursive_schema_survives_a_value_a_thousand_levels_deep() {
        // Recursive: the schema cannot bound the depth, so the cap applies.
        let schema = json!({
            "type": "object",
            "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
            "required": ["child"]
        });
        let validator = StructureValidator::new(&schema);
        let found = validator.violations(&nested_objects(1000), &INFO);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, "invalid_value");
        assert_eq!(found[0].message, "nested more than 128 levels deep; flatten this value");
        assert_eq!(found[0].path.segments().len(), MAX_VALUE_DEPTH + 1);
        assert!(found.iter().all(|v| v.message.len() < 200));
        assert!(found.iter().all(|v| v.path.segments().len() <= MAX_VALUE_DEPTH + 1));
    }

    #[test]
    fn messages_join_alternatives() {
        assert_eq!(join_or(&["a".into()]), "a");
        assert_eq!(join_or(&["a".into(), "b".into()]), "a or b");
        assert_eq!(join_or(&["a".into(), "b".into(), "c".into()]), "a, b or c");
        assert_eq!(rust_expected("u8"), "an integer from 0 to 255");
        assert_eq!(got(&json!([1, 2])), "an array of 2 items");
    }
}
