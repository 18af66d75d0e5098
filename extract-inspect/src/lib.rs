#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
//! Reading a finished run of `extract` (use it through the facade crate
//! `extractable`, library `extract`): what people look at once outcomes exist. The
//! HTML [`Report`] over [`Stats`] and escalations, the
//! evaluation against labelled documents ([`eval`]) and the review desk
//! (`desk`, feature `desk`). They read outcomes (and journals) and nothing
//! below reaches them, so the policy in `run` stays free of pages, and the
//! drivers in `drive` of anything a person reads. The report is a `String`
//! the caller writes where it likes; `eval` reads files only to load a
//! corpus, and only the desk serves a socket.

// The layers below, in scope crate-wide as `crate::Name`.
#[allow(unused_imports)]
use extract_core::*;
#[allow(unused_imports)]
use extract_drive::*;

#[cfg(feature = "desk")]
#[cfg_attr(docsrs, doc(cfg(feature = "desk")))]
pub mod desk;
pub mod eval;
mod html;
mod report;

pub use report::Report;
