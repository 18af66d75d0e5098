//! Bad input and faults on the shared journal: clear errors before any
//! model call, the password in none of them; a newer schema refused; a
//! connection lost mid-run; the review queue and reports on PostgreSQL.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use extract::journal::JournalProblem;
use extract::model::{Model, ModelFuture, Prompt, Reply};
use extract::{Bulk, Document, Error, ErrorKind, Extractable, Extractor, Journal, Retries};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::support::invoices::{Invoice, marked_invoices};
use crate::support::postgres::PgServer;
use crate::support::tracing_capture::Capture;

/// A model that reads `amounts 1 2 total 3` from the document (`stuck`
/// always drops the last amount, so the document escalates), after
/// `latency`, counting its calls.
#[derive(Clone, Default)]
struct Counted {
    calls: Arc<AtomicUsize>,
    latency: Duration,
}

impl Model for Counted {
    fn call<'a>(&'a self, prompt: &'a Prompt) -> ModelFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.latency).await;
            let text = prompt.document.searchable_text().unwrap_or_default();
            if !text.starts_with("amounts") {
                return Ok(Reply::tool_call(json!({"total": 3.0})));
            }
            let words: Vec<&str> = text.split_whitespace().collect();
            let total_at = words.iter().position(|w| *w == "total").unwrap();
            let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
            if text.contains("stuck") {
                amounts.pop();
            }
            let items: Vec<_> = amounts.iter().map(|a| json!({"amount": a})).collect();
            Ok(Reply::tool_call(
                json!({"line_items": items, "total": words[total_at + 1].parse::<f64>().unwrap()}),
            ))
        })
    }
}

fn documents(count: usize) -> Vec<Document> {
    marked_invoices(count, 4, " stuck")
}

