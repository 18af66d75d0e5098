//! The layer graph inside `extract-core/src`, checked against the code.
//! Between crates Cargo holds the graph (`tests/docs/crates.rs`); inside the
//! core crate the layers are modules, and this test holds them.
//!
//! Each top-level module of `extract-core/src` (a file or folder beside
//! `lib.rs`) is a layer. `LAYERS` below is the allowed graph, written once:
//! a layer may import only the layers on the lines below its own, so layers
//! on one line do not import each other and no import can point upward or
//! close a cycle. The test reads every `.rs` file of each layer, finds each
//! `crate::NAME` it names (comments and string literals aside; `crate::{..}`
//! groups item by item; `super::` chains that reach the crate root count as
//! `crate::`), and resolves NAME to a layer: a top-level module, an item
//! `lib.rs` re-exports from one (`pub use run::{Stats, ..}`), or an item a
//! layer defines as `pub` (or a `#[macro_export]` macro). Names that resolve
//! to no layer (`crate::__private`, an item of `lib.rs`) are not edges.
//!
//! It fails, naming the file and the import, on an edge that points upward
//! or sideways, on a cycle, on a top-level module that is in no layer, and
//! on a layer of `LAYERS` that no longer exists. It also holds
//! ARCHITECTURE.md's picture of the layers to `LAYERS`.
//!
//! To add a layer (an HTML report above `run`, say): add its name to
//! `LAYERS` on a line of its own, or beside the layers it neither imports
//! nor is imported by (`&["drive", "report"]`), above every layer it
//! imports; then paste the block the failing assertion prints into
//! ARCHITECTURE.md. `cargo test --test docs architecture -- --nocapture`
//! prints the current edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The allowed graph, top layer first: a layer may import the layers on the
/// lines below its own, never one on its own line or above.
const LAYERS: &[&[&str]] =
    &[&["run"], &["stream"], &["validate", "cost"], &["schema"], &["vocabulary", "telemetry"]];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("extract-core/src")
}

/// Every `.rs` file under `dir`, recursively, in a stable order.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules of `extract-core/src` and the files of each: a
/// folder's files, or a file `x.rs` with those of a folder `x/` beside it.
fn layers_on_disk() -> BTreeMap<String, Vec<PathBuf>> {
    let mut tops: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in fs::read_dir(src()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            rust_files(&path, tops.entry(name).or_default());
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            tops.entry(name).or_default().insert(0, path);
        }
    }
    tops
}

/// `text` with comments blanked and string and char literals emptied, so only
/// code is searched. Line breaks are kept, so positions still give line numbers.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (i == 0 || !ident(chars[i - 1]) || chars[i - 1] == 'b')
            && matches!(next, Some('"' | '#'))
            && {
                let mut j = i + 1;
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                chars.get(j) == Some(&'"')
            }
        {
            // A raw string: r"..", r#".."#, and so on.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{..}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            // Code, or a lifetime's quote.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// How many modules deep a file sits below the crate root (`mod.rs` is its folder).
fn depth(file: &Path) -> usize {
    let parts = file.strip_prefix(src()).unwrap().components().count();
    if file.file_name().unwrap() == "mod.rs" { parts - 1 } else { parts }
}

/// The first segment of each path `code` names from the crate root, with
/// the byte offset where the path starts.
fn crate_paths(code: &str, depth: usize) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if i > 0 && ident(bytes[i - 1]) {
            i += 1;
            continue;
        }
        let start = i;
        let rest = &bytes[i..];
        let after = if rest.starts_with(b"crate::") {
            i + "crate::".len()
        } else if rest.starts_with(b"super::") {
            let mut j = i;
            let mut supers = 0;
            while bytes[j..].starts_with(b"super::") {
                supers += 1;
                j += "super::".len();
            }
            if supers < depth {
                i = j;
                continue;
            }
            j
        } else {
            i += 1;
            continue;
        };
        let tail = code[after..].trim_start();
        if let Some(group) = tail.strip_prefix('{') {
            // The items of a `crate::{..}` group, split at its top-level commas.
            let mut level = 1;
            let mut item = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => level += 1,
                    '}' => level -= 1,
                    _ => {}
                }
                if level == 0 || (ch == ',' && level == 1) {
                    if let Some(first) = item.split("::").next().map(str::trim).filter(|s| !s.is_empty()) {
                        found.push((start, first.to_string()));
                    }
                    item.clear();
                    if level == 0 {
                        break;
                    }
                } else {
                    item.push(ch);
                }
            }
        } else {
            let name: String = tail.bytes().take_while(|&b| ident(b)).map(char::from).collect();
            if !name.is_empty() {
                found.push((start, name));
            }
        }
        i = after;
    }
    found
}

