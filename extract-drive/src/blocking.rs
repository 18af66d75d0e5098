//! The one way every blocking twin of an async entry point runs:
//! [`block_on`], on a runtime of its own.

use std::future::Future;

use crate::Error;

/// Runs `future` to its end on a current-thread tokio runtime of its own
/// (timers and I/O enabled), for the blocking twin of an async entry point
/// (`Extractor::extract_blocking`, `Bulk::run_blocking`, ...). `what` names
/// the call and `instead` its async form, for the error a call inside a
/// runtime gets: blocking there would stall the runtime's thread, so it is
/// refused with [`Error::Config`], never run.
pub fn block_on<F: Future>(what: &str, instead: &str, future: F) -> Result<F::Output, Error> {
    Ok(runtime(what, instead)?.block_on(future))
}

/// The runtime [`block_on`] runs on, made for `what` (refused inside a
/// runtime, as [`block_on`] says): for a blocking twin that runs many
/// futures on one runtime, as an iterator of a stream's items does.
pub fn runtime(what: &str, instead: &str) -> Result<tokio::runtime::Runtime, Error> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::config(format!(
            "{what} was called inside a tokio runtime, where it would block the runtime's thread; use \
             `{instead}` there"
        )));
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start a tokio runtime for {what}"), e))
}
