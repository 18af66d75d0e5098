//! Evaluation against labelled documents (`extract::eval`): each verdict for
//! fields and documents, each comparison rule, items paired by position or
//! key, the side-by-side interval, and the corpus loader's refusals.

use extract::eval::{self, Case, Comparison, Evaluation, Match, Prices, Rule, Verdict};
use extract::testing::Scripted;
use extract::{Document, Extractable, Extractor, Retries, Sourced};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Record one bill.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(sum(line_items.amount) == total, tolerance = 0.01)]
struct Bill {
    #[extract(recoverable = false)]
    number: String,
    vendor: Vendor,
    po: Option<String>,
    line_items: Vec<Item>,
    total: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Vendor {
    name: String,
    city: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Item {
    description: String,
    amount: f64,
}

fn bill(number: Value, vendor: &str, po: Value, items: &[(&str, f64)], total: f64) -> Value {
    let items: Vec<Value> = items.iter().map(|(d, a)| json!({"description": d, "amount": a})).collect();
    json!({"number": number, "vendor": {"name": vendor, "city": null}, "po": po, "line_items": items, "total": total})
}

fn case(id: &str, truth: Value) -> Case {
    Case::new(Document::text(format!("bill {id}")).with_id(id), truth)
}

async fn score(
    replies: Vec<Value>,
    cases: Vec<Case>,
    configure: impl FnOnce(Evaluation<Scripted>) -> Evaluation<Scripted>,
) -> eval::Scorecard {
    let model = Scripted::new(replies);
    let evaluation = configure(Evaluation::new(Extractor::new(model).retries(Retries::new(1).unwrap())));
    evaluation.run::<Bill>(cases).await.unwrap()
}

#[tokio::test]
async fn each_verdict_is_counted_for_fields_and_documents() {
    let right = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Design", 200.0), ("Build", 300.0)], 500.0);
    let cases = vec![
        case("c1-right", right.clone()),
        case("c2-vendor-wrong", right.clone()),
        case("c3-po-invented", right.clone()),
        case("c4-number-absent", bill(Value::Null, "ACME Corp", Value::Null, &[("Design", 500.0)], 500.0)),
        case("c5-escalated-complete", right.clone()),
        case("c6-po-missed", bill(json!("B-6"), "ACME Corp", json!("PO-9"), &[("Design", 500.0)], 500.0)),
    ];
    let not_adding_up = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Design", 200.0)], 500.0);
    let replies = vec![
        right.clone(),
        bill(json!("B-1"), "ACME Ltd", Value::Null, &[("Design", 200.0), ("Build", 300.0)], 500.0),
        bill(json!("B-1"), "ACME Corp", json!("PO-1"), &[("Design", 200.0), ("Build", 300.0)], 500.0),
        // A recoverable = false field answered null: escalated at once.
        bill(Value::Null, "ACME Corp", Value::Null, &[("Design", 500.0)], 500.0),
        // The same failing check twice: escalated as systematic.
        not_adding_up.clone(),
        not_adding_up,
        bill(json!("B-6"), "ACME Corp", Value::Null, &[("Design", 500.0)], 500.0),
    ];
    let card = score(replies, cases, |e| {
        e.prices(Prices { input: 1.0, output: 5.0, cache_read: 0.1, cache_write: 1.25 })
    })
    .await;

    let counts = |f: &str| {
        let c = card.fields[f];
        (c.correct, c.wrong_accepted, c.escalated_present, c.escalated_absent)
    };
    assert_eq!(counts("number"), (4, 0, 1, 1));
    assert_eq!(counts("vendor.name"), (3, 1, 2, 0));
    // An invented value for a null truth and a missed one are both wrong accepted;
    // in an escalated document a null truth is escalated_absent.
    assert_eq!(counts("po"), (2, 2, 0, 2));
    assert_eq!(counts("vendor.city"), (4, 0, 0, 2));
    assert_eq!(counts("line_items"), (4, 0, 2, 0), "an array is one field, compared whole");
    let d = card.documents;
    assert_eq!((d.correct, d.wrong_accepted, d.escalated_present, d.escalated_absent), (1, 3, 1, 1));
    for (field, c) in &card.fields {
        assert_eq!(c.total(), 6, "{field}: the four counts add up to the cases");
    }
    let keys: Vec<&str> = card.fields.keys().map(String::as_str).collect();
    assert_eq!(keys, ["line_items", "number", "po", "total", "vendor.city", "vendor.name"]);

    let verdict = |id: &str| card.cases.iter().find(|c| c.id == id).unwrap().verdict;
    assert_eq!(verdict("c4-number-absent"), Verdict::EscalatedAbsent);
    assert_eq!(verdict("c5-escalated-complete"), Verdict::EscalatedPresent);
    assert_eq!(card.calls, 7, "one call per case, two for the systematic one");
    assert_eq!(card.cost, Some(0.0), "the scripted model reports no tokens");
    assert_eq!(card.wrong_fields(), [("po", 2), ("vendor.name", 1)]);

    // The same names in JSON, and the table in text.
    let json = serde_json::to_value(&card).unwrap();
    assert_eq!(json["fields"]["po"]["wrong_accepted"], 2);
    assert_eq!(json["documents"]["escalated_absent"], 1);
    assert_eq!(json["cases"][3]["verdict"], "escalated_absent");
    assert_eq!(json["cases"][3]["reason"], "not_recoverable");
    let text = card.to_string();
    assert!(text.contains("wrong_accepted") && text.lines().any(|l| l.starts_with("vendor.name")), "{text}");
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Receipt {
    vendor: String,
    total: f64,
    date: String,
}

async fn receipt(reply: Value, truth: Value, rule: Option<(&str, Rule)>) -> Verdict {
    let mut evaluation = Evaluation::new(Extractor::new(Scripted::new([reply])));
    if let Some((path, rule)) = rule {
        evaluation = evaluation.rule(path, rule);
    }
    let card = evaluation.run::<Receipt>(vec![Case::new(Document::text("receipt"), truth)]).await.unwrap();
    card.documents_verdict()
}

trait OneVerdict {
    fn documents_verdict(&self) -> Verdict;
}

impl OneVerdict for eval::Scorecard {
    fn documents_verdict(&self) -> Verdict {
        self.cases[0].verdict
    }
}

#[tokio::test]
async fn each_comparison_rule_says_equal_and_different() {
    let truth = json!({"vendor": "ACME Corp", "total": 10.0, "date": "2026-03-01"});
    let reply =
        |vendor: &str, total: f64, date: &str| json!({"vendor": vendor, "total": total, "date": date});
    // Defaults: text exactly, numbers as numbers (10 equals 10.0).
    assert_eq!(receipt(reply("ACME Corp", 10.0, "2026-03-01"), truth.clone(), None).await, Verdict::Correct);
    assert_eq!(
        receipt(json!({"vendor": "ACME Corp", "total": 10, "date": "2026-03-01"}), truth.clone(), None).await,
        Verdict::Correct
    );
    assert_eq!(
        receipt(reply(" acme  corp", 10.0, "2026-03-01"), truth.clone(), None).await,
        Verdict::WrongAccepted
    );
    // Normalised text: case and whitespace set aside, nothing else.
    assert_eq!(
        receipt(reply(" acme  corp", 10.0, "2026-03-01"), truth.clone(), Some(("vendor", Rule::Text))).await,
        Verdict::Correct
    );
    assert_eq!(
        receipt(reply("ACME Co", 10.0, "2026-03-01"), truth.clone(), Some(("vendor", Rule::Text))).await,
        Verdict::WrongAccepted
    );
    // Numbers within a tolerance.
    let cents = || Some(("total", Rule::Number { tolerance: 0.01 }));
    assert_eq!(
        receipt(reply("ACME Corp", 10.004, "2026-03-01"), truth.clone(), cents()).await,
        Verdict::Correct
    );
    assert_eq!(
        receipt(reply("ACME Corp", 10.02, "2026-03-01"), truth.clone(), cents()).await,
        Verdict::WrongAccepted
    );
    // Dates as dates.
    assert_eq!(
        receipt(reply("ACME Corp", 10.0, "2026-03-01T00:00:00"), truth.clone(), Some(("date", Rule::Date)))
            .await,
        Verdict::Correct
    );
    assert_eq!(
        receipt(reply("ACME Corp", 10.0, "2026-03-02"), truth.clone(), Some(("date", Rule::Date))).await,
        Verdict::WrongAccepted
    );
    assert_eq!(
        receipt(reply("ACME Corp", 10.0, "01/03/2026"), truth.clone(), Some(("date", Rule::Date))).await,
        Verdict::WrongAccepted
    );
    // The caller's own.
    let first_word = || {
        Some((
            "vendor",
            Rule::custom(|v, t| {
                v.as_str().and_then(|v| v.split(' ').next()) == t.as_str().and_then(|t| t.split(' ').next())
            }),
        ))
    };
    assert_eq!(
        receipt(reply("ACME Ltd", 10.0, "2026-03-01"), truth.clone(), first_word()).await,
        Verdict::Correct
    );
    assert_eq!(
        receipt(reply("Bolt Corp", 10.0, "2026-03-01"), truth.clone(), first_word()).await,
        Verdict::WrongAccepted
    );
}

#[tokio::test]
async fn a_rule_for_a_field_the_type_lacks_is_refused_before_any_call() {
    let model = Scripted::new([json!({"vendor": "A", "total": 1, "date": "2026-01-01"})]);
    let error = Evaluation::new(Extractor::new(model.clone()))
        .rule("totl", Rule::Text)
        .run::<Receipt>(vec![Case::new(
            Document::text("r"),
            json!({"vendor": "A", "total": 1, "date": "2026-01-01"}),
        )])
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("no field `totl`") && message.contains("total"), "{message}");
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn items_pair_by_key_or_by_position() {
    let truth = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Design", 200.0), ("Build", 300.0)], 500.0);
    let swapped = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Build", 300.0), ("Design", 200.0)], 500.0);
    let by_key = score(vec![swapped.clone()], vec![case("k", truth.clone())], |e| {
        e.items("line_items", Match::Key("description".into()))
    })
    .await;
    assert_eq!(by_key.fields["line_items"].correct, 1);
    assert_eq!(by_key.fields["line_items[].amount"].correct, 1);
    assert_eq!(by_key.fields["line_items[].description"].correct, 1);
    assert_eq!(by_key.cases[0].verdict, Verdict::Correct);

    let by_position =
        score(vec![swapped], vec![case("p", truth.clone())], |e| e.items("line_items", Match::Position))
            .await;
    // Two items for two, but paired by position their amounts differ: the
    // array is wrong, as its items' fields are.
    assert_eq!(by_position.fields["line_items"].wrong_accepted, 1);
    assert_eq!(by_position.fields["line_items[].amount"].wrong_accepted, 1);
    assert_eq!(by_position.cases[0].verdict, Verdict::WrongAccepted);

    // Every item paired by key, one amount wrong (the sum still adds up):
    // the array is wrong, the descriptions right, the amounts wrong.
    let misread = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Design", 250.0), ("Build", 250.0)], 500.0);
    let card = score(vec![misread], vec![case("a", truth.clone())], |e| {
        e.items("line_items", Match::Key("description".into()))
    })
    .await;
    assert_eq!(card.fields["line_items"].wrong_accepted, 1, "a pair's field is wrong");
    assert_eq!(card.fields["line_items[].description"].correct, 1);
    assert_eq!(card.fields["line_items[].amount"].wrong_accepted, 1);
    assert!(card.to_string().contains("correct values plus rightly escalated ones"), "{card}");

    // One item left out (with its amount folded into another, so the sum
    // check still passes): the array is wrong, and so are its fields.
    let missing = bill(json!("B-1"), "ACME Corp", Value::Null, &[("Design", 500.0)], 500.0);
    let card = score(vec![missing], vec![case("m", truth)], |e| {
        e.items("line_items", Match::Key("description".into()))
    })
    .await;
    assert_eq!(card.fields["line_items"].wrong_accepted, 1);
    assert_eq!(card.fields["line_items[].amount"].wrong_accepted, 1);
    assert_eq!(card.fields["line_items[].description"].wrong_accepted, 1);
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
struct Quoted {
    number: Sourced<String>,
}

#[tokio::test]
async fn a_sourced_field_is_scored_on_its_value() {
    let model = Scripted::new([json!({"number": {"value": "INV-7", "quote": "Invoice INV-7"}})]);
    let card = Evaluation::new(Extractor::new(model))
        .run::<Quoted>(vec![Case::new(
            Document::text("Invoice INV-7, due in 30 days"),
            json!({"number": "INV-7"}),
        )])
        .await
        .unwrap();
    assert_eq!(card.fields["number"].correct, 1);
}

#[tokio::test]
async fn side_by_side_counts_pairs_and_puts_a_known_difference_in_its_interval() {
    let truth =
        |i: usize| bill(json!(format!("B-{i}")), "ACME Corp", Value::Null, &[("Design", 500.0)], 500.0);
    let cases = || (0..40).map(|i| case(&format!("d{i:02}"), truth(i))).collect::<Vec<_>>();
    // A misreads the vendor on 12 documents; B on 2 of those and 1 other.
    let vendor_a = |i: usize| if i < 12 { "ACME Ltd" } else { "ACME Corp" };
    let vendor_b = |i: usize| if i < 2 || i == 39 { "ACME Ltd" } else { "ACME Corp" };
    let replies = |vendor: &dyn Fn(usize) -> &'static str| -> Vec<Value> {
        (0..40)
            .map(|i| bill(json!(format!("B-{i}")), vendor(i), Value::Null, &[("Design", 500.0)], 500.0))
            .collect()
    };
    let a = score(replies(&vendor_a), cases(), |e| e.label("A")).await;
    let b = score(replies(&vendor_b), cases(), |e| e.label("B: vendor examples")).await;
    let comparison = Comparison::new(&a, &b).unwrap();
    assert_eq!(comparison.cases, 40);
    let d = comparison.documents;
    assert_eq!((d.better, d.worse, d.same), (10, 1, 29));
    assert!((d.accuracy_a - 28.0 / 40.0).abs() < 1e-12 && (d.accuracy_b - 37.0 / 40.0).abs() < 1e-12);
    assert!((d.difference - 9.0 / 40.0).abs() < 1e-12);
    assert!(
        d.interval[0] > 0.0 && d.interval[0] < d.difference && d.interval[1] > d.difference,
        "{:?}",
        d.interval
    );
    assert!(d.is_clear());
    let total = comparison.fields["total"];
    assert_eq!((total.better, total.worse, total.same), (0, 0, 40));
    assert_eq!(total.interval, [0.0, 0.0]);
    // Fixed seed: the same inputs, the same interval.
    assert_eq!(Comparison::new(&a, &b).unwrap().documents.interval, d.interval);
    let text = comparison.to_string();
    assert!(text.contains("B = B: vendor examples against A = A") && text.contains("vendor.name"), "{text}");
    assert_eq!(serde_json::to_value(&comparison).unwrap()["documents"]["better"], 10);

    // A section of the HTML report, labels escaped.
    let hostile = score(replies(&vendor_b), cases(), |e| e.label("<script>alert(1)</script>")).await;
    let stats = extract::Stats::new();
    let page = extract::report::Report::new(&stats)
        .evaluation(&a)
        .evaluation(&hostile)
        .comparison(&comparison)
        .html();
    let section = &page[page.find("<section id=\"evaluation\">").expect("the evaluation section")..];
    assert!(section.contains("<h3>B: vendor examples against A</h3>"), "{section}");
    assert!(
        section.contains(
            "<td><code>vendor.name</code></td><td class=\"num\">28</td><td class=\"num wrong\">12</td>"
        ),
        "{section}"
    );
    assert!(section.contains("<strong>+22.5</strong>"), "the documents' clear difference: {section}");
    assert!(!page.contains("<script>") && page.contains("&lt;script&gt;alert(1)"), "labels are escaped");

    // Different cases cannot be paired.
    let fewer = score(replies(&vendor_b)[..39].to_vec(), cases()[..39].to_vec(), |e| e.label("C")).await;
    let error = Comparison::new(&a, &fewer).unwrap_err().to_string();
    assert!(error.contains("d39") && error.contains("same cases"), "{error}");
}

fn corpus(files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "extract-corpus-{}-{}",
        std::process::id(),
        files.len() * 31 + files[0].0.len()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, content) in files {
        std::fs::write(dir.join(name), content).unwrap();
    }
    dir
}

#[test]
fn the_loader_reads_a_corpus_and_refuses_a_case_that_does_not_fit_naming_it() {
    let good = r#"{"number": "B-1", "vendor": {"name": "ACME", "city": null}, "po": null, "line_items": [{"description": "x", "amount": 1}], "total": 1}"#;
    let dir = corpus(&[
        ("a1.json", good),
        ("a1.txt", "Bill B-1"),
        ("a2.json", good),
        ("a2.pdf", "%PDF-1.4"),
        ("a2.txt", "Bill B-1 (text layer)"),
    ]);
    let cases = eval::load::<Bill>(&dir).unwrap();
    assert_eq!(cases.iter().map(Case::id).collect::<Vec<_>>(), ["a1", "a2"]);
    assert!(cases[1].document.is_pdf());
    assert_eq!(cases[1].document.searchable_text(), Some("Bill B-1 (text layer)"));

    let refused = |expected: &str| {
        let dir = corpus(&[("z9.json", expected), ("z9.txt", "Bill")]);
        eval::load::<Bill>(&dir).unwrap_err().to_string()
    };
    let unknown = refused(&good.replace("\"po\"", "\"p_o\""));
    assert!(
        unknown.contains("case z9")
            && unknown.contains("does not fit Bill: `p_o` is not a field of the type"),
        "{unknown}"
    );
    let missing = refused(
        r#"{"number": "B-1", "vendor": {"name": "ACME", "city": null}, "line_items": [], "total": 1}"#,
    );
    assert!(missing.contains("case z9") && missing.contains("`po` is missing (write null"), "{missing}");
    let wrong_kind = refused(&good.replace("\"total\": 1", "\"total\": \"1.00\""));
    assert!(wrong_kind.contains("`total` is a string, and the type has a number there"), "{wrong_kind}");
    let deep = refused(&good.replace("\"amount\": 1", "\"amount\": true"));
    assert!(deep.contains("`line_items[0].amount` is a boolean"), "{deep}");
    let nested = refused(&good.replace("\"name\": \"ACME\"", "\"nmae\": \"ACME\""));
    assert!(nested.contains("`vendor.nmae` is not a field"), "{nested}");

    let no_document = corpus(&[("b1.json", good)]);
    let error = eval::load::<Bill>(&no_document).unwrap_err().to_string();
    assert!(error.contains("case b1 has no document"), "{error}");
}

#[tokio::test]
async fn a_case_that_does_not_fit_is_refused_before_any_call() {
    let model = Scripted::new([json!({})]);
    let error = Evaluation::new(Extractor::new(model.clone()))
        .run::<Receipt>(vec![Case::new(
            Document::text("r").with_id("r-7"),
            json!({"vendor": "A", "total": 1}),
        )])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("case r-7") && error.contains("`date` is missing"), "{error}");
    assert_eq!(model.calls(), 0);
}

#[test]
fn the_blocking_twin_scores_as_the_async_run_does_and_refuses_a_runtime() {
    let truth = json!({"vendor": "Acme", "total": 12.5, "date": "2026-03-01"});
    let reply = json!({"vendor": "Acme", "total": 12.0, "date": "2026-03-01"});
    let evaluation = Evaluation::new(Extractor::new(Scripted::new([reply])));
    let card = evaluation
        .run_blocking::<Receipt>(vec![Case::new(Document::text("receipt"), truth.clone())])
        .unwrap();
    assert_eq!(card.documents_verdict(), Verdict::WrongAccepted, "12.0 is not 12.5: {card}");

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let inside = runtime.block_on(async {
        Evaluation::new(Extractor::new(Scripted::new([json!({})])))
            .run_blocking::<Receipt>(vec![Case::new(Document::text("receipt"), truth)])
    });
    match inside {
        Err(extract::Error::Config(message)) => {
            assert!(
                message.contains("a blocking evaluation") && message.contains(".run(..).await"),
                "{message}"
            )
        }
        other => panic!("a blocking call inside a runtime must be refused: {other:?}"),
    }
}
