//! The JSON types a schema allows at each place of an output, compiled once
//! per type. serde reads a struct from an array of its fields and a unit
//! variant from `{"Variant": null}`, forms the schema refuses; so an output
//! serde accepted still goes through the schema pass when it takes such a
//! form somewhere. The deserializer of `walk.rs` reads an output and notes
//! whether it took one of serde's lenient paths; only then does
//! [`Forms::strays`] scan it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::compile::MAX_SCHEMA_DEPTH;

/// A schema, as the JSON types and literals it allows along an output.
pub(super) struct Forms {
    nodes: Vec<Node>,
    /// The schema's own node.
    root: usize,
}

/// One schema node; nodes refer to each other by index (so a recursive
/// schema is a cycle, compiled once).
enum Node {
    /// Anything goes (`true`, or a node that says nothing of types).
    Anything,
    /// Only the schema pass can tell: `false`, or a keyword not followed here.
    Unsure,
    /// `anyOf` or `oneOf`.
    Union(Vec<usize>),
    /// A `$ref`'s target.
    Ref(usize),
    Typed(Typed),
}

#[derive(Default)]
struct Typed {
    /// The JSON types `type` allows, as [`type_bit`] bits; all without `type`.
    types: u8,
    /// `enum`.
    literals: Option<Vec<Value>>,
    /// `prefixItems`, then `items` for the rest.
    positions: Vec<usize>,
    items: Option<usize>,
    /// `properties`, in the schema's order, then `additionalProperties`.
    properties: Vec<(String, usize)>,
    others: Option<usize>,
    /// [`is_scalar`](Self::is_scalar), worked out once.
    scalar: bool,
}

/// What [`Forms::enter`] finds at one place of an output.
#[derive(Clone, Copy)]
enum Step {
    /// The value takes a form the schema refuses there, or one this cannot tell.
    Stray,
    /// The value is judged whole: nothing inside it is judged (a scalar, or `true`).
    Done,
    /// The value's own form is allowed; its items or fields are judged by
    /// [`Forms::item`] and [`Forms::field`] of this node, one level deeper.
    Inside { node: usize, depth: usize },
}

/// Keywords that say nothing of an output's form.
const ANNOTATIONS: &[&str] = &[
    "$ref",
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The bit of a JSON type name, or of an integer `Number` (which is also a number).
fn type_bit(name: &str) -> u8 {
    match name {
        "null" => 1,
        "boolean" => 2,
        "integer" => 4,
        "number" => 4 | 8,
        "string" => 16,
        "array" => 32,
        "object" => 64,
        _ => 0,
    }
}

/// Whether `types` (bits of [`type_bit`]) allow `value`'s JSON type. A
/// number is told integral or not only when `types` allows integers alone:
/// that test is the costly part, and most places allow any number.
#[inline]
fn allows(types: u8, value: &Value) -> bool {
    let bit = match value {
        Value::Null => 1,
        Value::Bool(_) => 2,
        Value::Number(_) if types & 8 != 0 => 8,
        Value::Number(n) if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) => 4,
        Value::Number(_) => 8,
        Value::String(_) => 16,
        Value::Array(_) => 32,
        Value::Object(_) => 64,
    };
    types & bit != 0
}

impl Forms {
    /// The forms of `schema` (the root of its `$ref`s).
    pub(super) fn new(schema: &Value) -> Forms {
        let mut forms = Forms { nodes: Vec::new(), root: 0 };
        forms.root = forms.compile(schema, schema, &mut HashMap::new(), 0);
        forms.resolve_refs();
        forms
    }

    /// Points every reference to a node at the node a `$ref` chain ends
    /// in, so the scan never steps through one (a chain that only loops,
    /// `{"$ref": "#"}` at the root, ends in `Unsure`).
    fn resolve_refs(&mut self) {
        let end = |nodes: &[Node], start: usize| -> Option<usize> {
            let mut at = start;
            for _ in 0..=nodes.len() {
                match nodes[at] {
                    Node::Ref(target) => at = target,
                    _ => return Some(at),
                }
            }
            None
        };
        let ends: Vec<Option<usize>> = (0..self.nodes.len()).map(|i| end(&self.nodes, i)).collect();
        let unsure = self.push(Node::Unsure);
        let to = |index: &mut usize| *index = ends[*index].unwrap_or(unsure);
        to(&mut self.root);
        for node in &mut self.nodes {
            match node {
                Node::Union(branches) => branches.iter_mut().for_each(to),
                Node::Typed(typed) => {
                    typed.positions.iter_mut().for_each(to);
                    typed.items.iter_mut().for_each(to);
                    typed.properties.iter_mut().for_each(|(_, sub)| to(sub));
                    typed.others.iter_mut().for_each(to);
                }
                Node::Anything | Node::Unsure | Node::Ref(_) => {}
            }
        }
    }

