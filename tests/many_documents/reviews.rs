//! One rule for every review: a document a reviewer already decided on
//! (fixed, through the API or the desk, or rejected at the desk) takes no
//! second decision, and nothing more is recorded (issue 34, defect 7).

use extract::testing::Scripted;
use extract::{Bulk, Error, Extractor, Retries};
use serde_json::json;

use crate::support::fixture_run::{self, Receipt};

fn count(path: &std::path::Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn document(id: &str) -> extract::Document {
    fixture_run::documents().into_iter().find(|d| d.id() == id).unwrap()
}

#[tokio::test]
async fn a_decided_document_takes_no_second_review_through_the_api() {
    let dir = std::env::temp_dir().join(format!("extract-reviews-{}", std::process::id()));
    let path = fixture_run::copy_of("journal-sqlite-format-2.db", &dir);
    let bulk = Bulk::new(
        Extractor::new(Scripted::new(Vec::<serde_json::Value>::new())).retries(Retries::new(2).unwrap()),
    )
    .journal(&path)
    .unwrap();
    let decisions = "SELECT (SELECT count(*) FROM reviews) + (SELECT count(*) FROM rejections)";
    let before = count(&path, decisions);

    // Rejected at the desk, fixed at the desk, fixed through the API: each refused.
    for id in ["rejected", "desk-fixed", "reviewed"] {
        let refused = bulk.record_review::<Receipt>(document(id), json!({"total": 9.0})).await;
        match refused {
            Err(Error::Config(message)) => {
                assert!(message.contains("already reviewed or rejected") && message.contains(id), "{message}")
            }
            other => panic!("{id}: a second decision was taken: {other:?}"),
        }
    }
    assert_eq!(count(&path, decisions), before, "nothing recorded");

    // An escalated document takes one fix, then no second.
    let first = bulk.record_review::<Receipt>(document("escalated"), json!({"total": 9.0})).await.unwrap();
    assert_eq!(first.unwrap().value().total, 9.0);
    let second = bulk.record_review::<Receipt>(document("escalated"), json!({"total": 10.0})).await;
    assert!(matches!(second, Err(Error::Config(_))), "{second:?}");
    assert_eq!(count(&path, decisions), before + 1);
    assert_eq!(count(&path, "SELECT count(*) FROM waiting"), 0, "nothing waits any more");
    let _ = std::fs::remove_dir_all(&dir);
}
