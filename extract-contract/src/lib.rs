#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! The contract between `#[derive(Extractable)]` and the runtime of
//! `extract`, written once for both sides to build on.
//!
//! Two things cross from the derive to the runtime:
//!
//! 1. **A path.** Generated code reaches the runtime only through the hidden
//!    module [`HIDDEN_MODULE`] of the facade crate (`::extract::__private_v2`).
//!    Its name carries the contract's version, so a derive and a runtime that
//!    speak different versions fail to compile ("could not find
//!    `__private_v2` in `extract`") instead of misreading each other at run
//!    time. Change [`HIDDEN_MODULE`] (and the module's name in
//!    `extract-core`, which a constant assertion there ties to it) whenever
//!    anything below changes meaning.
//! 2. **A description of the type**, for messages, the tool's list of checks
//!    and the structure layer's tags. The typed parts (the type's name, the
//!    shapes of its fields, the descriptions of the types it nests) are Rust
//!    items the runtime's `derived_items!` macro writes, so rustc checks them:
//!    each field whose flags say `typed` takes the next of the type's shapes,
//!    in order; any other field is plain data (the derive read its type as a
//!    primitive, `String`, or a container of those), and no shape is looked
//!    up for it.
//!    The parts that are text (each field's names and tags, each check's rule
//!    and options) are encoded into two string literals, because a crate of
//!    many derived types compiles one literal far faster than a slice of
//!    structs. Their grammar is below; [`encode_fields`]/[`decode_fields`]
//!    and [`encode_checks`]/[`decode_checks`] are its only encoder and
//!    decoder, and a round-trip property test holds them together.
//!
//! # Grammar
//!
//! Marks are the control characters U+0001 to U+0004 ([`is_mark`]); no text
//! the derive encodes may hold one (the derive refuses such a JSON name or
//! message at compile time, on the user's token).
//!
//! ```text
//! fields       = [ field { ITEM field } ]
//! field        = flags rust-name PATH [ json-name ]      ; json-name omitted when equal to rust-name
//! flags        = 'a' ..= 'p'                             ; 'a' + 1 if required + 2 if recoverable
//!                                                        ;     + 4 if typed (its shape is the next one)
//!                                                        ;     + 8 if gathered window by window
//!
//! checks       = [ check { CHECK check } ]
//! check        = rule PART atoms PART paths PART opt(tolerance) PART opt(message)
//!                PART names PART opt(code) PART ( '1' | '0' ) PART opt(with)
//! rule         = text { PATH path PATH text }            ; a path by Rust names joined by '.', or an
//!                                                        ;   enum's variant (`Status::Paid`: it holds
//!                                                        ;   `::`), shown as its JSON tag
//! atoms        = [ rule { ITEM rule } ]                  ; the operands a failure shows, by index
//! paths        = [ path { ITEM path } ]                  ; the fields the check reads
//! names        = [ name { ITEM name } ]                  ; the message's placeholders, by index
//! opt(x)       = '' | '=' x
//!
//! PATH = U+0001   ITEM = U+0002   CHECK = U+0003   PART = U+0004
//! ```
//!
//! Every item of a list is non-empty, so an empty list and a list of one
//! empty item cannot be confused.

use std::fmt;

/// The hidden module of the facade crate that generated code names
/// (`::extract::__private_v2`), versioned with this contract.
pub const HIDDEN_MODULE: &str = "__private_v2";

/// Marks a field path inside a [`Rule`]'s text.
pub const PATH_MARK: char = '\u{1}';
/// Separates the items of a list.
pub const ITEM_MARK: char = '\u{2}';
/// Separates the checks of a type.
pub const CHECK_MARK: char = '\u{3}';
/// Separates the parts of one check.
pub const PART_MARK: char = '\u{4}';

/// Whether `c` is one of the marks, which no encoded text may hold.
pub const fn is_mark(c: char) -> bool {
    matches!(c, PATH_MARK | ITEM_MARK | CHECK_MARK | PART_MARK)
}

/// Whether `a` and `b` are the same text, in a constant (the runtime ties
/// its module's name to [`HIDDEN_MODULE`] with it).
pub const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// An encoded description that does not follow the grammar: only possible
/// when a description was not written by the derive of this version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed description: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

