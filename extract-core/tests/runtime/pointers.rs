//! JSON Pointers in a patch correction's paths, through `apply_patch` as
//! the policy calls it: RFC 6901 exactly, its section 5 examples included,
//! and `~` followed by anything but `0` or `1` refused as `invalid_patch`.

use extract_core::apply_patch;
use serde_json::{Value, json};

/// The document of RFC 6901, section 5.
fn rfc_document() -> Value {
    json!({
        "foo": ["bar", "baz"],
        "": 0,
        "a/b": 1,
        "c%d": 2,
        "e^f": 3,
        "g|h": 4,
        "i\\j": 5,
        "k\"l": 6,
        " ": 7,
        "m~n": 8
    })
}

/// Each pointer of RFC 6901 section 5, the member keys (or array index) it
/// reaches, and the value the RFC says it evaluates to.
fn rfc_examples() -> Vec<(&'static str, Vec<Value>, Value)> {
    vec![
        ("", vec![], rfc_document()),
        ("/foo", vec![json!("foo")], json!(["bar", "baz"])),
        ("/foo/0", vec![json!("foo"), json!(0)], json!("bar")),
        ("/", vec![json!("")], json!(0)),
        ("/a~1b", vec![json!("a/b")], json!(1)),
        ("/c%d", vec![json!("c%d")], json!(2)),
        ("/e^f", vec![json!("e^f")], json!(3)),
        ("/g|h", vec![json!("g|h")], json!(4)),
        ("/i\\j", vec![json!("i\\j")], json!(5)),
        ("/k\"l", vec![json!("k\"l")], json!(6)),
        ("/ ", vec![json!(" ")], json!(7)),
        ("/m~0n", vec![json!("m~n")], json!(8)),
    ]
}

fn at<'v>(document: &'v mut Value, location: &[Value]) -> &'v mut Value {
    location.iter().fold(document, |node, step| match step {
        Value::String(key) => node.get_mut(key.as_str()).expect("the RFC's key is in the document"),
        Value::Number(i) => {
            node.get_mut(i.as_u64().unwrap() as usize).expect("the RFC's index is in the array")
        }
        other => panic!("not a step: {other}"),
    })
}

fn patch(ops: Value) -> Result<Value, extract_core::Violations> {
    apply_patch(&rfc_document(), &json!({ "patch": ops }))
}

#[test]
fn every_pointer_of_rfc_6901_section_5_reaches_what_the_rfc_says() {
    let marker = json!({"replaced": true});
    for (pointer, location, rfc_value) in rfc_examples() {
        // The table itself is the RFC's: the location holds the RFC's value.
        assert_eq!(at(&mut rfc_document(), &location), &rfc_value, "the table's entry for {pointer:?}");

        // `replace` at the pointer changes exactly that location.
        let out = patch(json!([{"op": "replace", "path": pointer, "value": marker}]))
            .unwrap_or_else(|v| panic!("replace at {pointer:?} failed: {v}"));
        let mut expected = rfc_document();
        *at(&mut expected, &location) = marker.clone();
        assert_eq!(out, expected, "replace at {pointer:?}");

        // `remove` (but of the root) takes away exactly that location.
        if location.is_empty() {
            continue;
        }
        let out = patch(json!([{"op": "remove", "path": pointer}]))
            .unwrap_or_else(|v| panic!("remove at {pointer:?} failed: {v}"));
        let mut expected = rfc_document();
        let (last, parent) = location.split_last().unwrap();
        match (at(&mut expected, parent), last) {
            (Value::Object(members), Value::String(key)) => {
                members.remove(key.as_str()).unwrap();
            }
            (Value::Array(items), Value::Number(i)) => {
                items.remove(i.as_u64().unwrap() as usize);
            }
            other => panic!("not a location: {other:?}"),
        }
        assert_eq!(out, expected, "remove at {pointer:?}");
    }
}

#[test]
fn add_at_an_escaped_pointer_creates_the_unescaped_key() {
    let out = patch(json!([
        {"op": "add", "path": "/x~1y~0z", "value": 1},
        {"op": "add", "path": "/~01", "value": 2},
        {"op": "add", "path": "/~10", "value": 3},
    ]))
    .unwrap();
    assert_eq!(out["x/y~z"], json!(1));
    // `~01` is `~1`, not `/`: the `~0` is unescaped once, and never again.
    assert_eq!(out["~1"], json!(2));
    assert_eq!(out["/0"], json!(3));
}

#[test]
fn a_tilde_not_followed_by_0_or_1_is_an_invalid_patch_naming_the_pointer() {
    for pointer in ["/m~2n", "/m~", "/~", "/foo~/0", "/a~1b~", "/~a", "/~~0", "/foo/0/~3"] {
        for op in ["add", "replace", "remove"] {
            let result = patch(json!([{"op": op, "path": pointer, "value": 1}]));
            let violations = match result {
                Ok(out) => panic!("`{op}` at {pointer:?} applied: {out}"),
                Err(v) => v,
            };
            assert_eq!(violations.len(), 1, "{violations}");
            let v = &violations[0];
            assert_eq!(v.code, "invalid_patch", "{violations}");
            assert!(v.path.is_root(), "{violations}");
            let quoted = serde_json::to_string(pointer).unwrap();
            assert!(v.message.contains(&format!("operation 1 (`{op}` at {quoted})")), "{}", v.message);
            assert!(
                v.message.contains("`~` must be followed by `0` or `1`"),
                "`{op}` at {pointer:?}: {}",
                v.message
            );
            assert!(v.message.ends_with("nothing of the patch was applied"), "{}", v.message);
        }
    }
}
