//! Compile errors of `#[derive(Extractable)]` and the check language, each
//! with its own span and no cascade. The snapshots are taken with every
//! feature on (rustc lists other implementations, which vary with features).
#![cfg(all(feature = "chrono", feature = "decimal", feature = "anthropic"))]

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

/// No compile error names the hidden module generated code goes through:
/// what an error names is public and documented (`extract::requirements`).
#[test]
fn no_compile_error_names_a_hidden_path() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("tests/ui").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                if line.contains("__private") {
                    found.push(format!("{}:{}: {line}", path.display(), i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "hidden paths in compile errors:\n{}", found.join("\n"));
}
