//! Which call of a document's run a reply answers.

use std::num::NonZeroU32;

pub use crate::run::Part;

/// The call a reply answers, within its document (and the document's
/// content): the part of the document it was asked about, the rung of the
/// ladder of models that answered, and the attempt. The journal keys every
/// reply by it, so a run over windows, over a ladder or over streams needs
/// no other schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallKey {
    /// The part of the document the call was about.
    pub part: Part,
    /// The rung of the ladder of models (0: the first model).
    pub rung: u32,
    /// The attempt (1 to 4).
    pub attempt: u32,
}

impl CallKey {
    /// Attempt `attempt` on the whole document, by the first model.
    pub fn whole(attempt: u32) -> CallKey {
        CallKey { part: Part::Whole, rung: 0, attempt }
    }

    /// The key as the journal stores it: part (0 for the whole), rung, attempt.
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn stored(&self) -> (i64, i64, i64) {
        let part = match self.part {
            Part::Whole => 0,
            Part::Window(n) => i64::from(n.get()),
        };
        (part, i64::from(self.rung), i64::from(self.attempt))
    }

    /// The key of a stored part, rung and attempt.
    pub(crate) fn read(part: u32, rung: u32, attempt: u32) -> CallKey {
        let part = NonZeroU32::new(part).map_or(Part::Whole, Part::Window);
        CallKey { part, rung, attempt }
    }
}
