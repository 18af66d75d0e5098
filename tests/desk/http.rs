//! The desk over real sockets, request by request, as a browser without
//! JavaScript (or an attacker) would send them: the access token, the CSRF
//! check, escaping of hostile ids and quotes, the body cap, and the whole
//! flow as plain forms with redirects.

use std::net::SocketAddr;

use extract::Document;
use extract::desk::{BODY_LIMIT, Desk};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::desk_run::Invoice;
use crate::{one, recorded, start};

/// An HTTP/1.1 answer: status, headers (names lowercased), body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
pub async fn send(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    // The desk's own address as Host, unless the test names another.
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if method == "POST" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // The server may answer (413) before reading a body that is too large, and close.
    let _ = stream.write_all(body).await;
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default().split(' ').nth(1).unwrap_or("0").parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    Answer { status, headers, body: body.to_string() }
}

pub async fn get(address: SocketAddr, path: &str) -> Answer {
    send(address, "GET", path, &[], b"").await
}

/// POSTs `fields` as a form (`application/x-www-form-urlencoded`).
pub async fn post_form(address: SocketAddr, path: &str, fields: &[(&str, &str)]) -> Answer {
    let body =
        fields.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&");
    let content_type = ("Content-Type", "application/x-www-form-urlencoded");
    send(address, "POST", path, &[content_type], body.as_bytes()).await
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The CSRF token a page's forms carry.
pub fn csrf_of(page: &str) -> String {
    let at = page.find("name=\"csrf\" value=\"").expect("a form with a CSRF token") + 19;
    page[at..].split('"').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_without_a_valid_csrf_token_gets_403_and_records_nothing() {
    let desk = start("csrf", None, |_, _| {}).await;
    let page = get(desk.address, "/document/inv-001").await;
    assert_eq!(page.status, 200);
    let csrf = csrf_of(&page.body);
    let before = recorded(&desk.journal);
    let passing = [("total", "140"), ("total.quote", "Total due 140.00 EUR"), ("reviewer", "Mallory")];
    for token in [None, Some("0".repeat(64)), Some(csrf[..63].to_string()), Some(String::new())] {
        let mut fields = passing.to_vec();
        if let Some(token) = &token {
            fields.push(("csrf", token));
        }
        let fix = post_form(desk.address, "/document/inv-001/fix", &fields).await;
        assert_eq!(fix.status, 403, "token {token:?}: {}", fix.body);
        assert!(fix.body.contains("CSRF"), "{}", fix.body);
        let reject =
            post_form(desk.address, "/document/inv-001/reject", &[("reason", "x"), ("reviewer", "M")]).await;
        assert_eq!(reject.status, 403);
    }
    assert_eq!(recorded(&desk.journal), before, "nothing recorded");
    // The same fix with the page's token passes: the 403s were the token's doing.
    let mut fields = passing.to_vec();
    fields.push(("csrf", &csrf));
    let fix = post_form(desk.address, "/document/inv-001/fix", &fields).await;
    assert_eq!(fix.status, 303, "{}", fix.body);
    assert_ne!(recorded(&desk.journal), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_whole_flow_works_as_plain_forms_with_redirects() {
    let desk = start("plain_forms", None, |_, _| {}).await;
    let queue = get(desk.address, "/").await;
    assert!(queue.body.contains("<strong id=\"waiting\">4</strong> waiting"), "{}", queue.body);
    // Filters by fingerprint and by reason, as plain GET forms.
    let missing =
        get(desk.address, "/?reason=&field=&fingerprint=structure+missing_field+at+issue_date").await;
    assert!(missing.body.contains("Showing <span id=\"shown\">1</span> of 4."), "{}", missing.body);
    assert!(missing.body.contains("data-document-id=\"inv-005\""));
    let none = get(desk.address, "/?reason=not_recoverable").await;
    assert!(none.body.contains("Showing <span id=\"shown\">0</span> of 4."));
    // The PDF itself, for the page's frame.
    let pdf = get(desk.address, "/document/inv-004/pdf").await;
    assert_eq!((pdf.status, pdf.header("content-type")), (200, Some("application/pdf")));
    assert!(pdf.body.starts_with("%PDF-"));
    let page = get(desk.address, "/document/inv-001").await;
    let csrf = csrf_of(&page.body);

    // A fix that still fails: 422, the page again with the violation beside its field, nothing recorded.
    let before = recorded(&desk.journal);
    let fields = [
        ("csrf", csrf.as_str()),
        ("total", "150"),
        ("total.quote", "Total due 140.00 EUR"),
        ("reviewer", "Ada"),
    ];
    let refused = post_form(desk.address, "/document/inv-001/fix", &fields).await;
    assert_eq!(refused.status, 422);
    let field = refused.body.split("id=\"field-total\"").nth(1).unwrap().split("</div>").next().unwrap();
    assert!(field.contains("class=\"violation\""), "{field}");
    assert!(field.contains("value=\"150.0\""), "the reviewer's value stays in the input: {field}");
    assert_eq!(recorded(&desk.journal), before);

    // A passing fix: 303 to the next document, which says what was recorded.
    let fields = [
        ("csrf", csrf.as_str()),
        ("total", "140.00"),
        ("total.quote", "Total due 140.00 EUR"),
        ("reviewer", "Ada"),
    ];
    let fixed = post_form(desk.address, "/document/inv-001/fix", &fields).await;
    assert_eq!(fixed.status, 303, "{}", fixed.body);
    assert_eq!(fixed.header("location"), Some("/document/inv-003?recorded=inv-001"));
    let next = get(desk.address, "/document/inv-003?recorded=inv-001").await;
    assert!(next.body.contains("Recorded the fix of document inv-001."));
    let (reviewer, before, after): (String, String, String) = {
        let db = rusqlite::Connection::open(&desk.journal).unwrap();
        db.query_row(
            "SELECT reviewer, fields_before, fields_after FROM reviews WHERE document = 'inv-001'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    assert_eq!(reviewer, "Ada");
    let (before, after): (Value, Value) =
        (serde_json::from_str(&before).unwrap(), serde_json::from_str(&after).unwrap());
    assert_eq!(before["total"]["value"], 104.0);
    assert_eq!(after["total"]["value"], 140.0);
    assert_eq!(before.as_object().unwrap().len(), 1, "only the field that changed: {before}");

    // A rejection without a reason is refused; with one it is recorded.
    let refused =
        post_form(desk.address, "/document/inv-005/reject", &[("csrf", &csrf), ("reviewer", "Ada")]).await;
    assert_eq!(refused.status, 422);
    let fields = [("csrf", csrf.as_str()), ("reviewer", "Ada"), ("reason", "a page is missing")];
    let rejected = post_form(desk.address, "/document/inv-005/reject", &fields).await;
    assert_eq!(rejected.status, 303);
    assert_eq!(
        one::<String>(&desk.journal, "SELECT reason FROM rejections WHERE document = 'inv-005'"),
        "a page is missing"
    );
    let queue = get(desk.address, "/").await;
    assert!(queue.body.contains("<strong id=\"waiting\">2</strong> waiting"), "{}", queue.body);
    assert!(queue.body.contains("<span id=\"reviewed\">1</span> reviewed"));
    assert!(queue.body.contains("<span id=\"rejected\">1</span> rejected"));
    // A document decided is no longer reviewable: 409, nothing recorded.
    let before = recorded(&desk.journal);
    let again = post_form(desk.address, "/document/inv-005/reject", &fields).await;
    assert_eq!(again.status, 409);
    assert_eq!(recorded(&desk.journal), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_ids_quotes_and_text_are_escaped_in_every_context() {
    let hostile_id = "x\"><script>alert(1)</script>";
    let hostile_quote = "<script>alert(\"q\")</script>\" onmouseover=\"alert(2)";
    let desk = start("escaping", None, |journal, documents| {
        // A journal written by another tool (or tampered with): an id and a quote no run of ours writes.
        let db = rusqlite::Connection::open(journal).unwrap();
        let packet: String = db.query_row("SELECT packet FROM outcomes WHERE document = 'inv-001'", [], |r| r.get(0)).unwrap();
        let mut packet: Value = serde_json::from_str(&packet).unwrap();
        packet["last_output"]["total"]["quote"] = Value::String(hostile_quote.into());
        packet["partial"]["failed"]["total"] = serde_json::json!([hostile_quote]);
        packet["fix_hint"] = Value::String(format!("{hostile_quote} & more"));
        db.execute(
            "INSERT INTO documents (id, content, state) SELECT ?1, content, state FROM documents WHERE id = 'inv-001'",
            [hostile_id],
        )
        .unwrap();
        db.execute(
            "INSERT INTO outcomes (document, content, state, packet, attempts, usage, facts)
             SELECT ?1, content, state, ?2, attempts, usage, facts FROM outcomes WHERE document = 'inv-001'",
            rusqlite::params![hostile_id, packet.to_string()],
        )
        .unwrap();
        documents.push(
            Document::text("INVOICE <script>alert(3)</script>\nTotal due 140.00 EUR \"quoted\"").with_id(hostile_id),
        );
    })
    .await;
    let queue = get(desk.address, "/").await;
    let page_path = "/document/x%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E";
    assert!(
        queue.body.contains(&format!("href=\"{page_path}\"")),
        "the id percent-encoded in the link: {}",
        queue.body
    );
    assert!(queue.body.contains("data-document-id=\"x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""));
    let page = get(desk.address, page_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for body in [&queue.body, &page.body] {
        assert!(!body.contains("<script>"), "no script from a model or a document");
        assert!(!body.contains("onmouseover=\""), "no attribute opened by a quote");
        assert_eq!(body.matches("<script").count(), 1, "only the desk's own script tag");
        assert!(body.contains("<script src=\"/desk.js\" defer></script>"));
    }
    assert!(page.body.contains("main data-document-id=\"x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""));
    assert!(page.body.contains("&lt;script&gt;alert(3)&lt;/script&gt;"), "the document's text, escaped");
    assert!(page.body.contains(
        "value=\"&lt;script&gt;alert(&quot;q&quot;)&lt;/script&gt;&quot; onmouseover=&quot;alert(2)\""
    ));
    assert!(page.body.contains("action=\"/document/x%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E/fix\""));
    let policy = page.header("content-security-policy").unwrap();
    assert!(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_over_the_cap_gets_413_and_records_nothing() {
    let desk = start("body_cap", None, |_, _| {}).await;
    let csrf = csrf_of(&get(desk.address, "/document/inv-001").await.body);
    let before = recorded(&desk.journal);
    let reason = "x".repeat(BODY_LIMIT);
    let fields = [("csrf", csrf.as_str()), ("reviewer", "Ada"), ("reason", reason.as_str())];
    let answer = post_form(desk.address, "/document/inv-001/reject", &fields).await;
    assert_eq!(answer.status, 413);
    assert_eq!(recorded(&desk.journal), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_desk_with_a_token_answers_only_requests_that_carry_it() {
    let token = "correct-horse-battery-staple";
    let desk = start("token", Some(token), |_, _| {}).await;
    for path in ["/", "/document/inv-001", "/desk.js", "/?token=wrong-horse-battery-staple"] {
        assert_eq!(get(desk.address, path).await.status, 401, "{path}");
    }
    let bearer = format!("Bearer {token}");
    let answer = send(desk.address, "GET", "/", &[("Authorization", &bearer)], b"").await;
    assert_eq!(answer.status, 200);
    let wrong =
        send(desk.address, "GET", "/", &[("Authorization", "Bearer correct-horse-battery-stapl")], b"").await;
    assert_eq!(wrong.status, 401);
    // Opened once with ?token=, the browser keeps it in a cookie and the address loses it.
    let opened = get(desk.address, &format!("/?token={token}")).await;
    assert_eq!(opened.status, 303);
    assert_eq!(opened.header("location"), Some("/"));
    let cookie = opened.header("set-cookie").unwrap().split(';').next().unwrap().to_string();
    assert!(opened.header("set-cookie").unwrap().contains("HttpOnly"));
    let answer = send(desk.address, "GET", "/document/inv-001", &[("Cookie", &cookie)], b"").await;
    assert_eq!(answer.status, 200);
    // A POST needs the token too, before its CSRF token is looked at.
    let before = recorded(&desk.journal);
    let csrf = csrf_of(&answer.body);
    let fields = [("csrf", csrf.as_str()), ("reviewer", "Eve"), ("reason", "unreadable")];
    assert_eq!(post_form(desk.address, "/document/inv-001/reject", &fields).await.status, 401);
    assert_eq!(recorded(&desk.journal), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn off_loopback_the_desk_refuses_to_serve_without_a_token() {
    let journal = crate::support::invoices::temp_journal("desk", "off_loopback");
    let documents = crate::support::desk_run::run(&journal, &crate::support::desk_run::pdf_bytes()).await;
    let refused =
        Desk::<Invoice>::new(&journal, documents.clone()).unwrap().bind("0.0.0.0:0").await.unwrap_err();
    assert!(refused.to_string().contains("not a loopback address"), "{refused}");
    let short = Desk::<Invoice>::new(&journal, documents).unwrap().token("short").bind("127.0.0.1:0").await;
    assert!(short.unwrap_err().to_string().contains("at least 16"));
    // A file that is no journal is refused by name, and left as it was.
    let other = journal.with_file_name("notes.txt");
    std::fs::write(&other, "not a journal").unwrap();
    let error = Desk::<Invoice>::new(&other, Vec::new()).unwrap_err().to_string();
    assert!(error.contains("notes.txt"), "{error}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "not a journal");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_desk_reads_a_journal_while_another_connection_holds_its_write_lock() {
    let desk = start("busy", None, |_, _| {}).await;
    // Another writer (a run, in WAL mode) in the middle of a transaction.
    let writer = rusqlite::Connection::open(&desk.journal).unwrap();
    writer
        .execute_batch("BEGIN IMMEDIATE; UPDATE documents SET state = state WHERE id = 'inv-002';")
        .unwrap();
    let queue = get(desk.address, "/").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    assert!(queue.body.contains("<strong id=\"waiting\">4</strong> waiting"));
    let page = get(desk.address, "/document/inv-003").await;
    assert_eq!(page.status, 200);
    writer.execute_batch("COMMIT").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_token_the_desk_answers_only_its_own_host() {
    let desk = start("rebinding", None, |_, _| {}).await;
    let port = desk.address.port();
    // A page on another name rebound to 127.0.0.1 (DNS rebinding) sends its own name as Host.
    let rebound = format!("evil.example:{port}");
    for path in ["/", "/document/inv-001", "/document/inv-004/pdf"] {
        let answer = send(desk.address, "GET", path, &[("Host", &rebound)], b"").await;
        assert_eq!(answer.status, 421, "{path}");
        assert!(!answer.body.contains("inv-001"), "nothing of the journal: {}", answer.body);
    }
    let localhost = format!("localhost:{port}");
    assert_eq!(send(desk.address, "GET", "/", &[("Host", &localhost)], b"").await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_document_the_desk_was_not_given_is_listed_but_not_reviewable() {
    let desk = start("not_given", None, |_, documents| documents.retain(|d| d.id() != "inv-005")).await;
    let queue = get(desk.address, "/").await;
    let row = queue.body.split("data-document-id=\"inv-005\"").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(row.contains("not given to the desk"), "{row}");
    let page = get(desk.address, "/document/inv-005").await;
    assert!(page.body.contains("The desk was not given this document"), "{}", page.body);
    let before = recorded(&desk.journal);
    let fields =
        [("csrf", csrf_of(&page.body)), ("issue_date", "2026-03-02".into()), ("reviewer", "Ada".into())];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let answer = post_form(desk.address, "/document/inv-005/fix", &fields).await;
    assert_eq!(answer.status, 404);
    assert!(answer.body.contains("start the desk with the run"), "{}", answer.body);
    assert_eq!(recorded(&desk.journal), before);
}

/// One form field naming a row far past the form's (issue 34, defect 3):
/// refused with 422 naming the input, at once and with nothing recorded;
/// two such POSTs in flight leave the queue answering.
#[tokio::test(flavor = "multi_thread")]
async fn a_row_index_past_the_forms_rows_is_refused_at_once_naming_the_input() {
    let desk = start("rows", None, |_, _| {}).await;
    let page = get(desk.address, "/document/inv-001").await;
    let csrf = csrf_of(&page.body);
    let before = recorded(&desk.journal);
    let hostile = |index: &'static str| {
        let address = desk.address;
        let csrf = csrf.clone();
        tokio::spawn(async move {
            let name = format!("line_items[{index}].description");
            let fields = [
                (name.as_str(), "x"),
                ("line_items~rows", ""),
                ("csrf", csrf.as_str()),
                ("reviewer", "Mallory"),
            ];
            (name.clone(), post_form(address, "/document/inv-001/fix", &fields).await)
        })
    };
    let posts = [hostile("100000000000"), hostile("18446744073709551615")];
    let queue = tokio::time::timeout(std::time::Duration::from_secs(1), get(desk.address, "/"))
        .await
        .expect("the queue answers within a second while hostile POSTs are sent");
    assert_eq!(queue.status, 200);
    for post in posts {
        let (name, answer) = post.await.unwrap();
        assert_eq!(answer.status, 422, "{}", answer.body);
        assert!(answer.body.contains(&name.replace('"', "&quot;")), "the input is named: {}", answer.body);
    }
    assert_eq!(recorded(&desk.journal), before, "nothing recorded");
    // A row the form offers (its blank rows) is read as before.
    let fields = [
        ("total", "140"),
        ("total.quote", "Total due 140.00 EUR"),
        ("csrf", csrf.as_str()),
        ("reviewer", "Ada"),
    ];
    assert_eq!(post_form(desk.address, "/document/inv-001/fix", &fields).await.status, 303);
}

/// The token's redirect goes only to a path of the desk (issue 34, defect 9):
/// `//evil.example/` is another host to a browser.
#[tokio::test(flavor = "multi_thread")]
async fn the_tokens_redirect_never_leaves_the_desk() {
    let token = "correct-horse-battery-staple";
    let desk = start("redirect", Some(token), |_, _| {}).await;
    for (path, to) in [
        (format!("//evil.example/?token={token}"), "/"),
        (format!("/\\evil.example/?token={token}"), "/"),
        (format!("/document/inv-001?token={token}"), "/document/inv-001"),
    ] {
        let answer = get(desk.address, &path).await;
        assert_eq!((answer.status, answer.header("location")), (303, Some(to)), "{path}");
    }
}

/// Documents named `.` and `..` (which a browser collapses as path
/// segments, however escaped) are opened and fixed through the links the
/// desk gives them (issue 34, defect 9).
#[tokio::test(flavor = "multi_thread")]
async fn documents_named_dot_and_dot_dot_can_be_opened_and_fixed() {
    let desk = start("dots", None, |journal, documents| {
        let db = rusqlite::Connection::open(journal).unwrap();
        for id in [".", ".."] {
            db.execute(
                "INSERT INTO documents (id, content, state) SELECT ?1, content, state FROM documents WHERE id = 'inv-001'",
                [id],
            )
            .unwrap();
            db.execute(
                "INSERT INTO outcomes (document, content, state, packet, attempts, usage, facts)
                 SELECT ?1, content, state, packet, attempts, usage, facts FROM outcomes WHERE document = 'inv-001'",
                [id],
            )
            .unwrap();
            let text = documents.iter().find(|d| d.id() == "inv-001").unwrap().searchable_text().unwrap().to_string();
            documents.push(Document::text(text).with_id(id));
        }
    })
    .await;
    let queue = get(desk.address, "/").await;
    for (id, href) in [(".", "/by-id/?id=."), ("..", "/by-id/?id=..")] {
        assert!(queue.body.contains(&format!("data-document-id=\"{id}\" href=\"{href}\"")), "{}", queue.body);
        let page = get(desk.address, href).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains(&format!("main data-document-id=\"{id}\"")), "{}", page.body);
        let action = format!("/by-id/fix?id={id}");
        assert!(page.body.contains(&format!("action=\"{action}\"")), "{}", page.body);
        let csrf = csrf_of(&page.body);
        let fields = [
            ("total", "140"),
            ("total.quote", "Total due 140.00 EUR"),
            ("csrf", csrf.as_str()),
            ("reviewer", "Ada"),
        ];
        let fixed = post_form(desk.address, &action, &fields).await;
        assert_eq!(fixed.status, 303, "{}", fixed.body);
        let reviewed: i64 =
            one(&desk.journal, &format!("SELECT count(*) FROM reviews WHERE document = '{id}'"));
        assert_eq!(reviewed, 1, "{id}");
    }
}

/// A document whose text has pages (form feeds, as a PDF's text layer has):
/// each quote found in it says its page.
#[tokio::test(flavor = "multi_thread")]
async fn a_quote_found_in_a_text_with_pages_says_its_page() {
    let desk = start("pages", None, |_, documents| {
        let first = documents.iter_mut().find(|d| d.id() == "inv-001").unwrap();
        // The same invoice, its lines on a second page.
        let text = first.searchable_text().unwrap().replacen("Issued", "\u{c}Issued", 1);
        *first = Document::text(text).with_id("inv-001").with_title("Fabrikam, March");
    })
    .await;
    let page = get(desk.address, "/document/inv-001").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("found on page 1 at bytes"), "the number and seller, before the form feed");
    assert!(page.body.contains("found on page 2 at bytes"), "the total, after it: {}", page.body);
}
