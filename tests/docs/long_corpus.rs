//! The long documents of `examples/long/` are exactly what their generator
//! (`examples/make_long.rs`) writes, so the truths and the documents cannot
//! drift apart by hand; every truth is a valid answer of its type against
//! its text (each quote found, each sum right); and the documents hold the
//! hazards the windowed engine is tested against.

// Its `main` writes the files; here only `files` is called. It loads the
// calendar `make_corpus` loads too, each as a module of its own.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../examples/make_long.rs"]
mod make_long;

use std::collections::HashMap;

use crate::support::long_documents::{LongInvoice, LongKind, Statement, long_corpus, long_dir};

#[test]
fn the_committed_long_corpus_is_what_the_generator_writes() {
    let dir = long_dir();
    let files = make_long::files();
    let mut on_disk: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    on_disk.sort();
    let mut written: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
    written.sort();
    assert_eq!(on_disk, written, "regenerate with `cargo run --example make_long`");
    for (name, bytes) in &files {
        let committed = std::fs::read(dir.join(name)).unwrap();
        assert!(&committed == bytes, "{name} differs from what the generator writes");
    }
    // A PDF of one page for each page of its text, in Courier.
    let pdfs: Vec<&(String, Vec<u8>)> = files.iter().filter(|(name, _)| name.ends_with(".pdf")).collect();
    assert!((2..=3).contains(&pdfs.len()), "{} PDFs", pdfs.len());
    for (name, bytes) in pdfs {
        let text = std::fs::read_to_string(dir.join(name.replace(".pdf", ".txt"))).unwrap();
        let pages = text.split('\u{c}').count();
        let pdf = String::from_utf8_lossy(bytes);
        assert!(pdf.starts_with("%PDF-") && pdf.contains("/Courier"), "{name}");
        assert!(pdf.contains(&format!("/Count {pages}")), "{name}: {pages} pages");
        for (page, layer) in text.split('\u{c}').enumerate() {
            let numbered = layer.lines().find(|line| line.contains(&format!("page {} of {pages}", page + 1)));
            let numbered = numbered.unwrap_or_else(|| panic!("{name}: page {} has no number", page + 1));
            assert!(pdf.contains(&format!("({numbered})")), "{name}: {numbered:?} is in the PDF");
        }
    }
}

#[test]
fn every_long_truth_is_a_valid_answer_of_its_type() {
    let corpus = long_corpus();
    assert_eq!(corpus.len(), 8);
    for document in &corpus {
        let result = match document.kind {
            LongKind::Statement => extract::validate::<Statement>(&document.truth, &document.text).map(drop),
            LongKind::Invoice => extract::validate::<LongInvoice>(&document.truth, &document.text).map(drop),
        };
        if let Err(violations) = result {
            panic!("{}: {violations}", document.name);
        }
        let (pages, items) = (document.pages(), document.items().len());
        assert!(
            (5..=40).contains(&pages) && (20..=800).contains(&items),
            "{}: {pages} pages, {items}",
            document.name
        );
    }
    let counts: Vec<(usize, usize)> = corpus.iter().map(|d| (d.pages(), d.items().len())).collect();
    assert!(counts.contains(&(40, 800)), "{counts:?}");
}

#[test]
fn the_long_documents_hold_the_hazards_of_long_documents() {
    for document in long_corpus() {
        let name = &document.name;
        let pages: Vec<&str> = document.text.split('\u{c}').collect();
        let quotes: Vec<&str> =
            document.items().iter().map(|item| item["description"]["quote"].as_str().unwrap()).collect();
        // Every item's quote is a whole line of the document, and the item
        // holds no page: pages come from where the quote lies.
        let lines: Vec<&str> = pages.iter().flat_map(|page| page.lines()).collect();
        assert!(quotes.iter().all(|quote| lines.contains(quote)), "{name}");
        assert!(document.items().iter().all(|item| item.get("page").is_none()), "{name}");
        // Each page's number is on a line of its own that occurs once.
        for (page, text) in pages.iter().enumerate() {
            let line =
                text.lines().find(|line| line.contains(&format!("page {} of {}", page + 1, pages.len())));
            let line = line.unwrap_or_else(|| panic!("{name}: page {} has no number", page + 1));
            assert_eq!(lines.iter().filter(|l| **l == line).count(), 1, "{name}: {line}");
        }
        // Identical item lines: on one page, and across a page break.
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for quote in &quotes {
            *seen.entry(quote).or_default() += 1;
        }
        assert!(seen.values().any(|n| *n > 1), "{name}: no line printed twice");
        let straddled = pages.windows(2).any(|pair| {
            let last = pair[0].lines().rfind(|line| quotes.contains(line));
            let first = pair[1].lines().find(|line| quotes.contains(line));
            last.is_some() && last == first
        });
        assert!(straddled || name == "statement-08", "{name}: no item printed again across a page break");
        // Thousands separators on the page, not in the JSON; debits negative.
        let amounts: Vec<f64> =
            document.items().iter().map(|item| item["amount"].as_f64().unwrap()).collect();
        let printed =
            |quote: &&str| quote.split_whitespace().last().is_some_and(|amount| amount.contains(','));
        assert!(quotes.iter().any(printed), "{name}: no amount printed with a thousands separator");
        assert!(amounts.iter().any(|amount| amount.abs() >= 1000.0), "{name}");
        assert!(amounts.iter().any(|amount| *amount < 0.0), "{name}: no debit");
        // An invoice's pages after the first start with an item's line.
        if document.kind == LongKind::Invoice {
            let first_lines = pages[1..].iter().filter(|page| quotes.contains(&page.lines().next().unwrap()));
            assert_eq!(first_lines.count(), pages.len() - 1, "{name}");
        }
    }
    let notices = long_corpus().into_iter().find(|d| d.name == "statement-08").unwrap();
    let empty = notices.text.split('\u{c}').filter(|page| !page.contains("\n2026-")).count();
    assert_eq!(empty, 1, "statement-08 has one page without a transaction");
}
