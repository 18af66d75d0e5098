//! Pages of a document's text: the form feeds (`\f`) a PDF's text layer
//! puts between pages. [`Pages`] says on which page a byte offset lies;
//! text without a form feed has no pages to speak of.

/// Where the pages of a text start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    /// The byte offset of each page's first byte, the first page's (0) first.
    starts: Vec<usize>,
}

impl Pages {
    /// The pages of `text`, or `None` when it has no form feed.
    pub fn of(text: &str) -> Option<Pages> {
        if !text.contains('\u{c}') {
            return None;
        }
        let starts = std::iter::once(0).chain(text.match_indices('\u{c}').map(|(at, _)| at + 1)).collect();
        Some(Pages { starts })
    }

    /// How many pages: one more than the form feeds.
    pub fn count(&self) -> u32 {
        u32::try_from(self.starts.len()).unwrap_or(u32::MAX)
    }

    /// The page (1-based) the byte at `offset` lies on. A form feed belongs
    /// to the page it ends.
    pub fn page_at(&self, offset: usize) -> u32 {
        let page = self.starts.partition_point(|start| *start <= offset);
        u32::try_from(page).unwrap_or(u32::MAX)
    }

    /// The byte offset where page `page` (1-based) starts; `None` past the last.
    pub fn start_of(&self, page: u32) -> Option<usize> {
        self.starts.get(usize::try_from(page).ok()?.checked_sub(1)?).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_counted_from_one_at_form_feeds() {
        assert_eq!(Pages::of("no pages here"), None);
        let text = "one\u{c}two\u{c}\u{c}four";
        let pages = Pages::of(text).unwrap();
        assert_eq!(pages.count(), 4);
        assert_eq!(pages.page_at(0), 1);
        assert_eq!(pages.page_at(3), 1, "the form feed ends page 1");
        assert_eq!(pages.page_at(4), 2);
        assert_eq!(pages.page_at(text.find("four").unwrap()), 4);
        assert_eq!(pages.start_of(2), Some(4));
        assert_eq!((pages.start_of(0), pages.start_of(5)), (None, None));
    }
}
