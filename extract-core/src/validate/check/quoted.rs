//! What a `Sourced` value's quote must show: the value itself, for every
//! kind of value. Text is found ignoring case and runs of whitespace; a
//! number is found when a number written in the text parses to it (`140.00`
//! and `140` for 140.0, `1,234.50` and `1.234,50` for 1234.5); a date when
//! a date written in the text is that day (`2026-03-01`, `1 March 2026`,
//! `March 1, 2026`, `01.03.2026`, `03/01/2026`). The same test, run on the
//! whole document, tells a quote that is only too short (the value is in
//! the document) from a datum the document does not hold.

use std::any::Any;
use std::borrow::Cow;
use std::rc::Rc;
use std::sync::Arc;

/// A `Sourced` value, as far as its quote is concerned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quoted<'v> {
    /// Text: found in the quote ignoring case and whitespace runs.
    Text(&'v str),
    /// A number: some number written in the quote parses to it.
    Number(f64),
    /// A calendar date (year, month, day): some date written in the quote is it.
    Date(i32, u32, u32),
    /// Anything else (a `None`, a derived type, an enum): the quote alone is checked.
    Unchecked,
}

impl<'v> Quoted<'v> {
    /// The kind of `value`: text (`String`, `Box<str>`, `Arc<str>`, `Rc<str>`,
    /// `Cow<str>`), a number of any primitive type (and `Decimal`), a date
    /// (`chrono`'s `NaiveDate`, and the date of a `NaiveDateTime`), each
    /// also inside an `Option`; anything else is unchecked.
    // A downcast to `Box<str>` hands out a `&Box<str>`.
    #[allow(clippy::borrowed_box)]
    pub fn of(value: &'v dyn Any) -> Quoted<'v> {
        macro_rules! kinds {
            ($($ty:ty => $make:expr),* $(,)?) => {
                $(if let Some(v) = value.downcast_ref::<$ty>() {
                    return $make(v);
                }
                if let Some(v) = value.downcast_ref::<Option<$ty>>() {
                    return v.as_ref().map_or(Quoted::Unchecked, $make);
                })*
            };
        }
        kinds!(
            String => |v: &'v String| Quoted::Text(v),
            Box<str> => |v: &'v Box<str>| Quoted::Text(v),
            Arc<str> => |v: &'v Arc<str>| Quoted::Text(v),
            Rc<str> => |v: &'v Rc<str>| Quoted::Text(v),
            Cow<'static, str> => |v: &'v Cow<'static, str>| Quoted::Text(v),
            f64 => |v: &f64| Quoted::Number(*v),
            f32 => |v: &f32| Quoted::Number(f64::from(*v)),
            i8 => |v: &i8| Quoted::Number(f64::from(*v)),
            i16 => |v: &i16| Quoted::Number(f64::from(*v)),
            i32 => |v: &i32| Quoted::Number(f64::from(*v)),
            i64 => |v: &i64| Quoted::Number(*v as f64),
            i128 => |v: &i128| Quoted::Number(*v as f64),
            isize => |v: &isize| Quoted::Number(*v as f64),
            u8 => |v: &u8| Quoted::Number(f64::from(*v)),
            u16 => |v: &u16| Quoted::Number(f64::from(*v)),
            u32 => |v: &u32| Quoted::Number(f64::from(*v)),
            u64 => |v: &u64| Quoted::Number(*v as f64),
            u128 => |v: &u128| Quoted::Number(*v as f64),
            usize => |v: &usize| Quoted::Number(*v as f64),
        );
        #[cfg(feature = "decimal")]
        kinds!(rust_decimal::Decimal => |v: &rust_decimal::Decimal| {
            v.to_string().parse().map_or(Quoted::Unchecked, Quoted::Number)
        });
        #[cfg(feature = "chrono")]
        {
            use chrono::Datelike;
            kinds!(
                chrono::NaiveDate => |v: &chrono::NaiveDate| Quoted::Date(v.year(), v.month(), v.day()),
                chrono::NaiveDateTime => |v: &chrono::NaiveDateTime| Quoted::Date(v.year(), v.month(), v.day()),
            );
        }
        Quoted::Unchecked
    }

    /// Whether `text` shows the value (always, for an unchecked value).
    pub fn occurs_in(&self, text: &str) -> bool {
        match *self {
            Quoted::Text(value) => {
                let value = normalized_lowercase(value);
                value.is_empty() || normalized_lowercase(text).contains(&value)
            }
            Quoted::Number(value) => numbers_in(text).any(|n| same_number(n, value)),
            Quoted::Date(year, month, day) => date_occurs(text, year, month, day),
            Quoted::Unchecked => true,
        }
    }

    /// Whether the value can be looked for at all.
    pub fn is_checked(&self) -> bool {
        !matches!(self, Quoted::Unchecked)
    }

    /// The value as a message shows it.
    pub fn shown(&self) -> String {
        match *self {
            Quoted::Text(value) => crate::quote_prefix(value),
            Quoted::Number(value) => value.to_string(),
            Quoted::Date(year, month, day) => format!("{year:04}-{month:02}-{day:02}"),
            Quoted::Unchecked => String::new(),
        }
    }
}

fn normalized_lowercase(text: &str) -> String {
    super::audit::normalize_whitespace(text).to_lowercase()
}

fn same_number(written: f64, value: f64) -> bool {
    (written - value).abs() <= 1e-9 * value.abs().max(1.0)
}

/// Every number written in `text`, each way it can be read: a run of
/// digits with `,` `.` `'` or a narrow space between them is read with the
/// last of `,` and `.` as the decimal mark, and also, where that mark could
/// as well group thousands (`1,234`, `1.234`), as a whole number. A plain
/// space groups thousands too (`1 250.00`), but two numbers may also stand
/// side by side (`Qty 12 250.00`), so runs are read both ways. A sign right
/// before the run (`-`, `−`, or an opening parenthesis, as accounts write
/// debits) gives its negative too.
fn numbers_in(text: &str) -> impl Iterator<Item = f64> + '_ {
    let mut found = Vec::new();
    for spaces_group in [false, true] {
        scan_numbers(text, spaces_group, &mut found);
    }
    found.into_iter()
}

