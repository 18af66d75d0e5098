//! A journal written by an earlier version opens with today's code: it is
//! migrated in place (numbered migrations, one vocabulary) and reads back
//! whole. The fixture is `tests/fixtures/journal-sqlite-format-2.db`.

use extract::journal::ReviewDecision;
use extract::testing::Scripted;
use extract::{Bulk, Extractable, Extractor, Journal, Outcome, Retries};
use extract_drive::engine::Engine;
use serde_json::json;

use crate::support::fixture_run::{self, Receipt};

fn one<T: rusqlite::types::FromSql>(path: &std::path::Path, sql: &str) -> T {
    let db = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn a_journal_of_format_2_migrates_and_reads_back_whole() {
    let dir = std::env::temp_dir().join(format!("extract-migrations-{}", std::process::id()));
    let path = fixture_run::copy_of("journal-sqlite-format-2.db", &dir);
    assert_eq!(one::<i64>(&path, "SELECT user_version FROM pragma_user_version"), 2);

    // Read alone, without a run: the summary migrates it and counts every outcome.
    let summary = Journal::sqlite(&path).summary().unwrap();
    assert_eq!(one::<i64>(&path, "SELECT user_version FROM pragma_user_version"), 3);
    assert_eq!(one::<String>(&path, "SELECT value FROM run WHERE key = 'format'"), "3");
    assert_eq!((summary.stats.valid(), summary.stats.escalated()), (4, 2), "{:?}", summary.stats);
    let escalated: Vec<&str> = summary.escalations.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(escalated, ["escalated", "rejected"]);
    let failed: Vec<&str> = summary.failed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(failed, ["failed", "unfinished"]);
    assert_eq!(summary.unfinished, ["batched"]);

    // One word per state, one time format, one set of names.
    assert_eq!(one::<i64>(&path, "SELECT count(*) FROM outcomes WHERE state = 'valid'"), 4);
    assert_eq!(
        one::<i64>(&path, "SELECT count(*) FROM outcomes WHERE state NOT IN ('valid', 'escalated')"),
        0
    );
    assert_eq!(
        one::<String>(
            &path,
            "SELECT group_concat(created_at, ' ') FROM (SELECT created_at FROM batches ORDER BY intent)"
        ),
        "2025-12-04T10:00:00Z 2025-12-04T11:00:00Z 2025-12-04T12:00:00Z"
    );
    assert_eq!(
        one::<String>(&path, "SELECT reviewed_at FROM reviews WHERE reviewer = 'ada'"),
        "2026-12-04T10:00:00Z"
    );
    assert_eq!(
        one::<i64>(&path, "SELECT count(*) FROM replies WHERE part = 0 AND rung = 0 AND cancelled = 0"),
        12
    );

    // Every review and rejection, with who, when and what changed.
    let reviews = Journal::sqlite(&path).reviews().unwrap();
    let by: Vec<(&str, Option<&str>, Option<&str>)> =
        reviews.iter().map(|r| (r.document.as_str(), r.reviewer.as_deref(), r.at.as_deref())).collect();
    assert_eq!(
        by,
        [
            ("reviewed", None, None),
            ("desk-fixed", Some("ada"), Some("2026-12-04T10:00:00Z")),
            ("rejected", Some("grace"), Some("2026-12-04T11:00:00Z")),
        ]
    );
    match &reviews[1].decision {
        ReviewDecision::Fixed { fix, before, after, overrode } => {
            assert_eq!(fix, &json!({"total": 7.0}));
            assert_eq!((before["total"].clone(), after["total"].clone()), (json!(-5.0), json!(7.0)));
            assert_eq!(overrode, &["total: check failed".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&reviews[2].decision, ReviewDecision::Rejected { reason } if reason == "not a receipt"));

    // The message batches as they were left: one collected after a resend,
    // one created and not collected, one intent without an id.
    let mut engine = Engine::open(
        vec![fixture_run::batched()],
        Some(&Journal::sqlite(&path)),
        &Receipt::tool(),
        None,
        None,
    )
    .await
    .unwrap();
    let ledger = engine.batches();
    assert_eq!(ledger.open, [("msgbatch_fixture_2".to_string(), vec![("batched".to_string(), 1)])]);
    assert_eq!(ledger.intents.len(), 1);
    assert_eq!((ledger.intents[0].created_at, ledger.intents[0].requests), (1_764_849_600, 1));
    assert!(ledger.handled.contains(&("msgbatch_fixture_1".to_string(), "batched".to_string())));
    let extractor = Extractor::new(Scripted::new(Vec::<serde_json::Value>::new()));
    let jobs = engine.jobs::<Receipt, _>(&extractor);
    assert_eq!(jobs[0].resends(), 1);
    drop((engine, jobs));

    // A run on it resumes: the finished documents from their recorded
    // replies, the reviews applied, and only the two failed ones asked again
    // (the unfinished one at its second attempt).
    let model =
        Scripted::new([json!({"total": 12.5, "vendor": "ACME"}), json!({"total": 12.5, "vendor": "ACME"})]);
    let report = Bulk::new(Extractor::new(model.clone()).retries(Retries::new(2).unwrap()))
        .concurrency(1)
        .journal(&path)
        .unwrap()
        .run::<Receipt>(fixture_run::documents())
        .await
        .unwrap();
    let attempts: Vec<u32> = model.prompts().iter().map(|p| p.attempt).collect();
    assert_eq!(attempts, [2, 1], "unfinished resumes at attempt 2, failed starts");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    for id in ["valid", "corrected", "reviewed", "desk-fixed", "unfinished", "failed"] {
        assert!(report.outcomes[id].is_valid(), "{id}");
    }
    for (id, total) in [("reviewed", 5.0), ("desk-fixed", 7.0)] {
        let Outcome::Valid(valid) = &report.outcomes[id] else { unreachable!() };
        assert!(valid.reviewed(), "{id}");
        assert_eq!(valid.value().total, total, "{id}");
    }
    assert!(!report.outcomes["escalated"].is_valid());
    assert_eq!(report.asked_again, 0, "no content changed");
    let _ = std::fs::remove_dir_all(&dir);
}
