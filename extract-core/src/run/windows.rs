//! Long documents, window by window: how a document's text is split into
//! [`Window`]s, what each window's instruction says, and which window owns
//! an answered item (the one where its anchor's quote starts), so that the
//! lists of every window merge without a duplicate or a gap.
//!
//! A window is a byte range that starts at a line occurring once in the
//! whole document (page headers repeat; lines are compared trimmed, with
//! form feeds removed) and runs up to the next window's first such line.
//! The first window starts at the document's first byte. A stretch of
//! pages or lines with no line of its own joins the window before it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::num::NonZeroU32;
use std::ops::Range;

use serde_json::Value;

use crate::validate::check::QuoteIndex;
use crate::vocabulary::pages::Pages;

/// How a long document is split: `Windows::pages(3)`, windows of three
/// pages (a PDF's text layer separates pages with form feeds), or
/// `Windows::lines(200)`, for text without pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Windows {
    unit: Unit,
    size: u32,
    at_once: u32,
}

/// How many windows are asked at once by default, after the first.
const AT_ONCE: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Unit {
    Pages,
    Lines,
}

impl Windows {
    /// Windows of `n` pages of the document's text (split at form feeds;
    /// text without one is one page).
    pub const fn pages(n: u32) -> Windows {
        Windows { unit: Unit::Pages, size: n, at_once: AT_ONCE }
    }

    /// Windows of `n` lines.
    pub const fn lines(n: u32) -> Windows {
        Windows { unit: Unit::Lines, size: n, at_once: AT_ONCE }
    }

    /// The same windows, `n` asked at once (4 by default). Window 1 is
    /// always asked alone: it writes the prompt cache every later call
    /// reads, and answers the fields the later windows are judged with.
    /// The calls of one wave go out together and are judged in window
    /// order; windows that need a correction are asked again in the next.
    pub const fn at_once(mut self, n: u32) -> Windows {
        self.at_once = n;
        self
    }

    /// How many windows are asked at once, after window 1.
    pub const fn concurrency(self) -> u32 {
        self.at_once
    }

    /// `Err` with what is wrong with the setting: a window of nothing, or
    /// no window asked at a time.
    pub fn checked(self) -> Result<Windows, String> {
        if self.size == 0 {
            return Err(format!("{self} is a window of nothing: give at least 1"));
        }
        if self.at_once == 0 {
            return Err(format!("{self} with at_once(0) asks no window at a time: give at least 1"));
        }
        Ok(self)
    }

    /// Splits `text` into its windows, in document order (at least one).
    pub fn split(self, text: &str) -> Vec<Window> {
        let size = self.size.max(1) as usize;
        let pages = Pages::of(text);
        // The byte offset each unit (page or line) starts at.
        let units: Vec<usize> = match self.unit {
            Unit::Pages => match &pages {
                Some(pages) => (1..=pages.count()).filter_map(|page| pages.start_of(page)).collect(),
                None => vec![0],
            },
            Unit::Lines => line_starts(text),
        };
        let once = lines_occurring_once(text);
        let counted_in_pages = self.unit == Unit::Pages && pages.is_some();
        let mut windows: Vec<Window> = Vec::new();
        for (chunk, first_unit) in units.iter().step_by(size).enumerate() {
            let chunk_end = units.get((chunk + 1) * size).copied().unwrap_or(text.len());
            // The pages this stretch covers, 1-based and inclusive.
            let stretch = counted_in_pages.then(|| {
                let first = chunk * size + 1;
                let last = ((chunk + 1) * size).min(units.len());
                (u32::try_from(first).unwrap_or(u32::MAX), u32::try_from(last).unwrap_or(u32::MAX))
            });
            let own_line = line_starts_in(text, *first_unit..chunk_end)
                .find(|line| once.contains(trimmed_line(text, *line)));
            let Some(line) = own_line else {
                // Nothing of its own to start at: the window before covers it.
                if let (Some(last), Some((_, end))) = (windows.last_mut(), stretch) {
                    last.pages = last.pages.map(|(first, _)| (first, end));
                }
                continue;
            };
            let start = if windows.is_empty() { 0 } else { line };
            if let Some(last) = windows.last_mut() {
                last.range.end = start;
            }
            windows.push(Window {
                number: u32::try_from(windows.len() + 1).unwrap_or(u32::MAX),
                range: start..text.len(),
                first_line: trimmed_line(text, line).to_string(),
                last_line: String::new(),
                pages: stretch,
                next_line: String::new(),
            });
        }
        if windows.is_empty() {
            // No line occurs once: the whole text is one window.
            windows.push(Window {
                number: 1,
                range: 0..text.len(),
                first_line: String::new(),
                last_line: String::new(),
                pages: pages.as_ref().filter(|_| counted_in_pages).map(|pages| (1, pages.count())),
                next_line: String::new(),
            });
        }
        let firsts: Vec<String> = windows.iter().skip(1).map(|w| w.first_line.clone()).collect();
        for (window, next) in windows.iter_mut().zip(firsts.into_iter().map(Some).chain([None])) {
            window.last_line = line_starts_in(text, window.range.clone())
                .map(|line| trimmed_line(text, line))
                .filter(|line| once.contains(line))
                .last()
                .unwrap_or_default()
                .to_string();
            window.next_line = next.unwrap_or_default();
        }
        windows
    }
}

