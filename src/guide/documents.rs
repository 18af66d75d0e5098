//! Documents: text, PDFs, and where each value came from.
//!
//! A [`Document`](crate::Document) is text or a PDF. `&str` and `String`
//! convert into a text document, so `extractor.extract::<T>("...")` works
//! as it is. A document may have an id (`^[a-zA-Z0-9_-]{1,64}$`; one that
//! breaks the pattern is a configuration error when the document is
//! extracted) and a title, which the model sees beside it. A document
//! without an id gets one from the SHA-256 of its content (`doc-` and 16
//! hex digits), the same in every run, so a journal knows it again.
//!
//! Claude reads a PDF as a PDF (a `document` block). Its text layer, when
//! you have one (from `pdftotext`, say), is what the quotes of
//! [`Sourced`](crate::Sourced) values are checked against; the
//! OpenAI-compatible client sends documents as text, so it needs the text
//! layer, and refuses a PDF without one (a configuration error). Without a text layer quotes cannot be
//! checked: they are recorded unverified (`"verified": false`), never
//! failed.
//!
//! [`sources()`](crate::Validated::sources) gives each `Sourced` value's
//! [`Source`](crate::Source): its path in the output (JSON names), the
//! quote, its byte range in the document's text (`span`, `None` when
//! unverified), and its page when the text has pages (form feeds, as a
//! PDF's text layer does).
//!
//! ```
//! use extract::{Document, Extractable, Extractor, Sourced, testing::Scripted};
//! use serde_json::json;
//!
//! /// The header of an invoice, each value with its quote.
//! #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! struct InvoiceHeader {
//!     number: Sourced<String>,
//!     total: Sourced<f64>,
//! }
//!
//! # let pdf_bytes = b"%PDF-1.4 ...".to_vec();
//! let pdf_text = "Fabrikam Ltd\nInvoice INV-2024-0305\nTotal due: 1,250.00 EUR";
//! let scan = Document::pdf(pdf_bytes) // std::fs::read("march.pdf")?
//!     .with_id("INV-2024-0305")
//!     .with_title("Fabrikam invoice")
//!     .with_text_layer(pdf_text); // optional: what quotes are checked against
//!
//! let model = Scripted::new([json!({
//!     "number": {"value": "INV-2024-0305", "quote": "Invoice INV-2024-0305"},
//!     "total": {"value": 1250.0, "quote": "1,250.00"}
//! })]);
//! let outcome = Extractor::new(model).extract_blocking::<InvoiceHeader>(scan)?;
//! for source in outcome.valid().unwrap().sources() {
//!     println!("{} {:?} at {:?}", source.path, source.quote, source.span);
//!     let span = source.span.clone().expect("verified against the text layer");
//!     assert_eq!(&pdf_text[span], source.quote);
//! }
//! # Ok::<(), extract::Error>(())
//! ```
//!
//! A quote that is not in the document is `quote_not_found`, and the model
//! is asked again (or, for a field tagged `recoverable = false`, a person
//! is): see [Sourced values](super#sourced-values). Without a text layer
//! the same answer is valid, its sources unverified:
//!
//! ```
//! # use extract::{Document, Extractable, Extractor, Sourced, testing::Scripted};
//! # use serde_json::json;
//! # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
//! # struct InvoiceHeader { number: Sourced<String>, total: Sourced<f64> }
//! let scan = Document::pdf(b"%PDF-1.4 ...".to_vec());
//! assert!(scan.id().starts_with("doc-"), "an id from the content");
//! let model = Scripted::new([json!({
//!     "number": {"value": "INV-2024-0305", "quote": "Invoice INV-2024-0305"},
//!     "total": {"value": 1250.0, "quote": "1,250.00"}
//! })]);
//! let outcome = Extractor::new(model).extract_blocking::<InvoiceHeader>(scan)?;
//! let sources = outcome.valid().unwrap().sources();
//! assert!(sources.iter().all(|source| !source.verified() && source.span.is_none()));
//! assert_eq!(serde_json::to_value(&sources[0])?["verified"], false);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
