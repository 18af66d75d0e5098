//! The README's first program is `examples/first_program.rs`, word for
//! word, and it runs offline: in a child process whose environment names no
//! backend, as on a new user's machine.

/// The example, included whole, with a way in to its `main`.
mod program {
    include!("../../examples/first_program.rs");

    pub(super) fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}

/// The README's first `rust` block.
fn readme_program() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("```rust\n").expect("a rust block") + "```rust\n".len();
    readme[start..][..readme[start..].find("```").unwrap()].to_string()
}

#[test]
fn the_readmes_first_program_is_the_example() {
    let example = include_str!("../../examples/first_program.rs");
    let body = &example[example.find("use extract::").unwrap()..];
    assert_eq!(readme_program(), body, "README.md's first program and examples/first_program.rs differ");
}

/// Runs the example's `main` when the parent asks; does nothing as an ordinary test.
#[test]
fn child_process_runs_the_first_program() {
    if std::env::var_os("EXTRACT_FIRST_PROGRAM_CHILD").is_none() {
        return;
    }
    program::run().unwrap();
}

#[test]
fn the_first_program_runs_offline_and_the_sum_check_corrects_it() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["first_program::child_process_runs_the_first_program", "--exact", "--nocapture"])
        .env("EXTRACT_FIRST_PROGRAM_CHILD", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("valid after 2 attempt(s): Receipt { vendor: \"Café Aurora\""), "{said}");
}