impl fmt::Display for Windows {
    /// `pages(3)`, `lines(200)`: how a journal keys the setting (how many
    /// are asked at once changes no call, so it is not part of the key).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            Unit::Pages => write!(f, "pages({})", self.size),
            Unit::Lines => write!(f, "lines({})", self.size),
        }
    }
}

/// The part of a document a call is about: the whole, or one window of a
/// long document. A prompt says which ([`Prompt::part`](crate::Prompt::part)),
/// an error chain's entry which part it failed in, and a journal keys each
/// reply by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// The whole document.
    Whole,
    /// One window, numbered from 1.
    Window(NonZeroU32),
}

impl Part {
    /// The window's number; `None` for the whole.
    pub fn window(self) -> Option<u32> {
        match self {
            Part::Whole => None,
            Part::Window(n) => Some(n.get()),
        }
    }
}

/// One window of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Window {
    /// Its number, from 1.
    pub number: u32,
    /// The bytes of the document's text it covers.
    pub range: Range<usize>,
    /// Its first line that occurs once in the document, trimmed.
    pub first_line: String,
    /// Its last line that occurs once in the document, trimmed.
    pub last_line: String,
    /// The pages it covers (1-based, inclusive), for `Windows::pages`.
    pub pages: Option<(u32, u32)>,
    /// The first line of the window after it, where it ends (empty for
    /// the last): the lines between its last line of its own and this one
    /// (lines that repeat, atop the next page) are its too.
    pub next_line: String,
}

impl Window {
    /// The window as an instruction names it: `from the line "<first
    /// line>" through the line "<last line>"` (each a JSON string), then
    /// `, pages 4 to 6` (`, page 4` for one) when it is counted in pages.
    pub fn described(&self) -> String {
        let quoted = |line: &str| serde_json::to_string(line).unwrap_or_default();
        let mut text = format!(
            "from the line {} through the line {}",
            quoted(&self.first_line),
            quoted(&self.last_line)
        );
        match self.pages {
            Some((first, last)) if first == last => text.push_str(&format!(", page {first}")),
            Some((first, last)) => text.push_str(&format!(", pages {first} to {last}")),
            None => {}
        }
        text
    }

    /// The window's part of the document.
    pub fn part(&self) -> Part {
        Part::Window(NonZeroU32::new(self.number).unwrap_or(NonZeroU32::MIN))
    }

