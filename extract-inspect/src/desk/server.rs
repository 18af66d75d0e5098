//! The desk's routes: the queue, a document's page (and its PDF), the fix
//! and the rejection (POST, then a redirect to the next document: the flow
//! works with plain forms), the script and the style sheet, behind the
//! access token, the body cap and the security headers.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Form, OriginalUri, Path, Query, Request, State as Shared};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

use super::BODY_LIMIT;
use super::form::{self, Field, Submitted};
use super::pages::{self, DocumentPage, Filters, QueuePage, Site};
use super::security;
use crate::run::review::{patched, review_document};
use crate::{Content, Document, Error, Extractable, Outcome};
use extract_drive::journal::{DeskJournal, Fix, Waiting};

/// The cookie that remembers the reviewer's name between forms.
const REVIEWER_COOKIE: &str = "extract_desk_reviewer";
/// The longest reviewer name and rejection reason the desk records.
const REVIEWER_CHARS: usize = 200;
const REASON_CHARS: usize = 2_000;

/// What every request of one desk shares.
pub(crate) struct State<T> {
    pub journal: DeskJournal,
    pub documents: BTreeMap<String, Document>,
    /// The type's fields, read from its schema once.
    pub fields: Vec<Field>,
    /// The CSRF token every form of this desk carries (new at each start).
    pub csrf: String,
    pub token: Option<String>,
    /// The address the desk listens on: without a token, the only hosts it
    /// answers. `None` when an application serves the desk's router: then
    /// any loopback name.
    pub address: Option<std::net::SocketAddr>,
    pub _type: PhantomData<fn() -> T>,
}

type Desk<T> = Arc<State<T>>;

/// Where the desk is mounted, read off each request: the part of the
/// path an enclosing router took (nested at `/review`: `/review`), found by
/// comparing the request's original path with the one the desk sees.
fn site_of(uri: &Uri, extensions: &Extensions) -> Site {
    let seen = uri.path();
    let original = extensions.get::<OriginalUri>().map_or(seen, |o| o.0.path());
    let base = match original.strip_suffix(seen) {
        Some(base) => base,
        // Nested at `/review`, a request for `/review` reaches the desk as `/`.
        None if seen == "/" => original,
        None => "",
    };
    Site::at(base)
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Site {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(site_of(&parts.uri, &parts.extensions))
    }
}

/// A document's id, from the path (`/document/<id>/...`) or, for an id
/// that cannot be a path segment, the query (`/by-id/...?id=..`).
struct DocumentId(String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for DocumentId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        if let Ok(Path(id)) = Path::<String>::from_request_parts(parts, state).await {
            return Ok(DocumentId(id));
        }
        let query =
            Query::<BTreeMap<String, String>>::try_from_uri(&parts.uri).map(|q| q.0).unwrap_or_default();
        match query.get("id") {
            Some(id) => Ok(DocumentId(id.clone())),
            None => {
                let site = site_of(&parts.uri, &parts.extensions);
                Err(page(
                    StatusCode::NOT_FOUND,
                    pages::message(&site, "No document", "No document is named."),
                ))
            }
        }
    }
}

/// The desk's routes and layers.
pub(crate) fn router<T: Extractable + Send + Sync + 'static>(state: Desk<T>) -> Router {
    let csp = HeaderValue::from_static(security::CONTENT_SECURITY_POLICY);
    let mut router = Router::new()
        .route("/", get(queue::<T>))
        .route("/document/{id}", get(document::<T>))
        .route("/document/{id}/pdf", get(pdf::<T>))
        .route("/document/{id}/fix", post(fix::<T>))
        .route("/document/{id}/reject", post(reject::<T>))
        // The same, for an id that cannot be a path segment (`.`, `..`).
        .route("/by-id/", get(document::<T>))
        .route("/by-id/pdf", get(pdf::<T>))
        .route("/by-id/fix", post(fix::<T>))
        .route("/by-id/reject", post(reject::<T>))
        .route("/desk.js", get(script))
        .route("/desk.css", get(style))
        .layer(middleware::from_fn_with_state(state.clone(), require_token::<T>))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(SetResponseHeaderLayer::if_not_present(header::CONTENT_SECURITY_POLICY, csp));
    for (name, value) in security::hardening() {
        router = router.layer(SetResponseHeaderLayer::overriding(name, value));
    }
    router.with_state(state)
}

