//! The facade's root holds what a program writes (at most 30 items), and
//! the rest lives in modules named for a concept.

use extract::*;

/// Every item the root exports, named once here: a new root item fails
/// this test until it is added (and the count still holds).
#[test]
fn the_root_holds_at_most_thirty_items_a_program_writes() {
    let root: &[&str] = &[
        "Extractable",
        "Extractor",
        "Outcome",
        "Validated",
        "Escalation",
        "Partial",
        "Reason",
        "Retries",
        "Corrections",
        "Document",
        "Source",
        "Sourced",
        "Violation",
        "Violations",
        "Code",
        "Layer",
        "FieldPath",
        "Tool",
        "Usage",
        "Stats",
        "Error",
        "ErrorKind",
        "validate",
        "review",
        "leaf",
        "Bulk",
        "BulkReport",
        "Journal",
        "Windows",
        "Event",
    ];
    assert!(root.len() <= 30, "{} root items", root.len());
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    // The root's own `pub use` lines (inside `pub mod` blocks they are indented).
    let mut exported = Vec::new();
    let mut statement = String::new();
    for line in lib.lines() {
        if line.starts_with("pub use ") || !statement.is_empty() {
            statement.push_str(line);
            if line.ends_with(';') {
                let names = statement.trim_start_matches("pub use ").trim_end_matches(';');
                let names = names.rsplit_once("::{").map_or_else(
                    || vec![names.rsplit("::").next().unwrap().to_string()],
                    |(_, list)| list.trim_end_matches('}').split(',').map(|n| n.trim().to_string()).collect(),
                );
                exported.extend(names.into_iter().filter(|n| !n.is_empty()));
                statement.clear();
            }
        }
    }
    let modules = ["testing", "eval", "desk", "anthropic", "openai", "__private_v2"];
    let items: Vec<String> = exported
        .into_iter()
        .map(|name| name.rsplit(" as ").next().unwrap().to_string())
        .filter(|name| !modules.contains(&name.as_str()))
        .collect();
    let unlisted: Vec<&String> = items.iter().filter(|name| !root.contains(&name.as_str())).collect();
    assert!(unlisted.is_empty(), "root items not in the list: {unlisted:?}");

    // What moved is where the changelog says.
    let _: fn(&model::Prompt) -> String = |prompt| prompt.to_string();
    let _ = (run::PATCH_TOOL, run::SYSTEM_INSTRUCTIONS, run::FEEDBACK_PER_FINGERPRINT);
    let _: Option<journal::ReviewDecision> = None;
    let _: Option<bulk::Progress> = None;
    let _: Option<report::Report<'_>> = None;
    let _: Option<ErrorKind> = None;
    let _: Option<journal::JournalProblem> = None;
    let _ = <Extractor<Box<dyn model::Model>> as model::FromEnv>::from_env;
}