    /// The window cut in two at its middle line that occurs once in `text`
    /// (the whole document) after its first such line; `None` when it has
    /// no such line (it cannot be cut). `windows` is how many windows the
    /// text was split into: the halves' numbers follow from the window's
    /// own, whatever order windows are cut in, so a journal's recorded
    /// replies name the same window in every run (window `n`'s halves are
    /// the children of `n` in a binary tree over each first window).
    pub fn halves(&self, text: &str, windows: u32) -> Option<(Window, Window)> {
        let windows = windows.max(1);
        // Number `root + windows * node`: the first windows are nodes 0, a
        // node's halves `2 node + 1` and `2 node + 2`.
        let (root, node) = ((self.number - 1) % windows + 1, (self.number - 1) / windows);
        let number =
            |child: u32| node.checked_mul(2)?.checked_add(child)?.checked_mul(windows)?.checked_add(root);
        let (head_number, tail_number) = (number(1)?, number(2)?);
        let once = lines_occurring_once(text);
        let starts: Vec<usize> = line_starts_in(text, self.range.clone())
            .filter(|line| *line > self.range.start)
            .filter(|line| {
                let trimmed = trimmed_line(text, *line);
                trimmed != self.first_line && once.contains(trimmed)
            })
            .collect();
        let cut = *starts.get(starts.len() / 2)?;
        let pages = Pages::of(text);
        let page_at = |at: usize| pages.as_ref().map(|pages| pages.page_at(at));
        // The head ends on the page of the byte before the cut (the page
        // before, when the cut is a page's first line); the tail starts on the cut's.
        let (head_end, tail_start) = (page_at(cut.saturating_sub(1)), page_at(cut));
        let last_before = line_starts_in(text, self.range.start..cut)
            .map(|line| trimmed_line(text, line))
            .filter(|line| once.contains(line))
            .last()
            .unwrap_or_default();
        let head = Window {
            number: head_number,
            range: self.range.start..cut,
            first_line: self.first_line.clone(),
            last_line: last_before.to_string(),
            pages: self.pages.zip(head_end).map(|((from, _), page)| (from, page)),
            next_line: trimmed_line(text, cut).to_string(),
        };
        let tail = Window {
            number: tail_number,
            range: cut..self.range.end,
            first_line: trimmed_line(text, cut).to_string(),
            last_line: self.last_line.clone(),
            pages: self.pages.zip(tail_start).map(|((_, to), page)| (page, to)),
            next_line: self.next_line.clone(),
        };
        Some((head, tail))
    }
}

/// Where one answered item's anchor lies, for the window that answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// In this window, its quote starting at this byte: the item is kept.
    Here(usize),
    /// In another window, starting at this byte: the item is dropped from
    /// this answer (that window answers it).
    Elsewhere(usize),
    /// Nowhere in the document: a `quote_not_found` of this window.
    Nowhere,
}

/// Which window owns each of `anchors` (an answer's items' anchor quotes,
/// in answer order) answered for `window` of `text` (`index` is the text's).
/// Quotes are located in answer order (`locate_in_order`) from the
/// window's start, so identical lines keep their own positions; one found
/// only where an item before it in the answer already is (the model wrote
/// the item twice) is that item again, and dropped as another's.
pub fn owners(index: &QuoteIndex, window: &Window, anchors: &[&str]) -> Vec<Owner> {
    locate_in_order(index, anchors, window.range.start)
        .into_iter()
        .map(|located| match located {
            Located::At(at) if window.range.contains(&at) => Owner::Here(at),
            Located::At(at) | Located::Again(at) => Owner::Elsewhere(at),
            Located::Nowhere => Owner::Nowhere,
        })
        .collect()
}

/// Where each of a merged list's anchor quotes starts in the whole text
/// (`None`: nowhere, or only where an item before it is), located in
/// list order (`locate_in_order`) from the text's start: an item a patch
/// appended at the end takes its first occurrence no item before it took,
/// so two identical lines keep their own positions wherever a patch put
/// the second.
pub fn anchor_positions(index: &QuoteIndex, quotes: &[&str]) -> Vec<Option<usize>> {
    locate_in_order(index, quotes, 0)
        .into_iter()
        .map(|located| match located {
            Located::At(at) => Some(at),
            Located::Again(_) | Located::Nowhere => None,
        })
        .collect()
}

/// Where a quote of a list was located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Located {
    /// At this byte, which no quote before it took.
    At(usize),
    /// Only where a quote before it is: the same item again.
    Again(usize),
    /// Nowhere in the text.
    Nowhere,
}

