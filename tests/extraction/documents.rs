//! Documents: ids, PDFs with and without a text layer, and the provenance of
//! every `Sourced` value (its quote and the byte range it was read from).

use extract::testing::Scripted;
use extract::{Document, Error, Extractable, Extractor, Outcome, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Receipt {
    vendor: Sourced<String>,
    total: Sourced<f64>,
    lines: Vec<Line>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Line {
    item: Sourced<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Plain {
    total: f64,
}

/// Multi-byte UTF-8 before the quotes, and runs of whitespace inside them.
const TEXT: &str =
    "Reçu — Café Crème Zürich\nVendor:   ACME \t Corp\nTotal  due:\n  1 250.00 €\nItem: Crème brûlée";

fn output() -> Value {
    json!({
        "vendor": {"value": "ACME Corp", "quote": "Vendor: ACME Corp"},
        "total": {"value": 1250.0, "quote": "Total due: 1 250.00 €"},
        "lines": [{"item": {"value": "Crème brûlée", "quote": "Item: Crème brûlée"}}],
    })
}

fn valid<T>(outcome: Outcome<T>) -> extract::Validated<T> {
    match outcome {
        Outcome::Valid(v) => v,
        Outcome::Escalated(e) => panic!("escalated: {e:?}"),
    }
}

#[test]
fn each_sourced_value_has_its_quote_and_its_bytes_in_the_document() {
    let outcome = Extractor::new(Scripted::new([output()])).extract_blocking::<Receipt>(TEXT).unwrap();
    let receipt = valid(outcome);
    let sources = receipt.sources();
    let paths: Vec<String> = sources.iter().map(|s| s.path.to_string()).collect();
    assert_eq!(paths, ["vendor", "total", "lines[0].item"]);
    // The span is the quoted passage as the document writes it, whitespace and all.
    let at = |i: usize| &TEXT[sources[i].span.clone().expect("verified")];
    assert_eq!(at(0), "Vendor:   ACME \t Corp");
    assert_eq!(at(1), "Total  due:\n  1 250.00 €");
    assert_eq!(at(2), "Item: Crème brûlée");
    assert_eq!(sources[0].quote, "Vendor: ACME Corp");
    assert!(sources.iter().all(|s| s.verified()));

    let packet = serde_json::to_value(&receipt).unwrap();
    let first = &packet["sources"][0];
    assert_eq!(first["path"], "vendor");
    assert_eq!(first["verified"], true);
    let (start, end) = (first["start"].as_u64().unwrap() as usize, first["end"].as_u64().unwrap() as usize);
    assert_eq!(&TEXT[start..end], "Vendor:   ACME \t Corp");
}

#[test]
fn a_quote_on_a_text_with_pages_says_its_page() {
    // A PDF's text layer separates pages with form feeds.
    let layer =
        "Receipt\nVendor: ACME Corp\n\u{c}Page 2\nTotal due: 1 250.00 €\n\u{c}Page 3\nItem: Crème brûlée";
    let scan = Document::pdf(b"%PDF-1.4".to_vec()).with_text_layer(layer);
    let outcome = Extractor::new(Scripted::new([output()])).extract_blocking::<Receipt>(scan).unwrap();
    // The report shows the page beside the bytes.
    let stats = extract::Stats::new();
    let html = extract::report::Report::new(&stats).outcome("r-1", &outcome).html();
    assert!(html.contains("page 3, bytes"), "{html}");
    let receipt = valid(outcome);
    let pages: Vec<Option<u32>> = receipt.sources().iter().map(|s| s.page).collect();
    assert_eq!(pages, [Some(1), Some(2), Some(3)]);
    let packet = serde_json::to_value(&receipt).unwrap();
    assert_eq!(packet["sources"][2]["page"], 3);
    // Text without form feeds has no pages: `"page": null`.
    let plain = valid(Extractor::new(Scripted::new([output()])).extract_blocking::<Receipt>(TEXT).unwrap());
    assert!(plain.sources().iter().all(|s| s.page.is_none()));
    assert!(serde_json::to_value(&plain).unwrap()["sources"][0]["page"].is_null());
}

/// A statement of fees: each fee quoting its line.
#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Fees {
    title: Sourced<String>,
    fees: Vec<Fee>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Fee {
    line: Sourced<String>,
}

#[test]
fn identical_lines_quoted_by_two_items_keep_their_own_spans_and_pages() {
    // The same fee on two pages: two items, two lines; the title quotes the
    // first fee's line too, at another place, and keeps the first occurrence.
    let text = "Fee 1.00\nRent 9.00\n\u{c}Fee   1.00\nEnd\n";
    let quoted = |quote: &str| json!({"value": quote, "quote": quote});
    let output = json!({
        "title": quoted("Fee 1.00"),
        "fees": [{"line": quoted("Fee 1.00")}, {"line": quoted("Rent 9.00")}, {"line": quoted("Fee 1.00")}],
    });
    let fees = valid(Extractor::new(Scripted::new([output])).extract_blocking::<Fees>(text).unwrap());
    let placed: Vec<(String, &str, Option<u32>)> =
        fees.sources().iter().map(|s| (s.path.to_string(), &text[s.span.clone().unwrap()], s.page)).collect();
    assert_eq!(
        placed,
        [
            ("title".to_string(), "Fee 1.00", Some(1)),
            ("fees[0].line".to_string(), "Fee 1.00", Some(1)),
            ("fees[1].line".to_string(), "Rent 9.00", Some(1)),
            ("fees[2].line".to_string(), "Fee   1.00", Some(2)),
        ]
    );
}

#[test]
fn a_type_without_sourced_values_has_no_sources_key() {
    let outcome =
        Extractor::new(Scripted::new([json!({"total": 5.0})])).extract_blocking::<Plain>("Total 5").unwrap();
    let plain = valid(outcome);
    assert!(plain.sources().is_empty());
    let packet = serde_json::to_value(&plain).unwrap();
    assert!(packet.get("sources").is_none(), "{packet}");
}

#[test]
fn a_pdf_with_a_text_layer_has_its_quotes_checked_against_the_layer() {
    let scan = Document::pdf(b"%PDF-1.4 (not read by the scripted model)".to_vec()).with_text_layer(TEXT);
    let outcome = Extractor::new(Scripted::new([output()])).extract_blocking::<Receipt>(scan).unwrap();
    let receipt = valid(outcome);
    assert!(receipt.sources().iter().all(|s| s.verified()));

    // A quote that is not in the layer fails, as for text.
    let mut bad = output();
    bad["vendor"]["quote"] = json!("Vendor: Globex");
    let scan = Document::pdf(b"%PDF-1.4".to_vec()).with_text_layer(TEXT);
    let model = Scripted::new([bad.clone(), bad]);
    let outcome = Extractor::new(model).extract_blocking::<Receipt>(scan).unwrap();
    let Outcome::Escalated(escalation) = outcome else { panic!("the quote is not in the text layer") };
    assert_eq!(escalation.error_chain[0].violations[0].code, "quote_not_found");
}

#[test]
fn a_pdf_without_a_text_layer_leaves_quotes_unverified_and_says_so() {
    let scan = Document::pdf(b"%PDF-1.4".to_vec()).with_title("March invoice");
    let outcome = Extractor::new(Scripted::new([output()])).extract_blocking::<Receipt>(scan).unwrap();
    let receipt = valid(outcome);
    assert_eq!(receipt.sources().len(), 3);
    assert!(receipt.sources().iter().all(|s| s.span.is_none() && !s.verified()), "never dressed as verified");
    let packet = serde_json::to_value(&receipt).unwrap();
    assert_eq!(packet["sources"][0]["verified"], false);
    assert!(packet["sources"][0]["start"].is_null());
}

#[test]
fn the_prompt_keeps_the_document_and_shows_a_pdf_as_one_line() {
    let model = Scripted::new([json!({"total": 5.0})]);
    let scan = Document::pdf(vec![b'%'; 1234]).with_title("March invoice").with_id("scan-7");
    let _ = Extractor::new(model.clone()).extract_blocking::<Plain>(scan.clone()).unwrap();
    let prompt = &model.prompts()[0];
    assert_eq!(prompt.document, scan, "the document itself, kind, title and bytes");
    let text = prompt.to_string();
    assert!(
        text.contains("### DOCUMENT\n```\n[a PDF document of 1234 bytes, titled \"March invoice\"]\n```"),
        "{text}"
    );
}

#[test]
fn a_bad_id_is_a_configuration_error_naming_it() {
    let model = Scripted::new([json!({"total": 5.0})]);
    let err = Extractor::new(model.clone())
        .extract_blocking::<Plain>(Document::text("Total 5").with_id("march/inv 7"))
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(err.to_string().contains("\"march/inv 7\""), "{err}");
    assert!(model.prompts().is_empty(), "the model was never called");
}

#[test]
fn strings_still_convert() {
    let owned = String::from("Total 5");
    for document in [Document::from("Total 5"), Document::from(&owned), Document::from(owned.clone())] {
        assert_eq!(document, "Total 5");
        assert_eq!(
            document.id(),
            Document::text("Total 5").id(),
            "an id from the content, the same each time"
        );
    }
}