    fn compile(
        &mut self,
        root: &Value,
        schema: &Value,
        refs: &mut HashMap<String, usize>,
        depth: usize,
    ) -> usize {
        match schema {
            _ if depth > MAX_SCHEMA_DEPTH => self.push(Node::Unsure),
            Value::Bool(true) => self.push(Node::Anything),
            Value::Object(node) => match node.get("$ref").and_then(Value::as_str) {
                Some(reference) => self.reference(root, node, reference, refs, depth),
                None => self.object(root, node, refs, depth),
            },
            _ => self.push(Node::Unsure),
        }
    }

    /// Adds `node`; its index.
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// A `$ref` with nothing beside it but annotations: its target, compiled once.
    fn reference(
        &mut self,
        root: &Value,
        node: &Map<String, Value>,
        reference: &str,
        refs: &mut HashMap<String, usize>,
        depth: usize,
    ) -> usize {
        if let Some(&index) = refs.get(reference) {
            return index;
        }
        let index = self.push(Node::Unsure);
        let target = reference.strip_prefix('#').and_then(|pointer| root.pointer(pointer));
        if let (Some(target), true) = (target, node.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))) {
            refs.insert(reference.to_string(), index);
            let compiled = self.compile(root, target, refs, depth + 1);
            self.nodes[index] = Node::Ref(compiled);
        }
        index
    }

    fn object(
        &mut self,
        root: &Value,
        node: &Map<String, Value>,
        refs: &mut HashMap<String, usize>,
        depth: usize,
    ) -> usize {
        // What else a node may hold: serde enforces `required`; the
        // definitions are reached through `$ref`; a `format` or bound that
        // serde does not enforce sends every output to the schema pass anyway
        // (see `needs_schema_pass`).
        const FOLLOWED: &[&str] = &[
            "type",
            "enum",
            "prefixItems",
            "items",
            "properties",
            "additionalProperties",
            "required",
            "$defs",
            "definitions",
            "$schema",
            "$id",
            "format",
            "minimum",
            "maximum",
        ];
        let followed = |k: &str| ANNOTATIONS.contains(&k) || FOLLOWED.contains(&k);
        let union = node.get("anyOf").or_else(|| node.get("oneOf")).and_then(Value::as_array);
        let compiled = match union {
            Some(branches)
                if node.keys().all(|k| ANNOTATIONS.contains(&k.as_str()) || k == "anyOf" || k == "oneOf") =>
            {
                let branches = branches.iter().map(|b| self.compile(root, b, refs, depth + 1)).collect();
                Node::Union(branches)
            }
            Some(_) => Node::Unsure,
            None if !node.keys().all(|k| followed(k)) => Node::Unsure,
            None => {
                let types = match node.get("type") {
                    Some(Value::String(name)) => type_bit(name),
                    Some(Value::Array(names)) => {
                        names.iter().filter_map(Value::as_str).map(type_bit).fold(0, |a, b| a | b)
                    }
                    _ => u8::MAX,
                };
                let mut sub = |schema: &Value| self.compile(root, schema, refs, depth + 1);
                let positions = node
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map(|p| p.iter().map(&mut sub).collect());
                let items = node.get("items").map(&mut sub);
                let properties = node
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.iter().map(|(k, s)| (k.clone(), sub(s))).collect());
                let others = node.get("additionalProperties").map(&mut sub);
                let mut typed = Typed {
                    types,
                    literals: node.get("enum").and_then(Value::as_array).cloned(),
                    positions: positions.unwrap_or_default(),
                    items,
                    properties: properties.unwrap_or_default(),
                    others,
                    scalar: false,
                };
                typed.scalar = typed.is_scalar();
                Node::Typed(typed)
            }
        };
        self.push(compiled)
    }

    /// Whether `value` somewhere takes a form the schema refuses there, or
    /// one this cannot tell (a union that leaves it more than one branch, a
    /// keyword not followed, nesting past [`MAX_SCHEMA_DEPTH`]). Linear in
    /// the value.
    pub(super) fn strays(&self, value: &Value) -> bool {
        self.strays_at(self.root, value, 0)
    }

    /// [`strays`](Self::strays) for `value` judged by `node` at `depth`.
    fn strays_at(&self, node: usize, value: &Value, depth: usize) -> bool {
        let (node, depth) = match self.enter(node, value, depth) {
            Step::Stray => return true,
            Step::Done => return false,
            Step::Inside { node, depth } => (node, depth),
        };
        // Plain loops: this runs over every node of a value.
        match value {
            Value::Array(items) => {
                for (at, item) in items.iter().enumerate() {
                    if self.item(node, at).is_some_and(|sub| self.child_strays(sub, item, depth + 1)) {
                        return true;
                    }
                }
                false
            }
            Value::Object(fields) => {
                for (at, (key, item)) in fields.iter().enumerate() {
                    if self.field(node, at, key).is_some_and(|sub| self.child_strays(sub, item, depth + 1)) {
                        return true;
                    }
                }
                false
            }
            _ => false,
        }
    }

    /// Judges `value`'s own form at `node` (reached at `depth`): a union is
    /// resolved to the one branch that admits the value's type, then the
    /// node's `type` and `enum` must let it through.
    #[inline]
    fn enter(&self, node: usize, value: &Value, depth: usize) -> Step {
        // Most places are a typed node: decided here, inlined in the
        // deserializer's every call.
        match &self.nodes[node] {
            Node::Typed(typed) if depth <= MAX_SCHEMA_DEPTH => typed.step(node, value, depth),
            _ => self.enter_other(node, value, depth),
        }
    }

    /// [`enter`](Self::enter) at a union, a reference, `true` or `false`.
    fn enter_other(&self, mut node: usize, value: &Value, mut depth: usize) -> Step {
        loop {
            match &self.nodes[node] {
                _ if depth > MAX_SCHEMA_DEPTH => return Step::Stray,
                Node::Anything => return Step::Done,
                Node::Unsure => return Step::Stray,
                &Node::Ref(target) => (node, depth) = (target, depth + 1),
                Node::Union(branches) => {
                    let mut admitting = branches.iter().filter(|&&branch| self.admits(branch, value, depth));
                    match (admitting.next(), admitting.next()) {
                        (Some(&branch), None) => (node, depth) = (branch, depth + 1),
                        // No branch takes a value of this type, or more than one might.
                        _ => return Step::Stray,
                    }
                }
                Node::Typed(typed) => return typed.step(node, value, depth),
            }
        }
    }

    /// The node that judges item `at` of an array judged [`Step::Inside`]
    /// `node`; `None` when the schema says nothing of it.
    #[inline]
    fn item(&self, node: usize, at: usize) -> Option<usize> {
        match &self.nodes[node] {
            Node::Typed(typed) => typed.positions.get(at).or(typed.items.as_ref()).copied(),
            _ => None,
        }
    }

    /// The node that judges field `key`, the `at`th of an object judged
    /// [`Step::Inside`] `node`; `None` when the schema says nothing of it.
    #[inline]
    fn field(&self, node: usize, at: usize, key: &str) -> Option<usize> {
        let Node::Typed(typed) = &self.nodes[node] else { return None };
        // Outputs mostly list fields in the schema's order.
        let named = match typed.properties.get(at) {
            Some((name, sub)) if name == key => Some(sub),
            _ => typed.properties.iter().find(|(name, _)| name == key).map(|(_, sub)| sub),
        };
        named.or(typed.others.as_ref()).copied()
    }

    /// [`strays_at`](Self::strays_at) for a value inside another.
    #[inline]
    fn child_strays(&self, node: usize, value: &Value, depth: usize) -> bool {
        match self.leaf(node, value) {
            Some(admitted) => !admitted,
            None => self.strays_at(node, value, depth),
        }
    }

    /// Whether `node` admits `value` when that is the whole verdict (a
    /// scalar node: most leaves, decided without a step of their own); `None`
    /// when it is not.
    #[inline]
    fn leaf(&self, node: usize, value: &Value) -> Option<bool> {
        match &self.nodes[node] {
            Node::Typed(typed) if typed.scalar => Some(typed.admits(value)),
            Node::Anything => Some(true),
            _ => None,
        }
    }

    /// Whether a node's `type` and `enum` let `value` through (what this
    /// cannot tell, it lets through).
    fn admits(&self, node: usize, value: &Value, depth: usize) -> bool {
        match &self.nodes[node] {
            Node::Typed(typed) => typed.admits(value),
            &Node::Ref(target) => depth > MAX_SCHEMA_DEPTH || self.admits(target, value, depth + 1),
            Node::Anything | Node::Unsure | Node::Union(_) => true,
        }
    }
}

impl Typed {
    /// Whether the node says nothing of what is inside a value: its verdict
    /// is [`admits`](Self::admits) alone.
    fn is_scalar(&self) -> bool {
        self.positions.is_empty()
            && self.items.is_none()
            && self.properties.is_empty()
            && self.others.is_none()
    }

    #[inline]
    fn admits(&self, value: &Value) -> bool {
        allows(self.types, value) && self.literals.as_ref().is_none_or(|literals| literals.contains(value))
    }

    /// [`Forms::enter`] at this node, `node`.
    #[inline]
    fn step(&self, node: usize, value: &Value, depth: usize) -> Step {
        match () {
            _ if !self.admits(value) => Step::Stray,
            _ if self.scalar => Step::Done,
            _ => Step::Inside { node, depth },
        }
    }
}
