//! The retry budget: [`Retries`].

use std::fmt;

/// How many corrections a run may ask for after its first attempt: 1, 2 or 3.
///
/// More than three retries only spends money on an error that feedback is not
/// fixing; a systematic error needs a change of schema or prompt instead.
///
/// ```
/// use extract::Retries;
///
/// let retries = Retries::new(3)?;
/// assert_eq!(retries.get(), 3);
/// assert_eq!(retries.attempts(), 4);
/// assert_eq!(Retries::default().get(), 2);
/// assert!(Retries::new(0).is_err());
/// assert!(Retries::new(4).is_err());
/// # Ok::<(), extract::run::RetriesError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Retries(u32);

impl Retries {
    /// The smallest budget the contract allows.
    pub const MIN: u32 = 1;
    /// The largest budget the contract allows.
    pub const MAX: u32 = 3;

    /// A budget of `retries` corrections; only 1, 2 and 3 are accepted.
    pub const fn new(retries: u32) -> Result<Retries, RetriesError> {
        if retries >= Retries::MIN && retries <= Retries::MAX {
            Ok(Retries(retries))
        } else {
            Err(RetriesError { requested: retries })
        }
    }

    /// The number of retries.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The number of model calls a run may make: the retries plus the first attempt.
    pub const fn attempts(self) -> u32 {
        self.0 + 1
    }
}

impl Default for Retries {
    /// Two retries: three attempts in all.
    fn default() -> Retries {
        Retries(2)
    }
}

impl TryFrom<u32> for Retries {
    type Error = RetriesError;
    fn try_from(retries: u32) -> Result<Retries, RetriesError> {
        Retries::new(retries)
    }
}

impl fmt::Display for Retries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} retries", self.0)
    }
}

/// A retry budget outside 1..=3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "retries must be 1, 2 or 3, not {requested}: a systematic error needs a schema or prompt change, not more retries"
)]
pub struct RetriesError {
    /// The number that was asked for.
    pub requested: u32,
}