/// Where each of `quotes` (in list order) starts: at its first occurrence
/// from `start` on, after the quote before it, that no quote before it
/// took; else (an item of an earlier stretch, or one a patch appended) at
/// its first such occurrence from the text's start.
fn locate_in_order(index: &QuoteIndex, quotes: &[&str], start: usize) -> Vec<Located> {
    let mut taken: HashSet<usize> = HashSet::new();
    let mut from = start;
    quotes
        .iter()
        .map(|quote| {
            let unclaimed = |mut at: usize| loop {
                let found = index.find_from(quote, at)?.start;
                if !taken.contains(&found) {
                    return Some(found);
                }
                at = found + 1;
            };
            let Some(at) = unclaimed(from).or_else(|| unclaimed(0)) else {
                return match index.find_from(quote, 0) {
                    Some(range) => Located::Again(range.start),
                    None => Located::Nowhere,
                };
            };
            taken.insert(at);
            from = from.max(at + 1);
            Located::At(at)
        })
        .collect()
}

/// What one window's answer gives its list: the items it owns, each with
/// the byte its anchor's quote starts at, in answer order; and which of the
/// answer's items (by index) have an anchor found nowhere.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gathered {
    /// The items this window owns, with where their anchors start.
    pub owned: Vec<(usize, Value)>,
    /// The answer's items whose anchor is in another window: dropped.
    pub dropped: usize,
    /// The indices (in the answer) of items whose anchor is nowhere.
    pub nowhere: Vec<usize>,
}

/// Sorts one window's answered `items` (a list's JSON items, each with the
/// `Sourced` field `anchor`: `{"value": .., "quote": ".."}`) by owner.
pub fn gather(index: &QuoteIndex, window: &Window, items: &[Value], anchor: &str) -> Gathered {
    let quotes: Vec<&str> =
        items.iter().map(|item| item[anchor]["quote"].as_str().unwrap_or_default()).collect();
    let mut gathered = Gathered::default();
    for (i, (item, owner)) in items.iter().zip(owners(index, window, &quotes)).enumerate() {
        match owner {
            Owner::Here(at) => gathered.owned.push((at, item.clone())),
            Owner::Elsewhere(_) => gathered.dropped += 1,
            Owner::Nowhere => gathered.nowhere.push(i),
        }
    }
    gathered
}

/// The lists of every window merged in document order (by where each
/// item's anchor starts; items of one window keep their order among equals).
pub fn merge(windows: impl IntoIterator<Item = Vec<(usize, Value)>>) -> Vec<Value> {
    let mut all: Vec<(usize, Value)> = windows.into_iter().flatten().collect();
    all.sort_by_key(|(at, _)| *at);
    all.into_iter().map(|(_, item)| item).collect()
}

/// Where each line of `text` starts.
fn line_starts(text: &str) -> Vec<usize> {
    line_starts_in(text, 0..text.len()).collect()
}

/// Where each line that starts inside `range` starts. A line ends at a
/// newline or a form feed (a page's first line starts after its form feed).
fn line_starts_in(text: &str, range: Range<usize>) -> impl Iterator<Item = usize> + '_ {
    const BREAKS: [char; 2] = ['\n', '\u{c}'];
    let after_break = move |at: usize| text[at..].find(BREAKS).map(|next| at + next + 1);
    let first = if range.start == 0 || text[..range.start].ends_with(BREAKS) {
        Some(range.start)
    } else {
        after_break(range.start)
    };
    let end = range.end;
    std::iter::successors(first, move |at| after_break(*at)).take_while(move |at| *at < end)
}

/// The line starting at `start`, trimmed.
fn trimmed_line(text: &str, start: usize) -> &str {
    let line = text[start..].split(['\n', '\u{c}']).next().unwrap_or_default();
    line.trim()
}

