//! The crates' graph, as Cargo sees it: each crate depends only on the
//! crates below it (ARCHITECTURE.md's `crates` block), every internal
//! dependency is pinned with `=` and declared without default features, and
//! the facade without default features compiles neither SQLite nor an HTTP
//! client.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// Each internal crate and the internal crates it may depend on (normal
/// dependencies): the layers, bottom first.
const ALLOWED: &[(&str, &[&str])] = &[
    ("extractable-contract", &[]),
    ("extractable-derive", &["extractable-contract"]),
    ("extractable-core", &["extractable-contract"]),
    ("extractable-drive", &["extractable-core"]),
    ("extractable-anthropic", &["extractable-core", "extractable-drive"]),
    ("extractable-openai", &["extractable-core", "extractable-drive"]),
    ("extractable-inspect", &["extractable-core", "extractable-drive"]),
];

fn cargo(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("cargo prints UTF-8")
}

fn metadata() -> Value {
    serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--no-deps", "--offline"])).unwrap()
}

#[test]
fn each_crate_depends_only_on_the_crates_below_it_pinned_and_without_default_features() {
    let metadata = metadata();
    let packages = metadata["packages"].as_array().unwrap();
    let internal: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut problems = Vec::new();
    for package in packages {
        let name = package["name"].as_str().unwrap();
        let version = package["version"].as_str().unwrap();
        for dependency in package["dependencies"].as_array().unwrap() {
            let on = dependency["name"].as_str().unwrap();
            if !internal.contains(on) || !dependency["kind"].is_null() {
                continue; // external, or a dev/build dependency
            }
            if name != "extractable" && !allowed.get(name).is_some_and(|below| below.contains(&on)) {
                problems.push(format!("{name} depends on {on}, which is not below it"));
            }
            if dependency["req"] != format!("={version}") {
                problems.push(format!("{name} pins {on} as {}, not ={version}", dependency["req"]));
            }
            if dependency["uses_default_features"] != true && dependency["uses_default_features"] != false {
                problems.push(format!("{name}: no default-features flag for {on}"));
            } else if dependency["uses_default_features"] == true {
                problems.push(format!("{name} takes {on} with its default features"));
            }
        }
    }
    for name in &internal {
        if *name != "extractable" && !allowed.contains_key(name) {
            problems.push(format!("{name} is in no layer of ALLOWED"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The packages a build of the facade with `features` compiles (normal dependencies).
fn compiled(features: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["tree", "-p", "extractable", "-e", "normal", "--prefix", "none", "--offline"];
    args.extend_from_slice(features);
    cargo(&args).lines().filter_map(|line| line.split_whitespace().next()).map(str::to_string).collect()
}

#[test]
fn without_default_features_nothing_compiles_sqlite_or_an_http_client() {
    let lean = compiled(&["--no-default-features"]);
    for heavy in ["rusqlite", "libsqlite3-sys", "reqwest", "hyper", "tokio-postgres", "axum"] {
        assert!(!lean.contains(heavy), "a build without default features compiles {heavy}");
    }
    // The check can fail: the default build has both.
    let default = compiled(&[]);
    assert!(default.contains("rusqlite") && default.contains("reqwest"), "{default:?}");
    let sqlite_only = compiled(&["--no-default-features", "--features", "sqlite"]);
    assert!(sqlite_only.contains("rusqlite") && !sqlite_only.contains("reqwest"), "{sqlite_only:?}");
}

#[test]
fn the_architecture_draws_every_crate() {
    let architecture =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md")).unwrap();
    let block = architecture.split("```text crates\n").nth(1).and_then(|rest| rest.split("```").next());
    let block = block.expect("ARCHITECTURE.md has a ```text crates block");
    for (name, _) in ALLOWED {
        assert!(block.contains(name), "ARCHITECTURE.md's crates block does not draw {name}");
    }
}
