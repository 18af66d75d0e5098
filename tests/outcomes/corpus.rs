//! The corpus loader (`extract::eval::load`) on real files: every case file
//! loads or the error names it; extensions in any letter case; a PDF
//! without a text layer is a case whose quotes are unverified, as a run
//! treats it; duplicate keys and integers a float cannot hold exactly are
//! refused naming the file and the path.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use extract::eval::{self, Case, Evaluation};
use extract::testing::Scripted;
use extract::{Document, Extractable, Extractor, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Record one bill.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Bill {
    number: String,
    vendor: Vendor,
    line_items: Vec<Item>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Vendor {
    name: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Item {
    description: String,
    amount: f64,
}

/// Record the invoice number, quoted.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Quoted {
    number: Sourced<String>,
}

const BILL: &str = r#"{"number": "B-1", "vendor": {"name": "ACME"}, "line_items": [{"description": "x", "amount": 1}, {"description": "y", "amount": 2}], "total": 3}"#;

/// A fresh directory of its own for one test, removed when dropped.
struct Corpus(PathBuf);

impl Corpus {
    fn new(test: &str) -> Corpus {
        let dir = std::env::temp_dir().join(format!("extract-corpus-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Corpus(dir)
    }

    fn with(self, name: impl AsRef<OsStr>, content: impl AsRef<[u8]>) -> Corpus {
        std::fs::write(self.0.join(name.as_ref()), content).unwrap();
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn ids<T: Extractable>(&self) -> Vec<String> {
        match eval::load::<T>(self.path()) {
            Ok(cases) => cases.iter().map(Case::id).collect(),
            Err(e) => panic!("the corpus does not load: {e}"),
        }
    }

    fn refused<T: Extractable>(&self) -> String {
        match eval::load::<T>(self.path()) {
            Ok(cases) => panic!("loaded: {:?}", cases.iter().map(Case::id).collect::<Vec<_>>()),
            Err(e) => e.to_string(),
        }
    }
}

impl Drop for Corpus {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn case_files_load_whatever_the_letter_case_of_their_extensions() {
    let corpus = Corpus::new("upper")
        .with("a1.JSON", BILL)
        .with("a1.TXT", "Bill B-1")
        .with("a2.Json", BILL)
        .with("a2.PDF", "%PDF-1.4")
        .with("a2.Txt", "Bill B-1 (text layer)")
        .with("a3.json", BILL)
        .with("a3.txt", "Bill B-1");
    assert_eq!(corpus.ids::<Bill>(), ["a1", "a2", "a3"]);
    let cases = eval::load::<Bill>(corpus.path()).unwrap();
    assert_eq!(cases[0].document.searchable_text(), Some("Bill B-1"));
    assert!(cases[1].document.is_pdf());
    assert_eq!(cases[1].document.searchable_text(), Some("Bill B-1 (text layer)"));
}

#[test]
fn a_file_the_loader_would_skip_is_named_in_its_error() {
    // A name that is not UTF-8 cannot be a case id, and is not passed over.
    let not_utf8 = OsStr::from_bytes(b"c\xff1.json");
    let corpus = Corpus::new("not-utf8").with("a1.json", BILL).with("a1.txt", "Bill").with(not_utf8, BILL);
    let error = corpus.refused::<Bill>();
    assert!(error.contains("c\u{FFFD}1.json") && error.contains("not UTF-8"), "{error}");

    // A document without its expected JSON.
    let corpus = Corpus::new("orphan").with("a1.json", BILL).with("a1.txt", "Bill").with("a2.txt", "Bill 2");
    let error = corpus.refused::<Bill>();
    assert!(error.contains("a2.txt") && error.contains("a2.json"), "{error}");

    // A file that is no part of any case.
    let corpus = Corpus::new("stray").with("a1.json", BILL).with("a1.txt", "Bill").with("a1.jsn", BILL);
    let error = corpus.refused::<Bill>();
    assert!(error.contains("a1.jsn"), "{error}");

    // One case written twice.
    let corpus = Corpus::new("twice").with("a1.json", BILL).with("a1.JSON", BILL).with("a1.txt", "Bill");
    let error = corpus.refused::<Bill>();
    assert!(error.contains("a1.json") && error.contains("a1.JSON"), "{error}");

    // A name that is no document id.
    let corpus = Corpus::new("bad-id").with("a 1.json", BILL).with("a 1.txt", "Bill");
    let error = corpus.refused::<Bill>();
    assert!(error.contains("a 1.json") && error.contains("document id"), "{error}");
}

#[tokio::test]
async fn a_pdf_without_a_text_layer_is_a_case_whose_quotes_are_unverified_as_in_a_run() {
    let truth = r#"{"number": "INV-7"}"#;
    let pdf = b"%PDF-1.4 a scan, no text".as_slice();
    let corpus = Corpus::new("scan")
        // No text layer at all.
        .with("p1.json", truth)
        .with("p1.pdf", pdf)
        // An empty one, and what `pdftotext` writes for a page without text.
        .with("p2.json", truth)
        .with("p2.pdf", pdf)
        .with("p2.txt", "")
        .with("p3.json", truth)
        .with("p3.pdf", pdf)
        .with("p3.txt", "\u{c}\n");
    let cases = match eval::load::<Quoted>(corpus.path()) {
        Ok(cases) => cases,
        Err(e) => panic!("the corpus does not load: {e}"),
    };
    assert_eq!(cases.iter().map(Case::id).collect::<Vec<_>>(), ["p1", "p2", "p3"]);
    for case in &cases {
        assert!(case.document.is_pdf(), "{}", case.id());
        assert_eq!(case.document.searchable_text(), None, "{}: no text layer", case.id());
    }

    let reply = json!({"number": {"value": "INV-7", "quote": "Invoice INV-7"}});
    // A run on the same PDF: valid, its quote unverified.
    let outcome =
        Extractor::new(Scripted::new([reply.clone()])).extract::<Quoted>(Document::pdf(pdf)).await.unwrap();
    let valid = outcome.valid().expect("a run on the PDF is valid");
    assert!(valid.sources().iter().all(|s| !s.verified()), "{:?}", valid.sources());

    // The evaluation agrees: every case valid and right.
    let card = Evaluation::new(Extractor::new(Scripted::new([reply.clone(), reply.clone(), reply])))
        .run::<Quoted>(cases)
        .await
        .unwrap();
    assert_eq!(card.documents.correct, 3, "{card}");
}

#[test]
fn duplicate_keys_are_refused_naming_the_file_and_the_key() {
    for (json, path) in [
        (BILL.replacen(r#""number": "B-1","#, r#""number": "B-0", "number": "B-1","#, 1), "`number`"),
        (BILL.replace(r#"{"name": "ACME"}"#, r#"{"name": "ACME", "name": "ACME Ltd"}"#), "`vendor.name`"),
        (BILL.replace(r#""amount": 2}"#, r#""amount": 2, "amount": 3}"#), "`line_items[1].amount`"),
    ] {
        let corpus = Corpus::new("duplicate").with("d1.json", &json).with("d1.txt", "Bill");
        let error = corpus.refused::<Bill>();
        assert!(
            error.contains("d1.json") && error.contains(path) && error.contains("twice"),
            "{json}: {error}"
        );
    }
}

#[test]
fn an_integer_a_float_cannot_hold_exactly_is_refused_naming_the_file_and_the_path() {
    for (total, path, written) in [
        // 2^53 + 1: an integer of 64 bits, not of a float's 53.
        (r#""total": 9007199254740993"#, "`total`", "9007199254740993"),
        (r#""total": -9007199254740993"#, "`total`", "-9007199254740993"),
        // Beyond 64 bits too.
        (r#""total": 123456789012345678901234567890"#, "`total`", "123456789012345678901234567890"),
    ] {
        let json = BILL.replace(r#""total": 3"#, total);
        let corpus = Corpus::new("inexact").with("n1.json", &json).with("n1.txt", "Bill");
        let error = corpus.refused::<Bill>();
        assert!(
            error.contains("n1.json") && error.contains(path) && error.contains(written),
            "{json}: {error}"
        );
        assert!(error.contains("cannot hold exactly"), "{error}");
    }
    let nested = BILL.replace(r#""amount": 1}"#, r#""amount": 18446744073709551615}"#);
    let corpus = Corpus::new("inexact-nested").with("n2.json", &nested).with("n2.txt", "Bill");
    let error = corpus.refused::<Bill>();
    assert!(error.contains("n2.json") && error.contains("`line_items[0].amount`"), "{error}");

    // What a float holds exactly loads: 2^53, 10^20, 2^64, fractions.
    for total in ["9007199254740992", "100000000000000000000", "18446744073709551616", "3.25", "1e3", "-0"] {
        let json = BILL.replace(r#""total": 3"#, &format!(r#""total": {total}"#));
        let corpus = Corpus::new("exact").with("e1.json", &json).with("e1.txt", "Bill");
        assert_eq!(corpus.ids::<Bill>(), ["e1"], "{total}");
    }
}