/// Every non-empty trimmed line that occurs once in `text`.
fn lines_occurring_once(text: &str) -> HashSet<&str> {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for start in line_starts(text) {
        let line = trimmed_line(text, start);
        if !line.is_empty() {
            *counts.entry(line).or_default() += 1;
        }
    }
    counts.into_iter().filter(|(_, count)| *count == 1).map(|(line, _)| line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pages` pages, each under a repeated header, with `per_page` lines of its own.
    fn statement(pages: usize, per_page: usize) -> String {
        (0..pages)
            .map(|page| {
                let lines: Vec<String> = (0..per_page)
                    .map(|i| format!("2026-03-{:02} Payment {page}-{i}  {}.00", i % 28 + 1, i + 1))
                    .collect();
                format!("ACME BANK STATEMENT\nPage {}\n{}\n", page + 1, lines.join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\u{c}")
    }

    #[test]
    fn pages_group_into_windows_that_start_at_a_line_of_their_own() {
        let text = statement(7, 3);
        let windows = Windows::pages(3).split(&text);
        assert_eq!(windows.len(), 3);
        assert_eq!(
            windows.iter().map(|w| w.pages).collect::<Vec<_>>(),
            [Some((1, 3)), Some((4, 6)), Some((7, 7))]
        );
        // The header repeats on every page: a window starts at its first page's number.
        assert_eq!(windows[1].first_line, "Page 4");
        assert_eq!(&text[windows[1].range.start..windows[1].range.start + 6], "Page 4");
        assert_eq!(windows[0].range.start, 0);
        assert_eq!(windows[2].range.end, text.len());
        assert!(windows.windows(2).all(|w| w[0].range.end == w[1].range.start), "no gap, no overlap");
        assert_eq!(windows[1].last_line, "2026-03-03 Payment 5-2  3.00");
        assert_eq!(
            windows[1].described(),
            r#"from the line "Page 4" through the line "2026-03-03 Payment 5-2  3.00", pages 4 to 6"#
        );
        assert!(windows[2].described().ends_with(", page 7"), "{}", windows[2].described());
    }

    #[test]
    fn lines_without_pages_and_stretches_without_a_line_of_their_own() {
        let text = "A\nsame\nsame\nsame\nB\nC\n";
        let windows = Windows::lines(2).split(text);
        // Lines 3 and 4 repeat: their window joins the one before.
        let firsts: Vec<&str> = windows.iter().map(|w| w.first_line.as_str()).collect();
        assert_eq!(firsts, ["A", "B"]);
        assert_eq!(windows[0].pages, None);
        assert_eq!(Windows::pages(2).split("no form feeds").len(), 1);
        assert!(Windows::pages(0).checked().is_err());
        assert_eq!(Windows::pages(3).to_string(), "pages(3)");
    }

    #[test]
    fn an_item_belongs_to_the_window_where_its_quote_starts() {
        let text = statement(4, 3);
        let windows = Windows::pages(2).split(&text);
        let index = QuoteIndex::new(&text);
        // Window 2's answer: the last item of page 2 (a boundary mistake),
        // its own items, an item of nowhere.
        let anchors = ["Payment 1-2  3.00", "Payment 2-0  1.00", "Payment 3-2  3.00", "Payment 9-9  1.00"];
        let owners = owners(&index, &windows[1], &anchors);
        assert!(matches!(owners[0], Owner::Elsewhere(at) if at < windows[1].range.start), "{owners:?}");
        assert!(matches!(owners[1], Owner::Here(_)) && matches!(owners[2], Owner::Here(_)), "{owners:?}");
        assert_eq!(owners[3], Owner::Nowhere);
    }

    #[test]
    fn identical_lines_keep_their_own_positions_in_answer_order() {
        let text = "Statement 7\n\u{c}Page 2\nFee 1.00\nFee 1.00\nEnd\n";
        let windows = Windows::pages(1).split(text);
        let index = QuoteIndex::new(text);
        let owners = owners(&index, &windows[1], &["Fee 1.00", "Fee 1.00"]);
        let (Owner::Here(first), Owner::Here(second)) = (&owners[0], &owners[1]) else {
            panic!("{owners:?}")
        };
        assert!(first < second, "the second fee is the second line: {owners:?}");
    }

    #[test]
    fn a_statement_of_40_pages_merges_to_exactly_its_600_items_with_their_pages() {
        use serde_json::json;
        let text = statement(40, 15);
        let truth: Vec<String> = (0..40)
            .flat_map(|page| {
                (0..15).map(move |i| format!("2026-03-{:02} Payment {page}-{i}  {}.00", i % 28 + 1, i + 1))
            })
            .collect();
        let item = |line: &String| json!({"amount": 1.0, "line": {"value": line, "quote": line}});
        let windows = Windows::pages(3).split(&text);
        assert_eq!(windows.len(), 14);
        let index = QuoteIndex::new(&text);
        let mut lists = Vec::new();
        for (w, window) in windows.iter().enumerate() {
            // The window's own items (15 a page), the first two of the next
            // window (a boundary mistake), and the last of the one before.
            let own = &truth[w * 45..((w + 1) * 45).min(truth.len())];
            let mut answer: Vec<Value> = Vec::new();
            if w > 0 {
                answer.push(item(&truth[w * 45 - 1]));
            }
            answer.extend(own.iter().map(item));
            answer.extend(truth.iter().skip((w + 1) * 45).take(2).map(item));
            let gathered = gather(&index, window, &answer, "line");
            assert!(gathered.nowhere.is_empty(), "window {}: {:?}", w + 1, gathered.nowhere);
            assert_eq!(gathered.owned.len(), own.len(), "window {}", w + 1);
            lists.push(gathered.owned);
        }
        let merged = merge(lists);
        let lines: Vec<&str> = merged.iter().map(|item| item["line"]["value"].as_str().unwrap()).collect();
        assert_eq!(lines, truth.iter().map(String::as_str).collect::<Vec<_>>(), "each item once, in order");
        // Each item's page, from where its quote starts.
        let pages = Pages::of(&text).unwrap();
        let last = index.find_from(&truth[599], 0).unwrap();
        assert_eq!(pages.page_at(last.start), 40);
    }

    #[test]
    fn a_window_cut_in_two_covers_the_same_bytes_at_a_line_of_its_own() {
        let text = statement(6, 4);
        let windows = Windows::pages(3).split(&text);
        let (head, tail) = windows[1].halves(&text, 2).unwrap();
        // Window 2 of 2: its halves are the children of node 0 under root 2.
        assert_eq!((head.number, tail.number), (4, 6));
        let (head_of_head, tail_of_head) = head.halves(&text, 2).unwrap();
        assert_eq!((head_of_head.number, tail_of_head.number), (8, 10));
        assert_eq!(head.range.start, windows[1].range.start);
        assert_eq!(tail.range.end, windows[1].range.end);
        assert_eq!(head.range.end, tail.range.start, "no gap, no overlap");
        assert_eq!(head.first_line, windows[1].first_line);
        assert_eq!(tail.last_line, windows[1].last_line);
        // The tail starts at a line of its own, on the page it names first.
        let own = &text[tail.range.start..];
        assert!(own.starts_with(&tail.first_line), "{:?}", tail.first_line);
        let pages = Pages::of(&text).unwrap();
        assert_eq!(tail.pages.unwrap().0, pages.page_at(tail.range.start));
        assert_eq!(head.pages.unwrap().1, pages.page_at(tail.range.start - 1));
        // A window of one line cannot be cut.
        let one = Windows::lines(1).split("A\nB\n");
        assert_eq!(one[0].halves("A\nB\n", 3), None);
    }

    // an item after one whose quote starts with a
    // character of more than one byte is looked for from the middle of that
    // character; `QuoteIndex::find_from` finds nothing there, so the item is
    // looked for from the document's start and lands on an identical line of
    // an earlier window: dropped as another window's.
    #[test]
    fn an_item_after_a_non_ascii_quote_keeps_its_own_window() {
        let text = "Konto 7\nGebühr 1,00\n\u{c}Seite 2\nÜberweisung 5,00\nGebühr 1,00\n";
        let windows = Windows::pages(1).split(text);
        assert_eq!(windows.len(), 2);
        let index = QuoteIndex::new(text);
        let owners = owners(&index, &windows[1], &["Überweisung 5,00", "Gebühr 1,00"]);
        assert!(matches!(owners[0], Owner::Here(_)), "{owners:?}");
        assert!(matches!(owners[1], Owner::Here(_)), "the fee of page 2 is window 2's: {owners:?}");
        // The same fault in the merge's placement: the second fee is placed nowhere.
        let at = anchor_positions(&index, &["Gebühr 1,00", "Überweisung 5,00", "Gebühr 1,00"]);
        assert!(at.iter().all(Option::is_some), "{at:?}");
    }

    // a model that repeats an item in its answer
    // gets it kept twice at the same byte: the fallback search from the
    // document's start lands on the occurrence the first copy took.
    #[test]
    fn an_item_answered_twice_is_not_kept_twice() {
        let text = "Ledger 1\nrent 1\n\u{c}Page 2\nfood 2\nwine 3\n";
        let windows = Windows::pages(1).split(text);
        let index = QuoteIndex::new(text);
        let items = [
            serde_json::json!({"line": {"value": "food 2", "quote": "food 2"}}),
            serde_json::json!({"line": {"value": "wine 3", "quote": "wine 3"}}),
            serde_json::json!({"line": {"value": "food 2", "quote": "food 2"}}),
        ];
        let gathered = gather(&index, &windows[1], &items, "line");
        let mut at: Vec<usize> = gathered.owned.iter().map(|(at, _)| *at).collect();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), gathered.owned.len(), "one item per byte: {:?}", gathered.owned);
    }

    // a line that repeats elsewhere (a fee, a
    // carried-over line) at the top of a page, before the page's first line
    // of its own, is in the bytes of the window before; the instruction
    // "through the line .." alone would not ask for it. The window says
    // where it ends: the next window's first line, so the repeated line is
    // asked of the window that owns it.
    #[test]
    fn a_repeated_line_at_the_top_of_a_page_is_some_windows_item() {
        let text = "Fees of March\nFee 1.00\nRent 9.00\n\u{c}Fee 1.00\nFood 2.00\n";
        let windows = Windows::pages(1).split(text);
        assert_eq!(windows.len(), 2);
        let second_fee = text.rfind("Fee 1.00").unwrap();
        assert!(windows[0].range.contains(&second_fee), "window 1 owns the fee atop page 2");
        assert_eq!(windows[0].next_line, "Food 2.00", "and is told it ends there");
        assert_eq!(windows[1].next_line, "");
        let index = QuoteIndex::new(text);
        // Window 1's answer through its end: both fees are its own.
        let owners = owners(&index, &windows[0], &["Fee 1.00", "Rent 9.00", "Fee 1.00"]);
        assert_eq!(owners[2], Owner::Here(second_fee), "{owners:?}");
    }

    // window 1 starts at byte 0, before its first
    // line of its own, so `halves` counts that line as a place to cut. A
    // window 1 with one line of its own is "cut" into a head of repeated
    // lines only, named `from the line "Title" through the line ""`, and a
    // tail that is the same window again: a wasted call, then the tail
    // cannot be cut.
    #[test]
    fn window_1_with_one_line_of_its_own_cannot_be_cut() {
        let text = "HEADER\nTitle\nx 1\nx 1\n\u{c}HEADER\nPage 2\n";
        let windows = Windows::pages(1).split(text);
        assert_eq!(windows[0].first_line, "Title");
        let halves = windows[0].halves(text, 3);
        assert_eq!(halves, None, "{halves:#?}");
    }

    #[test]
    fn anchors_keep_their_own_positions_wherever_a_patch_put_them() {
        let text = "Fee 1.00\nRent 9.00\nFee 1.00\nEnd 2.00\n";
        let index = QuoteIndex::new(text);
        // The second fee appended at the end by a patch: it is the second line.
        let at = anchor_positions(&index, &["Fee 1.00", "Rent 9.00", "End 2.00", "Fee 1.00", "Gone"]);
        assert_eq!(at, [Some(0), Some(9), Some(28), Some(19), None]);
    }
}
