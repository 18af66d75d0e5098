//! The retry policy, without I/O: a [`Run`] builds each attempt's
//! [`Prompt`], judges each reply with the validators, and ends in an
//! [`Outcome`]: `Valid`, or `Escalated` with the whole error chain and a fix
//! hint. [`Stats`] folds outcomes over many documents (the HTML report
//! over them is `inspect`'s, a layer above). Every driver (async,
//! blocking, batch) drives this same machine; nothing here awaits, spawns or
//! touches a file or a socket.

mod hint;
mod outcome;
mod patch;
mod policy;
mod prompt;
mod retries;
pub mod review;
mod stats;
mod windowed;
pub mod windows;

pub use outcome::{Escalation, FailedAttempt, Outcome, Partial, Reason, Validated};
pub use patch::{Corrections, PATCH_TOOL, apply_patch, patch_tool};
pub use policy::{Next, Run};
pub use prompt::{
    Block, BlockKind, Correction, FEEDBACK_PER_FINGERPRINT, Prompt, SYSTEM_INSTRUCTIONS, Windowed,
};
pub use prompt::{answer_as_json, answer_through_tool, system_answering_through_tool};
pub use retries::{Retries, RetriesError};
pub use review::review;
pub use stats::{Dominant, Stats};
pub use stats::{Facts, ModelSpend, ParetoRow, Spend, percent};
pub use windows::{Part, Window, Windows};
