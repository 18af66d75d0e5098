//! Where a value came from: [`Source`], one per `Sourced` value of a valid output.

use std::ops::Range;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::FieldPath;

/// The provenance of one `Sourced` value: where it sits in the output, the
/// quote the model gave, and where that quote is in the document's text.
///
/// `span` is the byte range of the quote in the document's text (the text,
/// or a PDF's text layer), found with the same whitespace-normalised match
/// the check uses and mapped back to the original bytes, so
/// `&text[span]` is the quoted passage as the document writes it. It is
/// `None` when the quote could not be verified: a PDF without a text layer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Source {
    /// The path of the `Sourced` value, in JSON names.
    pub path: FieldPath,
    /// The quote, as the model gave it.
    pub quote: String,
    /// The byte range of the quote in the document's text; `None` when unverified.
    pub span: Option<Range<usize>>,
    /// The page (1-based) the quote starts on, where the text has pages
    /// (form feeds, as a PDF's text layer does); `None` otherwise.
    pub page: Option<u32>,
}

impl Source {
    /// The provenance of the value at `path`: its `quote`, found at `span`
    /// of the document's text (`None`: unverified).
    pub fn new(path: FieldPath, quote: impl Into<String>, span: Option<Range<usize>>) -> Source {
        Source { path, quote: quote.into(), span, page: None }
    }

    /// The same source, on page `page` (1-based).
    pub fn on_page(mut self, page: Option<u32>) -> Source {
        self.page = page;
        self
    }

    /// Whether the quote was found in the document's text.
    pub fn verified(&self) -> bool {
        self.span.is_some()
    }
}

impl Serialize for Source {
    /// `{"path", "quote", "start", "end", "page", "verified"}`; `start`
    /// and `end` are `null` when unverified, `page` when the text has no pages.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("Source", 6)?;
        out.serialize_field("path", &self.path)?;
        out.serialize_field("quote", &self.quote)?;
        out.serialize_field("start", &self.span.as_ref().map(|r| r.start))?;
        out.serialize_field("end", &self.span.as_ref().map(|r| r.end))?;
        out.serialize_field("page", &self.page)?;
        out.serialize_field("verified", &self.verified())?;
        out.end()
    }
}