fn scan_numbers(text: &str, spaces_group: bool, found: &mut Vec<f64>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let digit_at = |k: usize| chars.get(k).is_some_and(|(_, c)| c.is_ascii_digit());
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_ascii_digit() || (i > 0 && chars[i - 1].1.is_ascii_digit()) {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut end = i;
        while end + 1 < chars.len() {
            let c = chars[end + 1].1;
            let separator = matches!(c, ',' | '.' | '\'' | '\u{a0}' | '\u{202f}') && digit_at(end + 2);
            // A space groups thousands only before exactly three digits.
            let space = spaces_group && c == ' ' && (end + 2..end + 5).all(digit_at) && !digit_at(end + 5);
            if c.is_ascii_digit() || separator || space {
                end += 1;
            } else {
                break;
            }
        }
        let stop = chars.get(end + 1).map_or(text.len(), |(at, _)| *at);
        let negative = i > 0 && matches!(chars[i - 1].1, '-' | '\u{2212}' | '(');
        for reading in readings(&text[start..stop]) {
            found.push(reading);
            if negative {
                found.push(-reading);
            }
        }
        i = end + 1;
    }
}

/// The ways one run of digits and separators reads as a number.
fn readings(run: &str) -> Vec<f64> {
    let digits_only = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    let mut out = Vec::new();
    match run.rfind([',', '.']) {
        None => out.extend(digits_only(run).parse::<f64>().ok()),
        Some(mark) => {
            let (whole, fraction) = (&run[..mark], &run[mark + 1..]);
            if let Ok(n) = format!("{}.{}", digits_only(whole), digits_only(fraction)).parse::<f64>() {
                out.push(n);
            }
            // Three digits after the only mark of its kind: it may group thousands.
            let mark_char = run[mark..].chars().next().unwrap_or('.');
            if fraction.len() == 3
                && fraction.chars().all(|c| c.is_ascii_digit())
                && !whole.contains(mark_char)
            {
                out.extend(digits_only(run).parse::<f64>().ok());
            }
        }
    }
    out
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Whether `text` writes the date: each common way of writing it is looked
/// for, lowercased and with whitespace runs as one space, and a match must
/// not run on into more digits (`2026-03-011` is not 2026-03-01).
fn date_occurs(text: &str, year: i32, month: u32, day: u32) -> bool {
    if !(1..=12).contains(&month) {
        return false;
    }
    let text = normalized_lowercase(text);
    let name = MONTHS[month as usize - 1];
    let short = &name[..3];
    let yy = year.rem_euclid(100);
    let numeric = [
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{year}-{month}-{day}"),
        format!("{year:04}/{month:02}/{day:02}"),
        format!("{day:02}.{month:02}.{year}"),
        format!("{day}.{month}.{year}"),
        format!("{day:02}/{month:02}/{year}"),
        format!("{day}/{month}/{year}"),
        format!("{month:02}/{day:02}/{year}"),
        format!("{month}/{day}/{year}"),
        format!("{day:02}-{month:02}-{year}"),
        format!("{day:02}.{month:02}.{yy:02}"),
        format!("{day:02}/{month:02}/{yy:02}"),
        format!("{month:02}/{day:02}/{yy:02}"),
    ];
    let mut written: Vec<String> = numeric.into_iter().collect();
    for month_name in [name, short] {
        for day_text in [day.to_string(), format!("{day:02}"), format!("{day}{}", ordinal(day))] {
            written.push(format!("{day_text} {month_name} {year}"));
            written.push(format!("{day_text}. {month_name} {year}"));
            written.push(format!("{day_text} {month_name}, {year}"));
            written.push(format!("{month_name} {day_text}, {year}"));
            written.push(format!("{month_name} {day_text} {year}"));
            written.push(format!("{month_name}. {day_text}, {year}"));
        }
    }
    written.iter().any(|w| occurs_bounded(&text, w))
}

fn ordinal(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    }
}