/// Every request presents the desk's token when it has one: `?token=` once
/// (kept in a cookie, then the address without it), a cookie or a bearer
/// header. Without a token (loopback only), a request must name the desk's
/// own address as its `Host`: a page elsewhere whose name was rebound to
/// 127.0.0.1 (DNS rebinding) would otherwise read the desk as same-origin.
async fn require_token<T: Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    request: Request,
    next: Next,
) -> Response {
    let site = site_of(request.uri(), request.extensions());
    let Some(expected) = desk.token.as_deref() else {
        let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        let own = match desk.address {
            Some(address) => security::is_own_host(host, address),
            None => security::is_loopback_host(host),
        };
        if !own {
            let said = "This desk answers only requests addressed to its own loopback address.";
            return page(StatusCode::MISDIRECTED_REQUEST, pages::message(&site, "Unknown host", said));
        }
        return next.run(request).await;
    };
    let query =
        Query::<BTreeMap<String, String>>::try_from_uri(request.uri()).map(|q| q.0).unwrap_or_default();
    if let Some(given) = query.get("token") {
        if !security::same_secret(given, expected) {
            return unauthorized(&site);
        }
        let cookie = format!(
            "{}={}; Path={}; HttpOnly; SameSite=Strict",
            security::TOKEN_COOKIE,
            pages::cookie_value(expected),
            site.cookie_path()
        );
        return see_other(&site.redirect(request.uri().path()), &cookie);
    }
    match security::presented(request.headers()) {
        Some(given) if security::same_secret(&given, expected) => next.run(request).await,
        _ => unauthorized(&site),
    }
}

fn unauthorized(site: &Site) -> Response {
    let said = "This desk needs its access token: open the address it printed (with ?token=...), or send \
                Authorization: Bearer.";
    page(StatusCode::UNAUTHORIZED, pages::message(site, "Access token needed", said))
}

/// A page answered with `status`.
fn page(status: StatusCode, page: maud::Markup) -> Response {
    (status, Html(page.into_string())).into_response()
}

/// 303 to `location`, setting `cookie`.
fn see_other(location: &str, cookie: &str) -> Response {
    ([(header::SET_COOKIE, cookie)], Redirect::to(location)).into_response()
}

/// A journal failure as a page that says what failed.
fn failed(site: &Site, error: Error) -> Response {
    let said = error.to_string();
    page(StatusCode::INTERNAL_SERVER_ERROR, pages::message(site, "The journal cannot be read", &said))
}

/// The waiting documents, and the counts of reviewed and rejected ones,
/// read off the async threads.
async fn waiting<T: Send + Sync + 'static>(desk: &Desk<T>) -> Result<(Vec<Waiting>, u64, u64), Error> {
    let desk = desk.clone();
    tokio::task::spawn_blocking(move || desk.journal.waiting())
        .await
        .map_err(|e| Error::WorkerPanicked(format!("the desk's journal reader failed: {e}")))?
}

/// The ids of the waiting documents and document `id` if it waits, read off the async threads.
async fn around<T: Send + Sync + 'static>(
    desk: &Desk<T>,
    id: &str,
) -> Result<(Vec<String>, Option<Waiting>), Error> {
    let (desk, id) = (desk.clone(), id.to_string());
    tokio::task::spawn_blocking(move || desk.journal.around(&id))
        .await
        .map_err(|e| Error::WorkerPanicked(format!("the desk's journal reader failed: {e}")))?
}

async fn queue<T: Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    site: Site,
    Query(filters): Query<Filters>,
) -> Response {
    match waiting(&desk).await {
        Ok((waiting, reviewed, rejected)) => {
            let queue = QueuePage {
                site: &site,
                waiting: &waiting,
                reviewed,
                rejected,
                filters: &filters,
                known: &desk.documents,
            };
            page(StatusCode::OK, queue.render())
        }
        Err(error) => failed(&site, error),
    }
}

