//! Compile errors of `#[derive(Extractable)]` and the check language, each
//! with its own span and no cascade. The snapshots are taken with every
//! feature on (rustc lists other implementations, which vary with features).
#![cfg(all(feature = "chrono", feature = "decimal", feature = "anthropic"))]

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