fn bulk(model: &Counted, journal: Journal) -> Bulk<Counted> {
    Bulk::new(Extractor::new(model.clone()).retries(Retries::new(1).unwrap()))
        .concurrency(3)
        .journal(journal)
        .unwrap()
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Receipt {
    total: f64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_databases_and_runs_are_clear_errors_before_any_model_call() {
    let server = PgServer::start();
    server.create_database("faults");
    let model = Counted::default();

    // Nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let nowhere = format!("postgres://postgres:s3cret-nowhere@127.0.0.1:{closed}/faults");
    let error =
        bulk(&model, Journal::postgres(&nowhere, "march")).run::<Invoice>(documents(4)).await.unwrap_err();
    let shown = error.to_string();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(shown.contains("cannot connect") && shown.contains(&format!("127.0.0.1:{closed}")), "{shown}");
    assert!(!shown.contains("s3cret-nowhere") && !format!("{error:?}").contains("s3cret-nowhere"), "{shown}");

    // Wrong credentials: the server's refusal, the password nowhere.
    let wrong = format!("postgres://postgres:not-the-password@127.0.0.1:{}/faults", server.port);
    let journal = Journal::postgres(&wrong, "march");
    assert!(!format!("{journal:?}").contains("not-the-password"));
    let error = bulk(&model, journal).run::<Invoice>(documents(4)).await.unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("password authentication failed"), "{shown}");
    assert!(
        !shown.contains("not-the-password") && !format!("{error:?}").contains("not-the-password"),
        "{shown}"
    );
    let source = std::error::Error::source(&error).map(|s| format!("{s:?}")).unwrap_or_default();
    assert!(!source.contains("not-the-password"), "{source}");

    // A database that does not exist.
    let error = bulk(&model, Journal::postgres(server.url("absent"), "march"))
        .run::<Invoice>(documents(4))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("\"absent\" does not exist"), "{error}");
    assert!(!error.to_string().contains(&server.password));

    // A run name in use by another tool.
    let url = server.url("faults");
    let report = bulk(&model, Journal::postgres(&url, "march")).run::<Invoice>(documents(4)).await.unwrap();
    assert_eq!(report.outcomes.len(), 4);
    let calls = model.calls.load(Ordering::SeqCst);
    let other = Bulk::new(Extractor::new(model.clone())).journal(Journal::postgres(&url, "march")).unwrap();
    let error = other.run::<Receipt>([Document::text("total 3").with_id("r")]).await.unwrap_err();
    assert!(error.to_string().contains("was written for the tool `invoice`"), "{error}");
    assert!(error.to_string().contains("not for `receipt`"), "{error}");
    assert!(
        matches!(&error, Error::Journal { problem: JournalProblem::OtherTool { tool, expected_tool, .. }, .. }
            if tool == "invoice" && expected_tool == "receipt"),
        "{error:?}"
    );
    assert_eq!(error.kind(), ErrorKind::Journal);
    assert_eq!(model.calls.load(Ordering::SeqCst), calls, "no model call after any of these errors");
    // Another run in the same database is its own.
    let report = other.journal(Journal::postgres(&url, "april")).unwrap();
    let report = report.run::<Receipt>([Document::text("total 3").with_id("r")]).await.unwrap();
    assert_eq!(report.outcomes.len(), 1);

    // A reader of a run that does not exist says so, and creates nothing.
    let error = bulk(&model, Journal::postgres(&url, "never"))
        .escalations::<Invoice>(documents(2))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("there is no such run in the database"), "{error}");
    assert_eq!(server.count("faults", "SELECT count(*) FROM extract_runs WHERE name = 'never'"), 0);

    // A schema newer than this build's is refused, and left as it was.
    server.sql("faults", "INSERT INTO extract_schema (version) VALUES (999)");
    let error =
        bulk(&model, Journal::postgres(&url, "march")).run::<Invoice>(documents(4)).await.unwrap_err();
    assert!(error.to_string().contains("is of format 999, newer than this version of extract"), "{error}");
    assert!(
        matches!(&error, Error::Journal { problem: JournalProblem::NewerFormat { found: 999, .. }, journal }
            if journal.contains("run \"march\"") && !journal.contains(&server.password)),
        "{error:?}"
    );
    assert_eq!(server.count("faults", "SELECT count(*) FROM extract_schema WHERE version = 999"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_that_start_at_once_migrate_the_schema_once() {
    let server = PgServer::start();
    server.create_database("fresh");
    let url = server.url("fresh");
    let model = Counted::default();
    let runs = (0..4).map(|i| {
        let (model, url) = (model.clone(), url.clone());
        tokio::spawn(async move {
            bulk(&model, Journal::postgres(url, format!("run-{i}")))
                .run::<Invoice>(documents(3))
                .await
                .map(|r| r.outcomes.len())
        })
    });
    for run in runs {
        assert_eq!(run.await.unwrap().unwrap(), 3);
    }
    assert_eq!(
        server.sql("fresh", "SELECT string_agg(version::text, ',' ORDER BY version) FROM extract_schema"),
        "1,2"
    );
    assert_eq!(server.count("fresh", "SELECT count(*) FROM extract_runs"), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_queue_the_summary_and_the_export_read_the_shared_run() {
    let server = PgServer::start();
    server.create_database("reviews");
    let journal = Journal::postgres(server.url("reviews"), "march");
    let model = Counted::default();
    let report = bulk(&model, journal.clone()).run::<Invoice>(documents(8)).await.unwrap();
    assert_eq!((report.stats.valid(), report.stats.escalated()), (6, 2));

    let reader = bulk(&Counted::default(), journal.clone());
    let queue = reader.escalations::<Invoice>(documents(8)).await.unwrap();
    let ids: Vec<&str> = queue.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["inv-00", "inv-04"]);
    let fix = json!({"line_items": [{"amount": 0.0}, {"amount": 1.0}, {"amount": 2.0}]});
    let fixed = reader.record_review::<Invoice>(documents(8).remove(0), fix).await.unwrap().unwrap();
    assert!(fixed.reviewed());

    let summary = journal.summary().unwrap();
    assert_eq!((summary.stats.valid(), summary.stats.escalated()), (7, 1));
    assert_eq!(summary.escalations.len(), 1);
    let reviews: Vec<&str> = summary.reviews.iter().map(|r| r.document.as_str()).collect();
    assert_eq!(reviews, ["inv-00"], "the review is read back from the shared journal");
    let mut lines = Vec::new();
    assert_eq!(journal.export_jsonl(&mut lines).unwrap(), 8);
    let first: serde_json::Value =
        serde_json::from_slice(lines.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!((first["id"].as_str(), first["reviewed"].as_bool()), (Some("inv-00"), Some(true)));

    // A worker that joins counts the review too, without a model call.
    let calls = model.calls.load(Ordering::SeqCst);
    let again = bulk(&model, journal).run::<Invoice>(documents(8)).await.unwrap();
    assert_eq!(again.stats.valid(), 7);
    assert_eq!(model.calls.load(Ordering::SeqCst), calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_for_good_ends_the_worker_with_err_and_keeps_what_was_committed() {
    // Every trace of this process, of every test running now: no password of any server in it.
    let traces = Arc::new(std::sync::Mutex::new(String::new()));
    tracing::subscriber::set_global_default(Capture(traces.clone()))
        .expect("the binary's one global subscriber");
    let server = PgServer::start();
    server.create_database("lost");
    let journal = Journal::postgres(server.url("lost"), "march").reconnect_within(Duration::from_secs(2));
    let model = Counted { latency: Duration::from_millis(30), ..Counted::default() };
    let run = tokio::spawn({
        let model = model.clone();
        let journal = journal.clone();
        async move { bulk(&model, journal).run::<Invoice>(documents(60)).await }
    });
    let replies = "SELECT count(*) FROM extract_replies";
    while server.count("lost", replies) < 10 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.stop();
    let error = run.await.unwrap().unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(error.to_string().contains(&format!("127.0.0.1:{}", server.port)), "{error}");

    // Back up: everything committed is there, and the run resumes from it.
    server.restart();
    let committed = server.count("lost", replies);
    assert!(committed >= 10);
    let calls = model.calls.load(Ordering::SeqCst);
    let report = bulk(&model, journal).run::<Invoice>(documents(60)).await.unwrap();
    assert_eq!(report.outcomes.len(), 60);
    let asked = model.calls.load(Ordering::SeqCst) - calls;
    assert_eq!(asked, server.count("lost", replies) - committed, "nothing committed is asked again");

    let traces = traces.lock().unwrap();
    assert!(traces.contains("trying again"), "the lost connection was retried, and traced");
    assert!(traces.contains(&format!("127.0.0.1:{}", server.port)), "the traces name the database");
    assert!(!traces.contains(&format!("pw-{}-", std::process::id())), "no server's password is traced");
}

/// `text` percent-encoded, every byte but the unreserved ones.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_with_url_and_quote_characters_connects_in_every_form_and_shows_in_none() {
    let server = PgServer::start();
    server.create_database("masks");
    // What ends a URL's parts or a key-value setting, in one password (no
    // `@`, so that the driver also reads it unescaped in a URL).
    let password = format!("pw-{}-QZJ/9?x#K %:W'V\\Z", std::process::id());
    let pieces = ["QZJ", "9?x#K", "%:W", "W'V", "V\\Z"];
    server.sql(
        "postgres",
        &format!("CREATE ROLE masked LOGIN SUPERUSER PASSWORD '{}'", password.replace('\'', "''")),
    );
    let forms = |password: &str| {
        let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
        let escaped: String = password
            .chars()
            .map(|c| if c.is_alphanumeric() { c.to_string() } else { format!("\\{c}") })
            .collect();
        let port = server.port;
        [
            format!("postgres://masked:{password}@127.0.0.1:{port}/masks"),
            format!("postgresql://masked:{}@127.0.0.1:{port}/masks", percent_encoded(password)),
            format!("postgres://masked@127.0.0.1:{port}/masks?password={}", percent_encoded(password)),
            format!("host=127.0.0.1 port={port} user=masked password = '{quoted}' dbname=masks"),
            format!("host=127.0.0.1 port={port} password={escaped} user=masked dbname=masks"),
        ]
    };
    let leak = |shown: &str| pieces.iter().find(|piece| shown.contains(*piece)).copied();
    let model = Counted::default();
    for (n, form) in forms(&password).into_iter().enumerate() {
        let journal = Journal::postgres(&form, format!("form-{n}"));
        for shown in [format!("{journal:?}"), journal.shown()] {
            assert_eq!(leak(&shown), None, "{form} shown as {shown}");
        }
        let report = bulk(&model, journal).run::<Invoice>(documents(1)).await;
        assert!(
            report.is_ok(),
            "{form} connects: {}",
            report.err().map(|e| e.to_string()).unwrap_or_default()
        );
    }
    for form in forms(&format!("{password}-wrong")) {
        let error =
            bulk(&model, Journal::postgres(&form, "wrong")).run::<Invoice>(documents(1)).await.unwrap_err();
        let mut shown = vec![error.to_string(), format!("{error:?}")];
        if let Some(source) = std::error::Error::source(&error) {
            shown.extend([source.to_string(), format!("{source:?}")]);
        }
        assert!(shown[0].contains("password authentication failed"), "{form}: {}", shown[0]);
        for shown in shown {
            assert_eq!(leak(&shown), None, "{form} shown as {shown}");
        }
    }
}