/// The notices a redirect after a decision carries.
#[derive(serde::Deserialize, Default)]
struct Notice {
    recorded: Option<String>,
    rejected: Option<String>,
}

async fn document<T: Extractable + Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    site: Site,
    DocumentId(id): DocumentId,
    Query(notice): Query<Notice>,
    headers: axum::http::HeaderMap,
) -> Response {
    let (waiting, entry) = match around(&desk, &id).await {
        Ok(found) => found,
        Err(error) => return failed(&site, error),
    };
    let notice = match (&notice.recorded, &notice.rejected) {
        (Some(done), _) => Some(format!("Recorded the fix of document {done}.")),
        (_, Some(done)) => Some(format!("Recorded the rejection of document {done}.")),
        _ => None,
    };
    let reviewer = security::cookie(&headers, REVIEWER_COOKIE).unwrap_or_default();
    let (Some(entry), Some(at)) = (entry.as_ref(), waiting.iter().position(|w| *w == id)) else {
        return not_waiting(&site, &id);
    };
    let last = last_object(entry);
    let shown = DocumentPage {
        site: &site,
        id: &id,
        entry,
        document: desk.documents.get(&id),
        fields: form::with_extra_keys(&desk.fields, &last),
        values: last.clone(),
        violations: None,
        problem: None,
        csrf: &desk.csrf,
        reviewer: &reviewer,
        neighbours: neighbours(&waiting, at),
        notice,
        reason: "",
    };
    page(StatusCode::OK, shown.render())
}

/// The previous and next waiting documents around `at`, and where it is (1-based, of how many).
fn neighbours(waiting: &[String], at: usize) -> (Option<&str>, Option<&str>, usize, usize) {
    let previous = at.checked_sub(1).map(|i| waiting[i].as_str());
    let next = waiting.get(at + 1).map(String::as_str);
    (previous, next, at + 1, waiting.len())
}

/// The page of a document that does not wait for a reviewer (any more).
fn not_waiting(site: &Site, id: &str) -> Response {
    let said = format!(
        "Document {id} does not wait for a reviewer: it was reviewed or rejected (perhaps by someone else just \
         now), a run changed it, or the journal has no escalation for it. Nothing was recorded."
    );
    page(StatusCode::CONFLICT, pages::message(site, "Not in the queue", &said))
}

fn last_object(entry: &Waiting) -> Map<String, Value> {
    match &entry.escalation.last_output {
        Some(Value::Object(object)) => object.clone(),
        _ => Map::new(),
    }
}

async fn pdf<T: Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    site: Site,
    DocumentId(id): DocumentId,
) -> Response {
    match desk.documents.get(&id).map(Document::content) {
        Some(Content::Pdf { bytes, .. }) => (
            [
                (header::CONTENT_TYPE, "application/pdf"),
                // The browser's own PDF viewer runs in this frame: nothing else is allowed.
                (header::CONTENT_SECURITY_POLICY, "frame-ancestors 'self'"),
            ],
            bytes.clone(),
        )
            .into_response(),
        _ => {
            page(StatusCode::NOT_FOUND, pages::message(&site, "No PDF", "The desk holds no PDF by that id."))
        }
    }
}

/// What a decision (a fix, a rejection) starts with: the CSRF check, then
/// document `id` if it still waits, with the ids of every waiting document
/// and its place among them. `Err` is the page to answer with.
async fn decision_on<T: Send + Sync + 'static>(
    desk: &Desk<T>,
    site: &Site,
    form: &Submitted,
    id: &str,
) -> Result<(Vec<String>, Waiting, usize), Response> {
    if let Some(refused) = csrf_refusal(desk, site, form) {
        return Err(refused);
    }
    let (waiting, entry) = around(desk, id).await.map_err(|e| failed(site, e))?;
    match (entry, waiting.iter().position(|w| w == id)) {
        (Some(entry), Some(at)) => Ok((waiting, entry, at)),
        _ => Err(not_waiting(site, id)),
    }
}

