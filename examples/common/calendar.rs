//! The corpus's calendar, shared by the program that writes its dates
//! (`make_corpus.rs`) and the scripted model that reads them (`eval.rs`):
//! 2026, a year without 29 February.

/// The months' names, January first.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The months' lengths in 2026.
const LENGTHS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// The (month, day) of day `day_of_year` of 2026 (0 is 1 January; past the
/// year's end it wraps).
#[allow(dead_code)] // the scripted model does not need it
pub fn date_of(day_of_year: u64) -> (u32, u32) {
    let mut left = (day_of_year % 365) as u32;
    for (month, length) in LENGTHS.iter().enumerate() {
        if left < *length {
            return (month as u32 + 1, left + 1);
        }
        left -= length;
    }
    (12, 31)
}

/// The date `days` after (month, day) of 2026, kept inside the year.
#[allow(dead_code)] // the corpus writer does not need it
pub fn add_days((month, day): (u32, u32), days: u32) -> (u32, u32) {
    let before: u32 = LENGTHS[..month as usize - 1].iter().sum();
    date_of(u64::from((before + day - 1 + days).min(364)))
}
