//! The journal as a source: the run report built from a journal alone,
//! after the run, equals the one built from the run's own report; a review
//! recorded in it counts there too.

use std::path::Path;

use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::report::Report;
use extract::{Bulk, BulkReport, Document, Escalation, Extractor, Journal, Outcome, Retries};
use serde_json::{Value, json};

use crate::support::invoices::{self, Invoice};

/// Reads `amounts 1 2 total 3`; `stuck` drops the last amount every time.
#[derive(Clone)]
struct Reader;

impl Model for Reader {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            let text = prompt.document.searchable_text().unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().collect();
            let total_at = words.iter().position(|w| *w == "total").unwrap();
            let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
            if text.contains("stuck") {
                amounts.pop();
            }
            let items: Vec<Value> = amounts.iter().map(|a| json!({"amount": a})).collect();
            Ok(Reply::tool_call(
                json!({"line_items": items, "total": words[total_at + 1].parse::<f64>().unwrap()}),
            ))
        })
    }
}

fn documents() -> Vec<Document> {
    (0..8)
        .map(|i| {
            let stuck = if i % 3 == 0 { " stuck" } else { "" };
            Document::text(format!("amounts {i} 1 2 total {}{stuck}", i + 3)).with_id(format!("doc-{i}"))
        })
        .collect()
}

fn bulk(path: &Path) -> Bulk<Reader> {
    Bulk::new(Extractor::new(Reader).retries(Retries::new(2).unwrap())).journal(path).unwrap()
}

fn escalations(report: &BulkReport<Invoice>) -> Vec<(&str, &Escalation)> {
    report
        .outcomes
        .iter()
        .filter_map(|(id, outcome)| match outcome {
            Outcome::Escalated(e) => Some((id.as_str(), e)),
            Outcome::Valid(_) => None,
        })
        .collect()
}

#[tokio::test]
async fn the_run_report_built_from_the_journal_alone_equals_the_runs_own() {
    let path = invoices::temp_journal("outcomes", "report");
    let report = bulk(&path).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(report.stats.escalated(), 3);

    // No documents, no type, no model: the journal alone.
    let run = Journal::sqlite(&path).summary().unwrap();
    assert_eq!(run.stats.to_string(), report.stats.to_string(), "the same figures");
    let read: Vec<(&str, &Escalation)> = run.escalations.iter().map(|(id, e)| (id.as_str(), e)).collect();
    assert_eq!(read, escalations(&report), "every escalation, whole: chain, violations, partial, hint");
    assert!(run.failed.is_empty() && run.unfinished.is_empty());
    let from_journal = Report::new(&run.stats).title("March").escalations(read).html();
    let from_run = Report::new(&report.stats).title("March").escalations(escalations(&report)).html();
    assert_eq!(from_journal, from_run, "the same page");

    // A review recorded in the journal counts there: valid, reviewed, out of the escalations.
    let fix = json!({"line_items": [{"amount": 0.0}, {"amount": 1.0}, {"amount": 2.0}]});
    let document = documents().remove(0);
    bulk(&path).record_review::<Invoice>(document, fix).await.unwrap().unwrap();
    let run = Journal::sqlite(&path).summary().unwrap();
    assert_eq!((run.stats.reviewed(), run.stats.escalated(), run.escalations.len()), (1, 2, 2));
    let later = bulk(&path).run::<Invoice>(documents()).await.unwrap();
    assert_eq!(run.stats.to_string(), later.stats.to_string(), "as a later run counts it");
}
