//! The review desk (feature `desk`): in a real browser (Debian's chromium,
//! driven over WebDriver by chromedriver, which the test starts itself), and
//! over real sockets on 127.0.0.1 for what a browser would hide (the
//! token, the CSRF check, escaping, the body cap). Each test runs the
//! scripted invoices of `support::desk_run` into a journal of its own and
//! starts a desk on a free port; the journal is read back with SQLite to
//! see what was recorded.

#[path = "../support/mod.rs"]
mod support;

mod browser;
mod corrections;
mod http;
mod mounted;

use std::path::{Path, PathBuf};

use extract::Document;
use extract::desk::Desk;

use support::desk_run::{self, Invoice};

/// A desk serving a fresh run's journal on a free port of 127.0.0.1.
pub struct Started {
    pub url: String,
    pub address: std::net::SocketAddr,
    pub journal: PathBuf,
    pub documents: Vec<Document>,
}

/// Runs the scripted invoices into a new journal for test `name` and serves
/// a desk on it (with `token`, if given), extra documents added.
pub async fn start(name: &str, token: Option<&str>, edit: impl FnOnce(&Path, &mut Vec<Document>)) -> Started {
    let journal = support::invoices::temp_journal("desk", name);
    let mut documents = desk_run::run(&journal, &desk_run::pdf_bytes()).await;
    edit(&journal, &mut documents);
    let mut desk = Desk::<Invoice>::new(&journal, documents.clone()).unwrap();
    if let Some(token) = token {
        desk = desk.token(token);
    }
    let serving = desk.bind("127.0.0.1:0").await.unwrap();
    let (url, address) = (serving.url(), serving.address());
    tokio::spawn(serving.run());
    Started { url, address, journal, documents }
}

/// What the journal holds of reviews, rejections and outcomes, as text: a
/// refused request must leave it exactly as it was.
pub fn recorded(journal: &Path) -> String {
    let db =
        rusqlite::Connection::open_with_flags(journal, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut all = String::new();
    for query in [
        "SELECT seq, document, content, fix, reviewer, reviewed_at, fields_before, fields_after, overrode FROM reviews ORDER BY seq",
        "SELECT seq, document, content, reviewer, rejected_at, reason FROM rejections ORDER BY seq",
        "SELECT document, content, state, packet, reviewed FROM outcomes ORDER BY document",
        "SELECT id, content, state FROM documents ORDER BY id",
    ] {
        let mut select = db.prepare(query).unwrap();
        let columns = select.column_count();
        let rows = select
            .query_map([], |row| {
                let cells: Vec<String> = (0..columns)
                    .map(|i| row.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}")))
                    .collect::<Result<_, _>>()?;
                Ok(cells.join("|"))
            })
            .unwrap();
        for row in rows {
            all.push_str(&row.unwrap());
            all.push('\n');
        }
        all.push_str("--\n");
    }
    all
}

/// One value of the journal: the first column of the first row of `query`.
pub fn one<T: rusqlite::types::FromSql>(journal: &Path, query: &str) -> T {
    let db =
        rusqlite::Connection::open_with_flags(journal, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    db.query_row(query, [], |row| row.get(0)).unwrap()
}
