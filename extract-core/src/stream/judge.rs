//! What a prefix of an output already decides: the violations no later
//! output can change, and the paths that are finished and pass everything
//! that depends on them.
//!
//! The prefix's value is completed into one the type reads: each value
//! still being written, and each required member an open object lacks, is
//! replaced by a placeholder of its schema's type (`""`, `0`, `[]`, the
//! first of an `enum`, `null` where allowed). The three layers then judge
//! that value, the semantic walk keeping a ledger of every check it ran
//! ([`CheckRun`]). A finding stands only when everything it read is
//! finished: a structural violation whose value (or the object that lacks
//! it) the output has closed; a check whose fields are all closed (its
//! result depends on them alone, never on a placeholder); a quote whose
//! sourced value is closed. Everything else waits for more output.

use serde_json::{Map, Value};

use crate::validate::check::{Audit, Audited, CheckRun, Lazy};
use crate::validate::structure::{resolve_ref, serde_violation};
use crate::validate::{Extractable, TypeCache};
use crate::{FieldPath, Segment, Violation};

use super::PartialJson;

/// What a prefix of an output decides ([`judge`]).
#[derive(Debug, Clone, Default)]
pub struct Judgement {
    /// The violations no later output can change: the attempt has failed.
    pub violations: Vec<Violation>,
    /// The finished paths that pass every check and keyword that reads
    /// them, each of those decided on finished values alone; in the order
    /// the reader finished them.
    pub complete: Vec<FieldPath>,
    /// Whether the semantic layer could judge the prefix (its completed
    /// value read as the type). When it could not, `complete` is empty and
    /// says nothing: keep what an earlier prefix found.
    pub judged: bool,
}

/// Judges the prefix `reader` has read, of an output for `T`, against the
/// document's `text` (`None`: quotes are not verified).
pub fn judge<T: Extractable>(reader: &PartialJson, text: Option<&str>) -> Judgement {
    let cache = TypeCache::of::<T>();
    let info = T::__describe();
    let schema = &cache.tool.input_schema;
    let value = reader.value();
    if !value.is_object() {
        return Judgement::default();
    }
    let completed = complete_value(reader, value, schema, schema, FieldPath::root());
    let finished = |path: &FieldPath| finished_prefix(reader, path);

    let mut violations: Vec<Violation> =
        cache.structure.violations(&completed, info).into_iter().filter(|v| finished(&v.path)).collect();
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cache.structure.deserialize::<T>(&completed)
    }));
    let typed = match decoded {
        Ok(Ok((typed, _))) => typed,
        Ok(Err(_)) => {
            let error = cache.structure.deserialize_error::<T>(&completed);
            let violation = error.map(|error| serde_violation(&completed, error, info));
            if let Some(violation) = violation.filter(|v| finished(&v.path))
                && !violations.iter().any(|v| v.path == violation.path)
            {
                violations.push(violation);
            }
            return Judgement { violations, complete: Vec::new(), judged: false };
        }
        Err(_) => return Judgement { violations, complete: Vec::new(), judged: false },
    };
    let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut audit = Audit::new(text).with_ledger();
        Audited::audit::<Lazy>(&typed, &mut audit, true);
        let ledger = audit.take_ledger();
        (audit.into_parts().0, ledger)
    }));
    let Ok((semantic, ledger)) = walked else {
        return Judgement { violations, complete: Vec::new(), judged: false };
    };
    violations.extend(semantic.into_iter().filter(|v| match &v.check {
        // A check stands once everything it read is finished (a `with`
        // check, which names no fields, reads the value it is reported at).
        Some(_) if v.fields.is_empty() => finished(&v.path),
        Some(_) => v.fields.iter().all(&finished),
        // A quote, once its sourced value is.
        None => parent(&v.path).is_some_and(|p| finished(&p)),
    }));

    let complete = reader
        .finished()
        .iter()
        .filter(|path| {
            !violations.iter().any(|v| v.path.segments().starts_with(path.segments()))
                && ledger
                    .iter()
                    .filter(|run| reads(run, path))
                    .all(|run| run.held && run.read().iter().all(&finished))
        })
        .cloned()
        .collect();
    Judgement { violations, complete, judged: true }
}

/// Whether `path`, or a value that holds it, is finished.
fn finished_prefix(reader: &PartialJson, path: &FieldPath) -> bool {
    let segments = path.segments();
    (0..=segments.len()).any(|n| reader.is_finished(&FieldPath::from_segments(segments[..n].to_vec())))
}

fn parent(path: &FieldPath) -> Option<FieldPath> {
    let segments = path.segments();
    (!segments.is_empty()).then(|| FieldPath::from_segments(segments[..segments.len() - 1].to_vec()))
}

/// Whether check `run` reads the value at `path` (or one inside it, or one
/// holding it; see [`overlaps`]).
fn reads(run: &CheckRun, path: &FieldPath) -> bool {
    run.read().iter().any(|field| overlaps(field.segments(), path.segments()))
}