/// The answer once the journal writer has run: the next document when the
/// decision was `said` (recorded), 409 when the document no longer waited.
fn decided(
    recorded: Result<Result<bool, Error>, tokio::task::JoinError>,
    site: &Site,
    waiting: &[String],
    id: &str,
    said: &str,
    reviewer: &str,
) -> Response {
    match recorded {
        Ok(Ok(true)) => after_decision(site, waiting, id, said, reviewer),
        Ok(Ok(false)) => not_waiting(site, id),
        Ok(Err(error)) => failed(site, error),
        Err(error) => {
            failed(site, Error::WorkerPanicked(format!("the desk's journal writer failed: {error}")))
        }
    }
}

/// The 403 page when the form's CSRF token is not this desk's.
fn csrf_refusal(desk: &State<impl Sized>, site: &Site, form: &Submitted) -> Option<Response> {
    match form.get("csrf") {
        Some(given) if security::same_secret(given, &desk.csrf) => None,
        _ => {
            let said = "The form carried no valid CSRF token (it did not come from this desk, or the desk was \
                        restarted since it was opened). Nothing was recorded: reload the page and submit again.";
            Some(page(StatusCode::FORBIDDEN, pages::message(site, "Refused", said)))
        }
    }
}

/// The reviewer's name from the form, or what is wrong with it.
fn reviewer_of(form: &Submitted) -> Result<String, String> {
    let name = form.get("reviewer").unwrap_or_default().trim();
    if name.is_empty() {
        return Err("Give your name as the reviewer: the journal records who decided.".into());
    }
    if name.chars().count() > REVIEWER_CHARS {
        return Err(format!("The reviewer's name has more than {REVIEWER_CHARS} characters."));
    }
    Ok(name.to_string())
}

/// Now, in RFC 3339 (UTC, seconds).
fn now() -> String {
    chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// 303 to the next waiting document after `id` (or the queue), saying what
/// was recorded, and remembering the reviewer's name.
fn after_decision(site: &Site, waiting: &[String], id: &str, said: &str, reviewer: &str) -> Response {
    let next = waiting
        .iter()
        .find(|w| w.as_str() > id)
        .or_else(|| waiting.iter().find(|w| *w != id))
        .map(|w| pages::with_query(&site.document(w, ""), said, id))
        .unwrap_or_else(|| site.queue_with(said, id));
    let cookie = format!(
        "{REVIEWER_COOKIE}={}; Path={}; HttpOnly; SameSite=Strict; Max-Age=31536000",
        pages::cookie_value(reviewer),
        site.cookie_path()
    );
    see_other(&next, &cookie)
}

async fn fix<T: Extractable + Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    site: Site,
    DocumentId(id): DocumentId,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let form = Submitted::new(pairs);
    let (waiting, entry, at) = match decision_on(&desk, &site, &form, &id).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let entry = &entry;
    let Some(document) = desk.documents.get(&id) else {
        return page(StatusCode::NOT_FOUND, pages::missing_document(&site, &id));
    };
    let last = last_object(entry);
    let limit = form::most_rows(&Value::Object(last.clone())) + form::BLANK_ROWS + form::EXTRA_ROWS;
    if let Err(input) = form.rows_within(limit) {
        let said = format!(
            "the input {input:?} names a row past the {limit} this form can have; nothing was recorded"
        );
        return page(StatusCode::UNPROCESSABLE_ENTITY, pages::message(&site, "Fix refused", &said));
    }
    let fields = form::with_extra_keys(&desk.fields, &last);
    let patch = form::patch_of(&fields, &last, &form).unwrap_or_else(|| json!({}));
    let escalation = &entry.escalation;
    let reviewer = reviewer_of(&form);
    // The same three layers as `review::<T>`, against the whole document.
    let result = review_document::<T>(escalation, document, patch.clone());
    let shown = patched(escalation, patch.clone());
    let again = |violations, problem: Option<String>| {
        let refused = DocumentPage {
            site: &site,
            id: &id,
            entry,
            document: Some(document),
            fields: fields.clone(),
            values: shown.as_object().cloned().unwrap_or_default(),
            violations,
            problem,
            csrf: &desk.csrf,
            reviewer: form.get("reviewer").unwrap_or_default(),
            neighbours: neighbours(&waiting, at),
            notice: None,
            reason: "",
        };
        page(StatusCode::UNPROCESSABLE_ENTITY, refused.render())
    };
    let validated = match (result, reviewer.clone()) {
        (Err(violations), reviewer) => return again(Some(violations), reviewer.err()),
        (Ok(_), Err(problem)) => return again(None, Some(problem)),
        (Ok(validated), Ok(_)) => validated,
    };
    let reviewer = reviewer.unwrap_or_default();
    let changed: Vec<String> = patch.as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    let value_of = |output: &Map<String, Value>, key: &str| output.get(key).cloned().unwrap_or(Value::Null);
    let after_object = shown.as_object().cloned().unwrap_or_default();
    let before: Map<String, Value> = changed.iter().map(|k| (k.clone(), value_of(&last, k))).collect();
    let after: Map<String, Value> = changed.iter().map(|k| (k.clone(), value_of(&after_object, k))).collect();
    let mut overrode: Vec<String> = escalation
        .error_chain
        .last()
        .map(|a| a.violations.iter().map(|v| v.fingerprint().to_string()).collect())
        .unwrap_or_default();
    overrode.dedup();
    let at_time = now();
    let outcome: Outcome<T> = Outcome::Valid(validated);
    let recorded = {
        let desk = desk.clone();
        let (id, content, reviewer, at_time) = (id.clone(), entry.content.clone(), reviewer.clone(), at_time);
        tokio::task::spawn_blocking(move || {
            let fix = Fix {
                document: &id,
                content: &content,
                fix: &patch,
                output: shown,
                reviewer: &reviewer,
                at: &at_time,
                before: &before,
                after: &after,
                overrode: &overrode,
            };
            desk.journal.record_fix(fix, &outcome)
        })
        .await
    };
    decided(recorded, &site, &waiting, &id, "recorded", &reviewer)
}

