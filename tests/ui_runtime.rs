//! Compile-fail cases of the runtime (to be merged into the workspace's `tests/ui.rs`).

#[test]
fn validated_cannot_be_built_outside_the_crate() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/validated_private.rs");
}