/// Whether `field` (a field path, without an index where it spans a
/// collection's items) and `path` (a value's path) meet: one holds the
/// other. A field that spans every item (`line_items.amount` of a sum)
/// meets the collection, not one item: an aggregate's failure is the
/// collection's, so an item stays complete while a sum waits for its total.
fn overlaps(field: &[Segment], path: &[Segment]) -> bool {
    let spans_items = matches!(path.get(field.len()), Some(Segment::Index(_)));
    field.iter().zip(path).all(|(f, p)| f == p) && !spans_items
}

/// `value` (the prefix's value at `path`) with every unfinished scalar and
/// every required member an open object lacks replaced by a placeholder of
/// `schema` (resolved against `root`).
fn complete_value(
    reader: &PartialJson,
    value: Value,
    schema: &Value,
    root: &Value,
    path: FieldPath,
) -> Value {
    if reader.is_finished(&path) {
        return value;
    }
    let schema = resolve(schema, root);
    match value {
        Value::Object(members) => {
            let properties = object_schema(schema, root);
            let mut completed = Map::new();
            for (key, member) in members {
                let member_schema =
                    properties.and_then(|p| p.get("properties")?.get(&key)).unwrap_or(&Value::Null);
                let at = path.clone().key(key.clone());
                completed.insert(key, complete_value(reader, member, member_schema, root, at));
            }
            let required = properties.and_then(|p| p.get("required")?.as_array());
            for key in required.into_iter().flatten().filter_map(Value::as_str) {
                if !completed.contains_key(key) {
                    let member_schema =
                        properties.and_then(|p| p.get("properties")?.get(key)).unwrap_or(&Value::Null);
                    completed.insert(key.to_string(), placeholder(member_schema, root));
                }
            }
            Value::Object(completed)
        }
        Value::Array(items) => {
            let item_schema = array_items(schema, root).unwrap_or(&Value::Null);
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, item)| complete_value(reader, item, item_schema, root, path.clone().index(i)))
                .collect();
            Value::Array(items)
        }
        // A string still being written.
        _ => placeholder(schema, root),
    }
}

/// `schema` with a local `$ref` followed.
fn resolve<'s>(schema: &'s Value, root: &'s Value) -> &'s Value {
    resolve_ref(root, schema)
}

/// The branch of `schema` that describes an object, if any.
fn object_schema<'s>(schema: &'s Value, root: &'s Value) -> Option<&'s Value> {
    let schema = resolve(schema, root);
    if schema.get("properties").is_some() {
        return Some(schema);
    }
    branches(schema).find_map(|branch| object_schema(branch, root))
}

/// The items schema of the branch of `schema` that describes an array.
fn array_items<'s>(schema: &'s Value, root: &'s Value) -> Option<&'s Value> {
    let schema = resolve(schema, root);
    if let Some(items) = schema.get("items") {
        return Some(items);
    }
    branches(schema).find_map(|branch| array_items(branch, root))
}

fn branches(schema: &Value) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf", "allOf"].into_iter().filter_map(|k| schema.get(k)?.as_array()).flatten()
}

/// A value of `schema`'s type that a reader of the type accepts, for a
/// value not yet written: nothing that reads it is judged.
fn placeholder(schema: &Value, root: &Value) -> Value {
    let schema = resolve(schema, root);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"null") {
        return Value::Null;
    }
    match types.first().copied() {
        Some("string") => Value::String(
            match schema.get("format").and_then(Value::as_str) {
                Some("date") => "2000-01-01",
                Some("date-time") => "2000-01-01T00:00:00Z",
                Some("time") => "00:00:00",
                _ => "",
            }
            .to_string(),
        ),
        Some("integer" | "number") => Value::from(0),
        Some("boolean") => Value::Bool(false),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => {
            let mut members = Map::new();
            let required = schema.get("required").and_then(Value::as_array);
            for key in required.into_iter().flatten().filter_map(Value::as_str) {
                let member = schema.get("properties").and_then(|p| p.get(key)).unwrap_or(&Value::Null);
                members.insert(key.to_string(), placeholder(member, root));
            }
            Value::Object(members)
        }
        _ => {
            let branches: Vec<&Value> = branches(schema).collect();
            if branches.iter().any(|b| resolve(b, root).get("type") == Some(&Value::from("null"))) {
                return Value::Null;
            }
            branches.first().map_or(Value::Null, |b| placeholder(b, root))
        }
    }
}

/// The violations a stopped stream's prefix `partial` had decided, judged
/// as [`judge`] judged them while it arrived (`None` when it decides none,
/// or is not JSON a stream could have stopped on).
pub fn prefix_violations<T: Extractable>(partial: &str, text: Option<&str>) -> Option<crate::Violations> {
    let mut reader = PartialJson::new();
    reader.push(partial).ok()?;
    crate::Violations::new(judge::<T>(&reader, text).violations)
}
