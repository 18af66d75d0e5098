//! A PostgreSQL journal written by an earlier version (migration 1) is
//! brought to today's schema by the first worker that connects and reads
//! back whole. The fixture is `tests/fixtures/journal-postgres-migration-1.sql`.

use extract::testing::Scripted;
use extract::{Bulk, Extractor, Journal, Outcome, Retries};
use serde_json::json;

use crate::support::fixture_run::{self, Receipt};
use crate::support::postgres::PgServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_of_migration_1_migrates_and_reads_back_whole() {
    let server = PgServer::start();
    server.create_database("fixture");
    let dump = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/journal-postgres-migration-1.sql");
    server.sql("fixture", &std::fs::read_to_string(dump).unwrap());
    let versions = "SELECT string_agg(version::text, ',' ORDER BY version) FROM extract_schema";
    assert_eq!(server.sql("fixture", versions), "1");
    let journal = Journal::postgres(server.url("fixture"), "fixture-run");

    // Read alone, without a run: opening migrates it.
    let summary = tokio::task::spawn_blocking({
        let journal = journal.clone();
        move || journal.summary()
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(server.sql("fixture", versions), "1,2");
    assert_eq!((summary.stats.valid(), summary.stats.escalated()), (3, 3), "{:?}", summary.stats);
    let failed: Vec<&str> = summary.failed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(failed, ["failed", "unfinished"]);
    assert_eq!(summary.unfinished, ["batched"]);

    // One word per state, one time type, one set of names.
    assert_eq!(server.count("fixture", "SELECT count(*) FROM extract_outcomes WHERE state = 'valid'"), 3);
    assert_eq!(
        server.sql("fixture", "SELECT string_agg(extract(epoch FROM created_at)::bigint::text, ' ' ORDER BY intent) FROM extract_batches"),
        "1764842400 1764846000 1764849600"
    );
    assert_eq!(
        server.sql("fixture", "SELECT data_type FROM information_schema.columns WHERE table_name = 'extract_reviews' AND column_name = 'reviewed_at'"),
        "timestamp with time zone"
    );
    assert_eq!(
        server.count(
            "fixture",
            "SELECT count(*) FROM extract_replies WHERE part = 0 AND rung = 0 AND NOT cancelled"
        ),
        12
    );

    // A worker resumes the run: the finished documents from their recorded
    // replies, the review applied, only the two failed ones asked again.
    let model =
        Scripted::new([json!({"total": 12.5, "vendor": "ACME"}), json!({"total": 12.5, "vendor": "ACME"})]);
    let report = Bulk::new(Extractor::new(model.clone()).retries(Retries::new(2).unwrap()))
        .concurrency(1)
        .journal(journal)
        .unwrap()
        .run::<Receipt>(fixture_run::documents())
        .await
        .unwrap();
    let attempts: Vec<u32> = model.prompts().iter().map(|p| p.attempt).collect();
    assert_eq!(attempts, [2, 1], "unfinished resumes at attempt 2, failed starts");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    for id in ["valid", "corrected", "reviewed", "unfinished", "failed"] {
        assert!(report.outcomes[id].is_valid(), "{id}");
    }
    let Outcome::Valid(reviewed) = &report.outcomes["reviewed"] else { unreachable!() };
    assert!(reviewed.reviewed());
    assert_eq!(reviewed.value().total, 5.0);
    for id in ["escalated", "desk-fixed", "rejected"] {
        assert!(!report.outcomes[id].is_valid(), "{id}");
    }
}