/// One field the model sees, as the derive describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The Rust name (without `r#`).
    pub rust_name: &'a str,
    /// The JSON name, after serde's `rename` and `rename_all`.
    pub json_name: &'a str,
    /// Whether the field must be present (not `Option`, not `#[serde(default)]`).
    pub required: bool,
    /// `false` when tagged `#[extract(recoverable = false)]`.
    pub recoverable: bool,
    /// Whether the field's shape is given (the next of the type's shapes);
    /// else the field is plain data.
    pub typed: bool,
    /// Whether the field is gathered window by window (`#[extract(per_window)]`).
    pub per_window: bool,
}

/// Encodes a type's fields (see the grammar).
pub fn encode_fields(fields: &[Field<'_>]) -> String {
    let mut out = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(ITEM_MARK);
        }
        let flags = u8::from(field.required)
            + 2 * u8::from(field.recoverable)
            + 4 * u8::from(field.typed)
            + 8 * u8::from(field.per_window);
        out.push(char::from(b'a' + flags));
        out.push_str(field.rust_name);
        out.push(PATH_MARK);
        if field.json_name != field.rust_name {
            out.push_str(field.json_name);
        }
    }
    out
}

/// Decodes what [`encode_fields`] wrote.
pub fn decode_fields(text: &str) -> Result<Vec<Field<'_>>, Malformed> {
    items(text, ITEM_MARK)
        .map(|field| {
            let flags = match field.as_bytes()[0] {
                flag @ b'a'..=b'p' => flag - b'a',
                _ => return Err(Malformed("a field's flags")),
            };
            let (rust_name, json_name) =
                field[1..].split_once(PATH_MARK).ok_or(Malformed("a field is not flags and names"))?;
            if rust_name.is_empty() || json_name.contains(is_mark) {
                return Err(Malformed("a field's names"));
            }
            Ok(Field {
                rust_name,
                json_name: if json_name.is_empty() { rust_name } else { json_name },
                required: flags & 1 != 0,
                recoverable: flags & 2 != 0,
                typed: flags & 4 != 0,
                per_window: flags & 8 != 0,
            })
        })
        .collect()
}

/// A rule's text (or an operand's) with its field paths marked, so the
/// runtime can show it in the JSON names the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule<'a>(&'a str);

/// A piece of a [`Rule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text shown as it is.
    Text(&'a str),
    /// A field path by Rust names joined by `.`, shown in JSON names.
    Path(&'a str),
}

impl<'a> Rule<'a> {
    /// Encodes pieces into a rule's text.
    pub fn encode<'p>(pieces: impl IntoIterator<Item = Piece<'p>>) -> String {
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Path(path) => {
                    out.push(PATH_MARK);
                    out.push_str(path);
                    out.push(PATH_MARK);
                }
            }
        }
        out
    }

    /// The rule [`encode`](Self::encode) wrote as `text`.
    pub fn parse(text: &'a str) -> Result<Rule<'a>, Malformed> {
        let marks = text.chars().filter(|c| *c == PATH_MARK).count();
        if marks % 2 != 0 || text.chars().any(|c| is_mark(c) && c != PATH_MARK) {
            return Err(Malformed("a rule's paths"));
        }
        Ok(Rule(text))
    }

    /// The rule's pieces, in order.
    pub fn pieces(&self) -> impl Iterator<Item = Piece<'a>> + use<'a> {
        self.0
            .split(PATH_MARK)
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .map(|(i, s)| if i % 2 == 0 { Piece::Text(s) } else { Piece::Path(s) })
    }

    /// The encoded text.
    pub fn as_encoded(&self) -> &'a str {
        self.0
    }
}

/// One `#[check]`, as the derive describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check<'a> {
    /// The rule, e.g. `sum(line_items.amount) == stated_total`.
    pub rule: Rule<'a>,
    /// The operands whose values a failure shows; the lowered check
    /// records each by its index here.
    pub atoms: Vec<Rule<'a>>,
    /// The fields the check reads, by Rust names joined by `.` (a path
    /// through a collection is cut after its first step: `line_items`).
    pub fields: Vec<&'a str>,
    /// The `tolerance` option as written.
    pub tolerance: Option<&'a str>,
    /// The `message` option: `{lhs}`, `{rhs}` and field names are substituted.
    pub message: Option<&'a str>,
    /// The names of the message's placeholders, by the index the lowered
    /// check records them with.
    pub placeholders: Vec<&'a str>,
    /// The `code` option.
    pub code: Option<&'a str>,
    /// `false` when the check says `recoverable = false`.
    pub recoverable: bool,
    /// For `with = function` checks: the function's path as written.
    pub with: Option<&'a str>,
}