/// Which layer each name `lib.rs` re-exports, or a layer defines as `pub`,
/// belongs to. Re-exports win.
fn owners(tops: &BTreeMap<String, Vec<PathBuf>>) -> BTreeMap<String, String> {
    let mut owner = BTreeMap::new();
    for (top, files) in tops {
        for file in files {
            let code = code_only(&fs::read_to_string(file).unwrap());
            // `pub` items (`pub fn x`, `pub(crate) struct X`) and macros, one per line.
            for line in code.lines().map(str::trim_start) {
                if !(line.starts_with("pub") || line.starts_with("macro_rules!")) {
                    continue;
                }
                let words: Vec<&str> = line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
                    .filter(|w| !w.is_empty())
                    .collect();
                let keyword = |w: &&str| {
                    matches!(
                        *w,
                        "struct"
                            | "enum"
                            | "trait"
                            | "fn"
                            | "type"
                            | "const"
                            | "static"
                            | "mod"
                            | "union"
                            | "macro_rules!"
                    )
                };
                if let Some(at) = words.iter().position(keyword)
                    && let Some(name) = words.get(at + 1)
                {
                    owner.entry(name.to_string()).or_insert_with(|| top.clone());
                }
            }
        }
    }
    let lib = code_only(&fs::read_to_string(src().join("lib.rs")).unwrap());
    for statement in lib.split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else { continue };
        let used = used.trim().trim_start_matches("crate::");
        let Some((module, items)) = used.split_once("::") else { continue };
        if !tops.contains_key(module) {
            continue;
        }
        for item in items.trim().trim_start_matches('{').trim_end_matches('}').split(',') {
            let name = item.split(" as ").last().unwrap().trim();
            if let Some(last) = name.rsplit("::").next().filter(|n| !n.is_empty()) {
                owner.insert(last.to_string(), module.to_string());
            }
        }
    }
    owner
}

/// One import of one layer by another: where it is written.
struct Import {
    file: PathBuf,
    line: usize,
    text: String,
}

/// Every edge between layers, with the first import that makes it.
fn edges(tops: &BTreeMap<String, Vec<PathBuf>>) -> BTreeMap<(String, String), Import> {
    let owner = owners(tops);
    let mut edges = BTreeMap::new();
    for (top, files) in tops {
        for file in files {
            let code = code_only(&fs::read_to_string(file).unwrap());
            for (at, name) in crate_paths(&code, depth(file)) {
                let target = if tops.contains_key(&name) { Some(&name) } else { owner.get(&name) };
                let Some(target) = target.filter(|t| *t != top) else { continue };
                edges.entry((top.clone(), target.clone())).or_insert_with(|| Import {
                    file: file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_path_buf(),
                    line: code[..at].matches('\n').count() + 1,
                    text: code[at..].lines().next().unwrap().trim().to_string(),
                });
            }
        }
    }
    edges
}

/// The level of each layer in `LAYERS`: 0 for the top line.
fn levels() -> BTreeMap<&'static str, usize> {
    LAYERS.iter().enumerate().flat_map(|(level, names)| names.iter().map(move |n| (*n, level))).collect()
}

/// The cycles of the graph: its strongly connected components of more than
/// one layer (Tarjan's algorithm).
fn cycles(nodes: &[String], edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeSet<(String, String)>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        found: Vec<Vec<String>>,
    }
    fn strong(walk: &mut Walk, v: &str) {
        let n = walk.index.len();
        walk.index.insert(v.to_string(), n);
        walk.low.insert(v.to_string(), n);
        walk.stack.push(v.to_string());
        let next: Vec<String> = walk.edges.iter().filter(|(a, _)| a == v).map(|(_, b)| b.clone()).collect();
        for w in next {
            if !walk.index.contains_key(&w) {
                strong(walk, &w);
                let low = walk.low[v].min(walk.low[&w]);
                walk.low.insert(v.to_string(), low);
            } else if walk.stack.contains(&w) {
                let low = walk.low[v].min(walk.index[&w]);
                walk.low.insert(v.to_string(), low);
            }
        }
        if walk.low[v] == walk.index[v] {
            let mut component = Vec::new();
            while let Some(w) = walk.stack.pop() {
                let done = w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                walk.found.push(component);
            }
        }
    }
    let mut walk =
        Walk { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in nodes {
        if !walk.index.contains_key(v) {
            strong(&mut walk, v);
        }
    }
    walk.found
}

