//! The desk in a real browser: Debian's chromium, headless, driven over
//! WebDriver by chromedriver (`fantoccini`). The test starts chromedriver
//! on a free port and kills it at the end; without `/usr/bin/chromedriver`
//! it fails, saying what to install.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::{one, recorded, start};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// chromedriver, running on a port of its own; killed when dropped.
struct Driver {
    child: Child,
    port: u16,
    profile: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts chromedriver and waits until it accepts connections.
fn driver() -> Driver {
    for (path, what) in [(CHROMEDRIVER, "chromedriver"), (CHROMIUM, "chromium")] {
        assert!(
            Path::new(path).exists(),
            "the desk's browser tests need {what} at {path}: apt-get install chromium chromium-driver"
        );
    }
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let profile = std::env::temp_dir().join(format!("extract-desk-chromium-{}-{port}", std::process::id()));
    let driver = Driver { child, port, profile };
    // Readiness, not timing: chromedriver takes a moment to listen.
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "chromedriver did not listen on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    driver
}

/// A headless chromium session (as root it needs --no-sandbox; the
/// background-networking flags keep it off a network the tests never use).
async fn browser(driver: &Driver) -> Client {
    let mut capabilities = fantoccini::wd::Capabilities::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1366,900",
                format!("--user-data-dir={}", driver.profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a chromium session through chromedriver")
}

/// The element `selector` finds, once the page has it (a page that never
/// does fails the test, showing what the browser has).
async fn css(client: &Client, selector: &str) -> fantoccini::elements::Element {
    match client.wait().at_most(Duration::from_secs(20)).for_element(Locator::Css(selector)).await {
        Ok(element) => element,
        Err(error) => {
            let url = client.current_url().await.map(|u| u.to_string()).unwrap_or_default();
            let source = client.source().await.unwrap_or_default();
            panic!("{selector}: {error}\nat {url}:\n{source}")
        }
    }
}

/// Replaces what input `name` of the fix form holds.
async fn fill(client: &Client, form: &str, name: &str, text: &str) {
    let input = css(client, &format!("form#{form} [name=\"{name}\"]")).await;
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

async fn press(client: &Client, key: char) {
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down { value: key })
        .then(KeyAction::Up { value: key });
    client.perform_actions(keys).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reviewer_fixes_and_rejects_escalations_in_a_browser() {
    let desk = start("browser", None, |_, _| {}).await;
    let driver = driver();
    let client = browser(&driver).await;
    client.set_window_size(1366, 900).await.unwrap();

    // The queue: every escalation, with its counts; a filter by field.
    client.goto(&desk.url).await.unwrap();
    let links = client.find_all(Locator::Css("a.document")).await.unwrap();
    let mut ids = Vec::new();
    for link in &links {
        ids.push(link.attr("data-document-id").await.unwrap().unwrap());
    }
    assert_eq!(ids, ["inv-001", "inv-003", "inv-004", "inv-005"]);
    assert_eq!(css(&client, "#waiting").await.text().await.unwrap(), "4");
    let field = css(&client, "select[name=\"field\"]").await;
    field.select_by_value("currency").await.unwrap();
    css(&client, "form.filters button").await.click().await.unwrap();
    css(&client, "a.document[data-document-id=\"inv-005\"]").await;
    assert_eq!(client.find_all(Locator::Css("a.document")).await.unwrap().len(), 1);

    // A document's page: its text with the quotes marked and linked to their fields.
    client.goto(&desk.url).await.unwrap();
    css(&client, "a.document[data-document-id=\"inv-001\"]").await.click().await.unwrap();
    css(&client, "main[data-document-id=\"inv-001\"]").await;
    let marks = client.find_all(Locator::Css("pre.text a.mark mark")).await.unwrap();
    assert_eq!(marks.len(), 3, "three Sourced quotes found in the text");
    let total_mark = css(&client, "pre.text a.mark[href=\"#field-total\"]").await;
    let marked = total_mark.text().await.unwrap();
    assert!(marked.starts_with("Total due") && marked.ends_with("140.00 EUR"), "{marked:?}");
    assert_eq!(
        css(&client, "input[name=\"total\"]").await.attr("type").await.unwrap().as_deref(),
        Some("number")
    );
    assert_eq!(
        css(&client, "input[name=\"issue_date\"]").await.attr("type").await.unwrap().as_deref(),
        Some("date")
    );
    assert_eq!(
        css(&client, "select[name=\"currency\"]").await.prop("value").await.unwrap().as_deref(),
        Some("\"EUR\""),
        "an enum is a choice"
    );
    let open = css(&client, "details.trusted").await.prop("open").await.unwrap();
    assert_ne!(open.as_deref(), Some("true"), "trusted fields are editable on request only");

    // A fix that still fails: the violations beside the field, the journal unchanged.
    let before = recorded(&desk.journal);
    fill(&client, "fix", "total", "150").await;
    fill(&client, "fix", "reviewer", "Ada Lovelace").await;
    css(&client, "#record").await.click().await.unwrap();
    css(&client, "#field-total .violation").await;
    let mut shown = Vec::new();
    for violation in client.find_all(Locator::Css("#field-total .violation")).await.unwrap() {
        shown.push(violation.text().await.unwrap());
    }
    assert!(shown.iter().any(|text| text.contains("total.value = 150.00")), "{shown:?}");
    assert!(client.find(Locator::Css("#field-line_items .violation")).await.is_ok());
    assert_eq!(recorded(&desk.journal), before, "a fix that fails records nothing");
    assert_eq!(one::<i64>(&desk.journal, "SELECT count(*) FROM reviews"), 0);

    // The page as a reviewer sees it, scrolled to the refused field, for a look.
    client
        .execute("document.getElementById('field-total').scrollIntoView({block: 'center'})", vec![])
        .await
        .unwrap();
    let png = client.screenshot().await.unwrap();
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("desk-document.png");
    std::fs::write(&shot, &png).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG at {}", shot.display());

    // A passing fix, sent with Ctrl+Enter from the field: recorded, and the next document opens.
    let total = css(&client, "form#fix [name=\"total\"]").await;
    total.clear().await.unwrap();
    total.send_keys(&format!("140{}", Key::Control + &Key::Enter)).await.unwrap();
    css(&client, "main[data-document-id=\"inv-003\"]").await;
    assert!(css(&client, "p.notice").await.text().await.unwrap().contains("inv-001"));
    let remembered = css(&client, "#fix-reviewer").await.prop("value").await.unwrap();
    assert_eq!(remembered.as_deref(), Some("Ada Lovelace"), "the reviewer's name is remembered");
    let (reviewer, at, fix, before, after): (String, String, String, String, String) = {
        let db =
            rusqlite::Connection::open_with_flags(&desk.journal, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        db.query_row(
            "SELECT reviewer, reviewed_at, fix, fields_before, fields_after FROM reviews WHERE document = 'inv-001'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap()
    };
    assert_eq!(reviewer, "Ada Lovelace", "the name typed before the refused fix is kept");
    assert!(at.ends_with('Z') && at.len() == 20, "RFC 3339: {at}");
    let fix: Value = serde_json::from_str(&fix).unwrap();
    assert_eq!(fix, json!({"total": {"value": 140.0}}));
    assert_eq!(
        serde_json::from_str::<Value>(&before).unwrap(),
        json!({"total": {"value": 104.0, "quote": "Total due 140.00 EUR"}})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&after).unwrap(),
        json!({"total": {"value": 140.0, "quote": "Total due 140.00 EUR"}})
    );
    let outcome: (String, i64) = {
        let db =
            rusqlite::Connection::open_with_flags(&desk.journal, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        db.query_row("SELECT state, reviewed FROM outcomes WHERE document = 'inv-001'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
    };
    assert_eq!(outcome, ("valid".to_string(), 1), "a reviewed, valid outcome");

    // Keyboard: n to the next document (the PDF without a text layer).
    press(&client, 'n').await;
    css(&client, "main[data-document-id=\"inv-004\"]").await;
    css(&client, "iframe.pdf").await;
    let quotes = client.find_all(Locator::Css("ul.quotes li")).await.unwrap();
    assert_eq!(quotes.len(), 3);
    for quote in quotes {
        assert_eq!(quote.attr("class").await.unwrap().as_deref(), Some("unverified"), "never all failing");
    }
    // Reject it: the source cannot be used.
    fill(&client, "reject", "reason", "scan unreadable, ask the vendor for a copy").await;
    fill(&client, "reject", "reviewer", "Ada Lovelace").await;
    css(&client, "form#reject button").await.click().await.unwrap();
    css(&client, "main[data-document-id=\"inv-005\"]").await;
    assert_eq!(
        one::<String>(&desk.journal, "SELECT reason FROM rejections WHERE document = 'inv-004'"),
        "scan unreadable, ask the vendor for a copy"
    );
    // p goes back to the previous waiting document.
    press(&client, 'p').await;
    css(&client, "main[data-document-id=\"inv-003\"]").await;

    client.goto(&desk.url).await.unwrap();
    assert_eq!(css(&client, "#waiting").await.text().await.unwrap(), "2");
    assert_eq!(css(&client, "#reviewed").await.text().await.unwrap(), "1");
    assert_eq!(css(&client, "#rejected").await.text().await.unwrap(), "1");
    client.close().await.unwrap();
    drop(driver);
}