/// Encodes a type's checks (see the grammar).
pub fn encode_checks(checks: &[Check<'_>]) -> String {
    let list = |items: &mut dyn Iterator<Item = &str>| {
        let items: Vec<&str> = items.collect();
        items.join(&ITEM_MARK.to_string())
    };
    let optional = |part: Option<&str>| part.map(|text| format!("={text}")).unwrap_or_default();
    let encoded: Vec<String> = checks
        .iter()
        .map(|check| {
            let parts = [
                check.rule.as_encoded().to_string(),
                list(&mut check.atoms.iter().map(Rule::as_encoded)),
                list(&mut check.fields.iter().copied()),
                optional(check.tolerance),
                optional(check.message),
                list(&mut check.placeholders.iter().copied()),
                optional(check.code),
                if check.recoverable { "1" } else { "0" }.to_string(),
                optional(check.with),
            ];
            parts.join(&PART_MARK.to_string())
        })
        .collect();
    encoded.join(&CHECK_MARK.to_string())
}

/// Decodes what [`encode_checks`] wrote.
pub fn decode_checks(text: &str) -> Result<Vec<Check<'_>>, Malformed> {
    fn optional<'a>(part: &'a str, what: &'static str) -> Result<Option<&'a str>, Malformed> {
        match part.strip_prefix('=') {
            Some(text) => Ok(Some(text)),
            None if part.is_empty() => Ok(None),
            None => Err(Malformed(what)),
        }
    }
    items(text, CHECK_MARK)
        .map(|check| {
            let parts: Vec<&str> = check.split(PART_MARK).collect();
            let &[rule, atoms, fields, tolerance, message, placeholders, code, recoverable, with] =
                parts.as_slice()
            else {
                return Err(Malformed("a check does not have nine parts"));
            };
            Ok(Check {
                rule: Rule::parse(rule)?,
                atoms: items(atoms, ITEM_MARK).map(Rule::parse).collect::<Result<_, _>>()?,
                fields: items(fields, ITEM_MARK).collect(),
                tolerance: optional(tolerance, "a check's tolerance")?,
                message: optional(message, "a check's message")?,
                placeholders: items(placeholders, ITEM_MARK).collect(),
                code: optional(code, "a check's code")?,
                recoverable: match recoverable {
                    "1" => true,
                    "0" => false,
                    _ => return Err(Malformed("a check's recoverable flag")),
                },
                with: optional(with, "a check's function")?,
            })
        })
        .collect()
}