async fn reject<T: Extractable + Send + Sync + 'static>(
    Shared(desk): Shared<Desk<T>>,
    site: Site,
    DocumentId(id): DocumentId,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let form = Submitted::new(pairs);
    let (waiting, entry, at) = match decision_on(&desk, &site, &form, &id).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let entry = &entry;
    let reason = form.get("reason").unwrap_or_default().trim().to_string();
    let problem = match reviewer_of(&form) {
        Err(problem) => Some(problem),
        Ok(_) if reason.is_empty() => {
            Some("Say why the document is rejected: the journal records the reason.".into())
        }
        Ok(_) if reason.chars().count() > REASON_CHARS => {
            Some(format!("The reason has more than {REASON_CHARS} characters."))
        }
        Ok(_) => None,
    };
    if let Some(problem) = problem {
        let last = last_object(entry);
        let shown = DocumentPage {
            site: &site,
            id: &id,
            entry,
            document: desk.documents.get(&id),
            fields: form::with_extra_keys(&desk.fields, &last),
            values: last,
            violations: None,
            problem: Some(problem),
            csrf: &desk.csrf,
            reviewer: form.get("reviewer").unwrap_or_default(),
            neighbours: neighbours(&waiting, at),
            notice: None,
            reason: &reason,
        };
        return page(StatusCode::UNPROCESSABLE_ENTITY, shown.render());
    }
    let reviewer = reviewer_of(&form).unwrap_or_default();
    let recorded = {
        let desk = desk.clone();
        let (id, content, reviewer, reason) = (id.clone(), entry.content.clone(), reviewer.clone(), reason);
        tokio::task::spawn_blocking(move || {
            desk.journal.record_rejection(&id, &content, &reviewer, &now(), &reason)
        })
        .await
    };
    decided(recorded, &site, &waiting, &id, "rejected", &reviewer)
}

async fn script() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], pages::SCRIPT)
}

async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], pages::STYLE)
}
