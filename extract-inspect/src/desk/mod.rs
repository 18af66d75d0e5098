//! The review desk (feature `desk`): a run's escalations served to
//! reviewers in a browser, over the run's journal. A queue of the escalated
//! documents nobody has reviewed yet; for each, the document with its
//! quotes highlighted, the fields a reviewer can trust and those that
//! failed, and a form whose inputs follow the schema. A fix is a merge patch
//! over the last output held to all three layers exactly as
//! [`review`](fn@crate::review) does; a passing one is recorded in the journal
//! (who, when, the fields before and after) and counts as a reviewed
//! outcome. A reviewer can also reject a document whose source is unusable.
//!
//! The desk reads stored outcomes: it needs neither the model nor the run's
//! instructions. It binds 127.0.0.1 unless given another address, which then
//! needs an access token; every form carries a CSRF token; every string from
//! a model or a document is escaped; the pages load nothing from outside
//! and work without JavaScript.
//!
//! `server.rs` holds the routes, `pages.rs` the HTML (maud templates; the
//! style sheet and script are the files in `assets/`), `form.rs` the schema's
//! inputs and the form's merge patch, `security.rs` the tokens and headers.

mod form;
mod pages;
mod security;
mod server;

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::{Document, Error, Extractable, Journal};
use extract_drive::journal::DeskJournal;

/// The address [`Desk::serve`] is usually given: loopback, port 8088.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8088";

/// The largest request body the desk reads (a fix form of a large invoice
/// is a few kilobytes); a larger one is refused with 413.
pub const BODY_LIMIT: usize = 256 * 1024;

/// A review desk over one run's journal and its documents, for the type
/// `T` the run extracted.
///
/// ```no_run
/// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
/// # struct Invoice { total: f64 }
/// # async fn open(documents: Vec<extract::Document>) -> Result<(), extract::Error> {
/// let desk = extract::desk::Desk::<Invoice>::new("runs/march.db", documents)?; // a journal, its documents
/// desk.serve("127.0.0.1:8088").await?;                                        // until the process ends
/// # Ok(()) }
/// ```
pub struct Desk<T> {
    journal: DeskJournal,
    documents: BTreeMap<String, Document>,
    token: Option<String>,
    _type: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Desk<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a credential: never shown.
        f.debug_struct("Desk")
            .field("journal", &self.journal.path())
            .field("documents", &self.documents.len())
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl<T: Extractable + Send + Sync + 'static> Desk<T> {
    /// A desk over `journal` (a path is an SQLite journal), which must be a
    /// journal of `T`'s runs, and the run's `documents` (matched to the
    /// journal by id; the desk shows them and checks quotes against them).
    /// `Err` names the journal when it is missing, not ours or of another
    /// type, and the id when two documents share one.
    pub fn new(
        journal: impl Into<Journal>,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<Desk<T>, Error> {
        let journal = DeskJournal::open(&journal.into(), &T::tool())?;
        let mut by_id = BTreeMap::new();
        for document in documents {
            let id = document.id().into_owned();
            if by_id.insert(id.clone(), document).is_some() {
                return Err(Error::config(format!(
                    "two documents given to the desk have the id {}: give each its own with Document::with_id",
                    crate::quote_prefix(&id)
                )));
            }
        }
        Ok(Desk { journal, documents: by_id, token: None, _type: PhantomData })
    }

    /// Requires `token` of every request: opened once as
    /// `http://HOST:PORT/?token=TOKEN` (the desk then keeps it in a
    /// cookie), or sent as `Authorization: Bearer TOKEN`. Needed to serve
    /// an address other than loopback; at least 16 characters.
    pub fn token(mut self, token: impl Into<String>) -> Desk<T> {
        self.token = Some(token.into());
        self
    }

    /// Binds `address` (`"127.0.0.1:0"` takes a free port) and returns the
    /// desk ready to [`run`](Serving::run), with the address it has.
    /// `Err` when the address is not loopback and the desk has no
    /// [`token`](Desk::token), or when it cannot be bound.
    pub async fn bind(self, address: &str) -> Result<Serving, Error> {
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host(address)
            .await
            .map_err(|e| Error::io(format!("the desk cannot resolve the address {address}"), e))?
            .collect();
        security::check_binding(&addresses, self.token.as_deref(), address)?;
        let listener = tokio::net::TcpListener::bind(addresses.as_slice())
            .await
            .map_err(|e| Error::io(format!("the desk cannot listen on {address}"), e))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::io(format!("the desk cannot read the address it bound ({address})"), e))?;
        Ok(Serving { listener, router: self.routes(Some(local))?, address: local })
    }

    /// The desk as an axum 0.8 [`Router`](axum::Router), to serve inside
    /// another application: `app.nest("/review", desk.router()?)` serves
    /// the queue at `/review`, and every link, form and redirect of the
    /// desk stays under `/review`. The application owns the listener, so
    /// the desk cannot check it is loopback: without a [`token`](Desk::token)
    /// it answers only requests whose `Host` is a loopback name (any port);
    /// give it a token when the application serves other hosts.
    ///
    /// ```no_run
    /// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
    /// # struct Invoice { total: f64 }
    /// # async fn mount(documents: Vec<extract::Document>) -> Result<(), Box<dyn std::error::Error>> {
    /// let desk = extract::desk::Desk::<Invoice>::new("runs/march.db", documents)?.token("a-long-random-secret");
    /// let app = axum::Router::new().nest("/review", desk.router()?);
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:3000").await?;
    /// axum::serve(listener, app).await?;
    /// # Ok(()) }
    /// ```
    pub fn router(self) -> Result<axum::Router, Error> {
        security::check_binding(&[], self.token.as_deref(), "an application's router")?;
        self.routes(None)
    }

    /// The routes over this desk's state; `address`: the listener's, when the desk owns it.
    fn routes(self, address: Option<SocketAddr>) -> Result<axum::Router, Error> {
        let state = server::State::<T> {
            journal: self.journal,
            documents: self.documents,
            fields: form::fields_of(&T::tool().input_schema),
            csrf: security::random_token()?,
            token: self.token,
            address,
            _type: PhantomData,
        };
        Ok(server::router(Arc::new(state)))
    }

    /// Serves the desk on `address` until the process ends (see [`bind`](Desk::bind)).
    pub async fn serve(self, address: &str) -> Result<(), Error> {
        self.bind(address).await?.run().await
    }
}

/// A desk bound to its address, ready to serve.
pub struct Serving {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    address: SocketAddr,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving").field("address", &self.address).finish()
    }
}

impl Serving {
    /// The address the desk listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://ADDRESS/`, the queue's page.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// Serves requests until the process ends (or the future is dropped).
    pub async fn run(self) -> Result<(), Error> {
        let address = self.address;
        axum::serve(self.listener, self.router)
            .await
            .map_err(|e| Error::io(format!("the desk on {address} stopped"), e))
    }
}
