//! How good is it: evaluation against labelled documents.
//!
//! [`Stats`](crate::Stats) says what the loop did; [`eval`](crate::eval)
//! says whether what it accepted was right. Give it cases (a document and
//! the JSON a right extraction gives, `null` where the source lacks the
//! datum) and an [`Extractor`](crate::Extractor); it runs the extractor
//! over every case and scores each field and each document with one of
//! four verdicts:
//!
//! - `correct`: valid, and equal to the truth;
//! - `wrong_accepted`: valid, and wrong (an invented value for a `null`
//!   truth counts here too): the figure that matters;
//! - `escalated_present`: escalated although the truth holds a value;
//! - `escalated_absent`: escalated, and the truth is `null`.
//!
//! Accuracy counts what the loop got right: correct values plus rightly
//! escalated ones (`escalated_absent`: sending to a person what the source
//! does not hold is the right outcome).
//!
//! # Cases
//!
//! [`eval::load`](crate::eval::load) reads a directory: every `NAME.json`
//! (the expected JSON, in the names the model sees) beside `NAME.txt`, or
//! beside `NAME.pdf` with `NAME.txt` as its text layer; the case's id is
//! `NAME`. All or nothing: a file that is no part of a case, or an expected
//! JSON that does not fit the type, is an error naming it.
//! [`Case::new`](crate::eval::Case::new) builds a case in code.
//!
//! # Score and compare
//!
//! Each field is compared by its kind (numbers as numbers, dates as dates,
//! the rest exactly) unless given a [`Rule`](crate::eval::Rule). An array
//! is one field, compared whole, unless
//! [`items`](crate::eval::Evaluation::items) pairs its items with the
//! truth's (by position or by a key): then each item's fields are scored
//! too (`"line_items[].amount"`), and the array is right only when every
//! pair's fields are. [`Comparison`](crate::eval::Comparison) sets two
//! configurations side by side on the same cases: paired counts, and the
//! 95% interval of B's accuracy minus A's.
//!
//! ```
//! use extract::eval::{self, Comparison, Evaluation, Match, Rule};
//! use extract::{Extractable, Extractor, testing::Scripted};
//! use serde_json::json;
//!
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Invoice { vendor: String, line_items: Vec<Line>, total: f64 }
//!
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct Line { item: String, amount: f64 }
//!
//! // A corpus of two cases: NAME.json beside NAME.txt (or NAME.pdf).
//! let corpus = std::env::temp_dir().join(format!("extract-guide-corpus-{}", std::process::id()));
//! std::fs::create_dir_all(&corpus)?;
//! std::fs::write(corpus.join("acme.txt"), "ACME\nDesign 100.00\nTotal 100.00")?;
//! std::fs::write(corpus.join("acme.json"),
//!     r#"{"vendor": "ACME", "line_items": [{"item": "Design", "amount": 100}], "total": 100}"#)?;
//! std::fs::write(corpus.join("bolt.txt"), "Bolt Ltd\nBolts 8.00\nTotal 8.00")?;
//! std::fs::write(corpus.join("bolt.json"),
//!     r#"{"vendor": "Bolt Ltd", "line_items": [{"item": "Bolts", "amount": 8}], "total": 8}"#)?;
//! let cases = eval::load::<Invoice>(&corpus)?;
//!
//! let answer = |vendor: &str, item: &str, amount: f64, total: f64| {
//!     json!({"vendor": vendor, "line_items": [{"item": item, "amount": amount}], "total": total})
//! };
//! // A misreads Bolt's total, and nothing catches it; B reads it right.
//! let model_a = Scripted::new([answer("acme", "Design", 100.0, 100.0), answer("Bolt Ltd", "Bolts", 8.0, 80.0)]);
//! let model_b = Scripted::new([answer("ACME", "Design", 100.0, 100.0), answer("Bolt Ltd", "Bolts", 8.0, 8.0)]);
//!
//! let a = Evaluation::new(Extractor::new(model_a)).label("A")
//!     .rule("vendor", Rule::Text)                       // case and whitespace set aside
//!     .rule("total", Rule::Number { tolerance: 0.005 })
//!     .items("line_items", Match::Position)             // score each item's fields too
//!     .run_blocking::<Invoice>(cases.clone())?;
//! let b = Evaluation::new(Extractor::new(model_b).instructions("Read the total line."))
//!     .label("B")
//!     .run_blocking::<Invoice>(cases)?;
//!
//! assert_eq!(a.fields["vendor"].correct, 2, "\"acme\" is ACME by Rule::Text");
//! assert_eq!(a.fields["total"].wrong_accepted, 1); // valid, and wrong: the figure that matters
//! assert_eq!(a.fields["line_items[].amount"].correct, 2);
//! assert_eq!(b.documents.correct, 2);
//! println!("{a}\n{}", Comparison::new(&a, &b)?);      // tables: each field, then B against A
//! # std::fs::remove_dir_all(&corpus)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In async code, `.run::<T>(cases).await`.
//! [`Report::evaluation`](crate::report::Report::evaluation) and
//! [`Report::comparison`](crate::report::Report::comparison) add a section
//! to the HTML report.
//!
//! `cargo run --example eval` scores two configurations on the
//! repository's 64 labelled invoices (`examples/corpus`, which
//! `examples/make_corpus.rs` writes) with a scripted model that makes
//! realistic mistakes; `scripts/real_model.sh` runs the same against
//! SmolLM2-135M behind llama.cpp's server, offline.