/// The items of a list: none for the empty text.
fn items(text: &str, mark: char) -> impl Iterator<Item = &str> {
    text.split(mark).filter(|_| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text without marks, possibly empty.
    fn text() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9_ .=(){}<>!é\u{5}-\u{7f}]{0,12}"
    }

    /// Text without marks, never empty.
    fn word() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9_=é\u{5}]{1,10}"
    }

    fn path() -> impl Strategy<Value = String> {
        proptest::collection::vec("[a-z_][a-z0-9_]{0,6}", 1..4).prop_map(|hops| hops.join("."))
    }

    /// A rule as the derive builds one: text and paths, never empty.
    fn rule() -> impl Strategy<Value = String> {
        proptest::collection::vec((text(), proptest::option::of(path())), 1..4)
            .prop_map(|pieces| {
                Rule::encode(pieces.iter().flat_map(|(text, path)| {
                    [Some(Piece::Text(text)), path.as_deref().map(Piece::Path)].into_iter().flatten()
                }))
            })
            .prop_filter("an operand is never empty", |rule| !rule.is_empty())
    }

    #[derive(Debug, Clone)]
    struct OwnedCheck {
        rule: String,
        atoms: Vec<String>,
        fields: Vec<String>,
        tolerance: Option<String>,
        message: Option<String>,
        placeholders: Vec<String>,
        code: Option<String>,
        recoverable: bool,
        with: Option<String>,
    }

    impl OwnedCheck {
        fn borrowed(&self) -> Check<'_> {
            Check {
                rule: Rule::parse(&self.rule).unwrap(),
                atoms: self.atoms.iter().map(|a| Rule::parse(a).unwrap()).collect(),
                fields: self.fields.iter().map(String::as_str).collect(),
                tolerance: self.tolerance.as_deref(),
                message: self.message.as_deref(),
                placeholders: self.placeholders.iter().map(String::as_str).collect(),
                code: self.code.as_deref(),
                recoverable: self.recoverable,
                with: self.with.as_deref(),
            }
        }
    }

    fn check() -> impl Strategy<Value = OwnedCheck> {
        (
            (rule(), proptest::collection::vec(rule(), 0..4), proptest::collection::vec(path(), 0..3)),
            (proptest::option::of(word()), proptest::option::of(text())),
            (proptest::collection::vec(word(), 0..3), proptest::option::of(word())),
            (any::<bool>(), proptest::option::of(word())),
        )
            .prop_map(
                |((rule, atoms, fields), (tolerance, message), (placeholders, code), (recoverable, with))| {
                    OwnedCheck {
                        rule,
                        atoms,
                        fields,
                        tolerance,
                        message,
                        placeholders,
                        code,
                        recoverable,
                        with,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn fields_round_trip(fields in proptest::collection::vec((word(), proptest::option::of(word()), any::<[bool; 4]>()), 0..6)) {
            let fields: Vec<Field<'_>> = fields
                .iter()
                .map(|(rust, json, [required, recoverable, typed, per_window])| Field {
                    rust_name: rust,
                    json_name: json.as_deref().unwrap_or(rust),
                    required: *required,
                    recoverable: *recoverable,
                    typed: *typed,
                    per_window: *per_window,
                })
                .collect();
            let text = encode_fields(&fields);
            prop_assert_eq!(decode_fields(&text).unwrap(), fields);
        }

        #[test]
        fn checks_round_trip(checks in proptest::collection::vec(check(), 0..4)) {
            let borrowed: Vec<Check<'_>> = checks.iter().map(OwnedCheck::borrowed).collect();
            let text = encode_checks(&borrowed);
            prop_assert_eq!(decode_checks(&text).unwrap(), borrowed);
        }

        #[test]
        fn a_rule_gives_back_its_pieces(pieces in proptest::collection::vec((word(), path()), 0..4), tail in text()) {
            let mut written: Vec<Piece<'_>> = Vec::new();
            for (text, path) in &pieces {
                written.push(Piece::Text(text));
                written.push(Piece::Path(path));
            }
            if !tail.is_empty() {
                written.push(Piece::Text(&tail));
            }
            let text = Rule::encode(written.clone());
            let rule = Rule::parse(&text).unwrap();
            prop_assert_eq!(rule.pieces().collect::<Vec<_>>(), written);
        }
    }

    #[test]
    fn text_that_breaks_the_grammar_is_malformed_not_misread() {
        assert_eq!(decode_fields("zname\u{1}"), Err(Malformed("a field's flags")));
        assert_eq!(decode_fields("dname"), Err(Malformed("a field is not flags and names")));
        assert_eq!(decode_checks("a\u{4}b"), Err(Malformed("a check does not have nine parts")));
        assert_eq!(
            decode_checks("x \u{1}y\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}1\u{4}"),
            Err(Malformed("a rule's paths"))
        );
        assert_eq!(
            decode_checks("x\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}yes\u{4}"),
            Err(Malformed("a check's recoverable flag"))
        );
    }

    #[test]
    fn empty_lists_decode_as_empty() {
        assert_eq!(decode_fields("").unwrap(), []);
        assert_eq!(decode_checks("").unwrap(), []);
        let [check] = &decode_checks("x > 0\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}\u{4}1\u{4}").unwrap()[..] else {
            panic!("one check")
        };
        assert!(check.atoms.is_empty() && check.fields.is_empty() && check.placeholders.is_empty());
    }

    #[test]
    fn the_marks_are_the_four_control_characters() {
        assert!(('\u{1}'..='\u{4}').all(is_mark));
        assert!(!is_mark('\u{0}') && !is_mark('\u{5}') && !is_mark('a'));
        assert!(same_text(HIDDEN_MODULE, "__private_v2") && !same_text("a", "b") && !same_text("a", "ab"));
    }
}
