//! A desk inside another application: `Desk::router()` nested under
//! `/review` in an axum app that has routes of its own. Every link, form
//! action, asset and redirect of the desk stays under the prefix, its
//! cookies are scoped to it, and the app's own routes are untouched.

use std::net::SocketAddr;

use axum::routing::get;
use extract::desk::Desk;

use crate::http::{csrf_of, get as fetch, post_form, send};
use crate::support::desk_run::{self, Invoice};
use crate::{one, recorded};

/// The scripted run's desk, nested at `/review` in an app on a free port.
async fn mounted(name: &str, token: Option<&str>) -> (SocketAddr, std::path::PathBuf) {
    let journal = crate::support::invoices::temp_journal("desk", name);
    let documents = desk_run::run(&journal, &desk_run::pdf_bytes()).await;
    let mut desk = Desk::<Invoice>::new(&journal, documents).unwrap();
    if let Some(token) = token {
        desk = desk.token(token);
    }
    let app = axum::Router::new()
        .route("/", get(|| async { "the application's own page" }))
        .nest("/review", desk.router().unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (address, journal)
}

/// Every `href`, `src` and `action` of a page.
fn addresses(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in ["href=\"", "src=\"", "action=\""] {
        for piece in page.split(attribute).skip(1) {
            found.push(piece.split('"').next().unwrap().to_string());
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_desk_nested_under_a_prefix_keeps_every_link_form_and_redirect_under_it() {
    let (address, journal) = mounted("mounted", None).await;
    let app = fetch(address, "/").await;
    assert_eq!((app.status, app.body.as_str()), (200, "the application's own page"));

    // The queue is at `/review`: axum's `nest` leaves `/review/` to the app.
    let queue = fetch(address, "/review").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    assert!(queue.body.contains("<strong id=\"waiting\">4</strong> waiting"), "{}", queue.body);
    let page = fetch(address, "/review/document/inv-001").await;
    assert_eq!(page.status, 200, "{}", page.body);
    for body in [&queue.body, &page.body] {
        let all = addresses(body);
        assert!(all.len() > 5, "{all:?}");
        for url in &all {
            let under = url == "/review" || url.starts_with("/review/") || url.starts_with("/review?");
            assert!(under || url.starts_with('#'), "{url} leaves the desk's prefix");
        }
    }
    assert!(queue.body.contains("href=\"/review/document/inv-001\""), "{}", queue.body);
    assert!(page.body.contains("<script src=\"/review/desk.js\" defer></script>"));
    assert!(page.body.contains("action=\"/review/document/inv-001/fix\""));
    for (asset, kind) in [("/review/desk.css", "text/css"), ("/review/desk.js", "text/javascript")] {
        let served = fetch(address, asset).await;
        assert_eq!(served.status, 200, "{asset}");
        assert!(served.header("content-type").unwrap().starts_with(kind), "{asset}");
    }
    // The PDF the page frames, under the prefix too.
    let pdf = fetch(address, "/review/document/inv-004/pdf").await;
    assert_eq!((pdf.status, pdf.header("content-type")), (200, Some("application/pdf")));

    // A passing fix redirects to the next document under the prefix, and
    // its cookie is the desk's alone.
    let fields = [
        ("csrf", csrf_of(&page.body)),
        ("total", "140.00".into()),
        ("total.quote", "Total due 140.00 EUR".into()),
        ("reviewer", "Ada".into()),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let fixed = post_form(address, "/review/document/inv-001/fix", &fields).await;
    assert_eq!(fixed.status, 303, "{}", fixed.body);
    assert_eq!(fixed.header("location"), Some("/review/document/inv-003?recorded=inv-001"));
    assert!(fixed.header("set-cookie").unwrap().contains("; Path=/review;"), "{:?}", fixed.headers);
    assert_eq!(one::<String>(&journal, "SELECT reviewer FROM reviews WHERE document = 'inv-001'"), "Ada");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mounted_desk_without_a_token_answers_loopback_names_only_and_with_one_demands_it() {
    let (address, journal) = mounted("mounted_hosts", None).await;
    for host in ["localhost:1234", "127.0.0.1", "[::1]:80"] {
        let answer = send(address, "GET", "/review", &[("Host", host)], b"").await;
        assert_eq!(answer.status, 200, "{host}");
    }
    let before = recorded(&journal);
    let rebound = send(address, "GET", "/review", &[("Host", "evil.example:1234")], b"").await;
    assert_eq!(rebound.status, 421, "{}", rebound.body);
    assert!(rebound.body.contains("href=\"/review\""), "the way back stays on the desk: {}", rebound.body);
    assert_eq!(recorded(&journal), before);

    let token = "a-token-for-the-mounted-desk";
    let (address, _) = mounted("mounted_token", Some(token)).await;
    assert_eq!(fetch(address, "/review").await.status, 401);
    let opened = fetch(address, &format!("/review/document/inv-001?token={token}")).await;
    assert_eq!(opened.status, 303);
    assert_eq!(opened.header("location"), Some("/review/document/inv-001"));
    assert!(opened.header("set-cookie").unwrap().contains("; Path=/review;"));
    let cookie = format!("extract_desk_token={token}");
    let page = send(address, "GET", "/review/document/inv-001", &[("Cookie", &cookie)], b"").await;
    assert_eq!(page.status, 200, "{}", page.body);
    // The app's own routes are not the desk's to guard.
    assert_eq!(fetch(address, "/").await.status, 200);
}
