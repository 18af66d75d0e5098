//! The loop closes: what reviewers did at the desk reads back from the
//! journal ([`Journal::reviews`], a summary's `reviews`) and shows in the
//! run report's section of reviewer corrections; a fixed document counts
//! valid and reviewed.

use extract::journal::ReviewDecision;
use extract::report::Report;
use extract::testing::Scripted;
use extract::{Bulk, Extractor, Journal, Retries};

use crate::http::{csrf_of, get, post_form};
use crate::start;
use crate::support::desk_run::Invoice;

#[tokio::test(flavor = "multi_thread")]
async fn reviewer_corrections_read_back_and_show_in_the_run_report() {
    let desk = start("corrections", None, |_, _| {}).await;
    let csrf = csrf_of(&get(desk.address, "/document/inv-001").await.body);
    let fixes: [(&str, &[(&str, &str)]); 2] = [
        ("inv-001", &[("total", "140"), ("total.quote", "Total due 140.00 EUR")]),
        ("inv-005", &[("issue_date", "2026-03-02"), ("currency", "\"EUR\"")]),
    ];
    for (id, fields) in fixes {
        let mut fields = fields.to_vec();
        fields.extend([("csrf", csrf.as_str()), ("reviewer", "Grace")]);
        let answer = post_form(desk.address, &format!("/document/{id}/fix"), &fields).await;
        assert_eq!(answer.status, 303, "{id}: {}", answer.body);
    }
    let fields = [("csrf", csrf.as_str()), ("reviewer", "Linus"), ("reason", "<b>not an invoice</b>")];
    assert_eq!(post_form(desk.address, "/document/inv-004/reject", &fields).await.status, 303);

    let run = Journal::sqlite(&desk.journal).summary().unwrap();
    assert_eq!(run.stats.valid(), 3, "two reviewed and the one right at once: {}", run.stats);
    let escalated: Vec<&str> = run.escalations.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(escalated, ["inv-003", "inv-004"], "a rejected document stays escalated, without a value");
    assert_eq!(run.reviews.len(), 3);
    assert_eq!(run.reviews, Journal::sqlite(&desk.journal).reviews().unwrap());
    let ReviewDecision::Fixed { after, overrode, .. } = &run.reviews[1].decision else {
        panic!("{:?}", run.reviews)
    };
    assert_eq!(after.keys().collect::<Vec<_>>(), ["issue_date", "currency"], "in the schema's order");
    assert!(overrode.iter().any(|p| p == "structure missing_field at issue_date"), "{overrode:?}");
    let ReviewDecision::Rejected { reason } = &run.reviews[2].decision else { panic!() };
    assert_eq!((run.reviews[2].document.as_str(), reason.as_str()), ("inv-004", "<b>not an invoice</b>"));
    assert_eq!(run.reviews[2].reviewer.as_deref(), Some("Linus"));

    let page = Report::new(&run.stats).reviews(&run.reviews).html();
    let section = page.split("<section id=\"corrections\">").nth(1).expect("a section of corrections");
    let section = section.split("</section>").next().unwrap();
    assert!(section.contains("2 fixes and 1 rejection"), "{section}");
    for field in ["total", "issue_date", "currency"] {
        assert!(
            section.contains(&format!(
                "<tr data-field=\"{field}\"><td><code>{field}</code></td><td class=\"num\">1</td>"
            )),
            "{field}: {section}"
        );
    }
    assert!(section.contains("semantic check_failed at line_items [sum(line_items.amount) == total.value]"));
    assert!(
        section.contains("&lt;b&gt;not an invoice&lt;/b&gt;") && !section.contains("<b>"),
        "escaped: {section}"
    );
    assert!(!Report::new(&run.stats).html().contains("id=\"corrections\""), "no reviews given, no section");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_later_run_on_the_journal_counts_the_desks_decisions() {
    let desk = start("later_run", None, |_, _| {}).await;
    let csrf = csrf_of(&get(desk.address, "/document/inv-004").await.body);
    // The PDF without a text layer: its quotes stay unverified, and the fix of its due date passes.
    let fields = [("csrf", csrf.as_str()), ("due_date", "2026-04-01"), ("reviewer", "Grace")];
    let answer = post_form(desk.address, "/document/inv-004/fix", &fields).await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    let fields = [("csrf", csrf.as_str()), ("reviewer", "Grace"), ("reason", "duplicate of inv-001")];
    assert_eq!(post_form(desk.address, "/document/inv-003/reject", &fields).await.status, 303);

    // The same run again, every reply replayed from the journal: the model is never asked.
    let bulk = || {
        let model = Scripted::new(Vec::<serde_json::Value>::new());
        Bulk::new(Extractor::new(model).retries(Retries::new(1).unwrap()))
            .concurrency(1)
            .journal(&desk.journal)
            .unwrap()
    };
    let report = bulk().run::<Invoice>(desk.documents.clone()).await.unwrap();
    let fixed = report.outcomes["inv-004"].valid().expect("the desk's fix counts");
    assert!(fixed.reviewed());
    assert_eq!(fixed.value().due_date.unwrap().to_string(), "2026-04-01");
    assert!(fixed.sources().iter().all(|s| !s.verified()), "unverified, never failing");
    assert!(!report.outcomes["inv-003"].is_valid(), "a rejected document has no value");
    // The review queue of the API agrees with the desk's.
    let queue = bulk().escalations::<Invoice>(desk.documents.clone()).await.unwrap();
    let ids: Vec<&str> = queue.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["inv-001", "inv-005"]);
}
