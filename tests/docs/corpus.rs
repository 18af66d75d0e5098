//! The labelled corpus in `examples/corpus/` is exactly what its generator
//! (`examples/make_corpus.rs`) writes, so the truth and the documents cannot
//! drift apart by hand, and every case loads against the example's type.

#[allow(dead_code)] // its `main` writes the files; here only `files` is called
#[path = "../../examples/make_corpus.rs"]
mod make_corpus;

use std::path::Path;

#[test]
fn the_committed_corpus_is_what_the_generator_writes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/corpus");
    let files = make_corpus::files();
    let mut on_disk: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    on_disk.sort();
    let mut written: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
    written.sort();
    assert_eq!(on_disk, written, "regenerate with `cargo run --example make_corpus`");
    for (name, bytes) in &files {
        let committed = std::fs::read(dir.join(name)).unwrap();
        assert!(&committed == bytes, "{name} differs from what the generator writes");
    }
    let cases = files.iter().filter(|(name, _)| name.ends_with(".json")).count();
    let pdfs = files.iter().filter(|(name, _)| name.ends_with(".pdf")).count();
    assert!(cases >= 60 && pdfs >= cases / 5, "{cases} cases, {pdfs} PDFs");
    for (name, bytes) in files.iter().filter(|(name, _)| name.ends_with(".pdf")) {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            text.starts_with("%PDF-") && text.contains("/Courier") && text.contains("TOTAL DUE"),
            "{name}"
        );
    }
}