/// `needle` in `text`, with no digit or letter right before it nor a digit
/// right after it.
fn occurs_bounded(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_found_as_written() {
        let holds = |text: &str, value: f64| Quoted::Number(value).occurs_in(text);
        assert!(holds("Total due: 140.00 EUR", 140.0));
        assert!(holds("Total due: 140 EUR", 140.0));
        assert!(holds("Summe 1.234,50 €", 1234.5));
        assert!(holds("Total 1,234.50", 1234.5));
        assert!(holds("Total 1'234.50 CHF", 1234.5));
        assert!(holds("Total due: 1 250.00 €", 1250.0) && holds("Total due: 1 250.00 €", 250.0));
        assert!(holds("Qty 12 250.00", 12.0) && holds("Qty 12 250.00", 250.0));
        assert!(holds("12 chairs", 12.0));
        assert!(holds("Qty 1,234", 1234.0) && holds("Qty 1,234", 1.234));
        assert!(holds("Credit (41.50)", -41.5) && holds("Credit -41.50", -41.5));
        assert!(!holds("Total 41.50", 9999.0));
        assert!(!holds("Total 41.50", -41.5));
        assert!(!holds("INV-1040", 104.0));
        assert!(!holds("Total 140.001", 140.0));
    }

    #[test]
    fn dates_are_found_as_written() {
        let holds = |text: &str| Quoted::Date(2026, 3, 1).occurs_in(text);
        for text in [
            "Issued: 2026-03-01",
            "Issued: 1 March 2026",
            "Issued: March 1, 2026",
            "issued 1st mar 2026",
            "Datum: 01.03.2026",
            "Date: 01/03/2026",
            "Date: 03/01/2026",
            "Date: 1.3.2026",
        ] {
            assert!(holds(text), "{text}");
        }
        for text in ["Issued: 2026-03-011", "Issued: 2026-03-02", "Issued: 11 March 2026", "12026-03-01"] {
            assert!(!holds(text), "{text}");
        }
    }

    #[test]
    fn text_is_found_ignoring_case_and_whitespace() {
        assert!(Quoted::Text("ACME  corp").occurs_in("Bill from: Acme Corp\n"));
        assert!(!Quoted::Text("ACME Ltd").occurs_in("Bill from: Acme Corp"));
        assert!(Quoted::Unchecked.occurs_in("anything"));
    }
}