/// What is wrong with the graph of the layers `tops` given their `edges`, each
/// problem as one line that says where to look.
fn problems(tops: &BTreeSet<String>, edges: &BTreeMap<(String, String), Import>) -> Vec<String> {
    let levels = levels();
    let mut problems = Vec::new();
    for top in tops {
        if !levels.contains_key(top.as_str()) {
            problems.push(format!(
                "`extract-core/src/{top}` is a top-level module in no layer: add it to LAYERS in \
                 tests/docs/architecture.rs above every layer it imports, and to ARCHITECTURE.md"
            ));
        }
    }
    for name in levels.keys() {
        if !tops.contains(*name) {
            problems.push(format!("LAYERS names `{name}`, which is no longer a module of extract-core/src"));
        }
    }
    for ((from, to), import) in edges {
        let (Some(&a), Some(&b)) = (levels.get(from.as_str()), levels.get(to.as_str())) else { continue };
        if b <= a {
            let how = if b == a { "sideways, to a layer on its own line" } else { "upward" };
            problems.push(format!(
                "`{from}` imports `{to}`, {how} in LAYERS: {}:{}: {}",
                import.file.display(),
                import.line,
                import.text
            ));
        }
    }
    let names: Vec<String> = tops.iter().cloned().collect();
    let graph: BTreeSet<(String, String)> = edges.keys().cloned().collect();
    for cycle in cycles(&names, &graph) {
        problems.push(format!("the layers {} import each other (a cycle)", cycle.join(", ")));
    }
    problems
}

#[test]
fn every_import_between_layers_points_downward() {
    let tops = layers_on_disk();
    let edges = edges(&tops);
    for top in tops.keys() {
        let to: Vec<&str> = edges.keys().filter(|(a, _)| a == top).map(|(_, b)| b.as_str()).collect();
        println!("{top} -> {}", if to.is_empty() { "-".to_string() } else { to.join(", ") });
    }
    let problems = problems(&tops.keys().cloned().collect(), &edges);
    assert!(problems.is_empty(), "the layer graph of extract-core is broken:\n- {}", problems.join("\n- "));
}

#[test]
fn an_upward_import_a_cycle_and_an_unknown_layer_are_reported() {
    let import =
        |text: &str| Import { file: PathBuf::from("extract-core/src/x.rs"), line: 1, text: text.into() };
    let mut tops: BTreeSet<String> =
        LAYERS.iter().flat_map(|names| names.iter().map(|n| n.to_string())).collect();
    tops.insert("report".into());
    let mut edges = BTreeMap::new();
    edges.insert(("run".to_string(), "schema".to_string()), import("use crate::schema::Tool;"));
    edges.insert(("schema".to_string(), "run".to_string()), import("use crate::Run;"));
    let found = problems(&tops, &edges);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with("`extract-core/src/report` is a top-level module in no layer"),
        "{found:#?}"
    );
    assert_eq!(
        found[1],
        "`schema` imports `run`, upward in LAYERS: extract-core/src/x.rs:1: use crate::Run;"
    );
    assert_eq!(found[2], "the layers run, schema import each other (a cycle)");
}

#[test]
fn the_architecture_shows_the_layers_the_test_holds() {
    let expected: String = LAYERS.iter().map(|names| names.join("  ") + "\n").collect();
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap();
    let start = "```text layers\n";
    let shown = text
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("ARCHITECTURE.md has a ```text layers block");
    assert_eq!(shown, expected, "ARCHITECTURE.md's ```text layers block must read:\n{expected}");
}

#[test]
fn the_import_scan_reads_code_only() {
    let code =
        code_only("use crate::run; // crate::drive\nlet s = \"crate::openai\"; /* crate::schema */ 'c';");
    assert_eq!(crate_paths(&code, 1).into_iter().map(|(_, n)| n).collect::<Vec<_>>(), ["run"]);
    let group = "use crate::{\n    run::{Next, Run},\n    Tool,\n    vocabulary::text::cut as short,\n};";
    assert_eq!(
        crate_paths(group, 1).into_iter().map(|(_, n)| n).collect::<Vec<_>>(),
        ["run", "Tool", "vocabulary"]
    );
    assert_eq!(
        crate_paths("use super::super::schema::Tool;", 2).into_iter().map(|(_, n)| n).collect::<Vec<_>>(),
        ["schema"]
    );
    assert!(crate_paths("use super::super::policy::Run;", 3).is_empty(), "still inside the layer");
    assert!(crate_paths("let x = mycrate::run;", 1).is_empty());
}
