//! The source of an extraction: [`Document`], text or a PDF, with an id, a
//! title, and the text its quotes are checked against.

use std::borrow::Cow;
use std::fmt;

use sha2::{Digest, Sha256};

/// A document to extract from: text, or a PDF (with its text layer, when
/// there is one). `&str`, `&String` and `String` convert into a text document.
///
/// ```
/// use extract::Document;
///
/// let invoice = Document::text("Invoice INV-7\nTotal 500.00").with_id("INV-7");
/// assert_eq!(invoice.id(), "INV-7");
/// assert_eq!(invoice.searchable_text(), Some("Invoice INV-7\nTotal 500.00"));
///
/// let scan = Document::pdf(b"%PDF-1.4 ...".to_vec()).with_title("March invoice");
/// assert!(scan.searchable_text().is_none(), "no text layer: quotes cannot be verified");
/// assert!(scan.id().starts_with("doc-"), "an id from the content: {}", scan.id());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Document {
    id: Option<String>,
    title: Option<String>,
    content: Content,
    /// Set by `with_text_layer` on a text document, reported when the document is used.
    misuse: Option<&'static str>,
}

/// What a document holds.
#[derive(Clone, PartialEq, Eq)]
pub enum Content {
    /// Text, byte for byte.
    Text(String),
    /// A PDF file's bytes, and the text of its pages when the caller has it.
    Pdf {
        /// The file.
        bytes: Vec<u8>,
        /// The text quotes are checked against; `None` when not known.
        text_layer: Option<String>,
    },
}

impl Document {
    /// A text document.
    pub fn text(text: impl Into<String>) -> Document {
        Document { id: None, title: None, content: Content::Text(text.into()), misuse: None }
    }

    /// A PDF document from its bytes.
    pub fn pdf(bytes: impl Into<Vec<u8>>) -> Document {
        Document {
            id: None,
            title: None,
            content: Content::Pdf { bytes: bytes.into(), text_layer: None },
            misuse: None,
        }
    }

    /// The same document with the id `id` (`^[a-zA-Z0-9_-]{1,64}$`; an id
    /// that breaks the pattern is a configuration error when the document is
    /// extracted).
    pub fn with_id(mut self, id: impl Into<String>) -> Document {
        self.id = Some(id.into());
        self
    }

    /// The same document with a title, which the model sees beside it.
    pub fn with_title(mut self, title: impl Into<String>) -> Document {
        self.title = Some(title.into());
        self
    }

    /// The same PDF with the text of its pages: what `Sourced` quotes are
    /// checked against. On a text document this is a configuration error
    /// when the document is extracted (its text is already what quotes are
    /// checked against).
    pub fn with_text_layer(mut self, text: impl Into<String>) -> Document {
        match &mut self.content {
            Content::Pdf { text_layer, .. } => *text_layer = Some(text.into()),
            Content::Text(_) => {
                self.misuse = Some(
                    "with_text_layer was called on a text document, whose text is already what quotes are checked against; use Document::pdf for a PDF",
                )
            }
        }
        self
    }

    /// The id: the one given, else `doc-` and the first 16 hex digits of the
    /// SHA-256 of the content (its kind, its bytes, a PDF's text layer), so
    /// the same document gets the same id in every run and every version.
    pub fn id(&self) -> Cow<'_, str> {
        match &self.id {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(self.content_id()),
        }
    }

    fn content_id(&self) -> String {
        let mut hash = Sha256::new();
        match &self.content {
            Content::Text(text) => {
                hash.update(b"text\0");
                hash.update(text.as_bytes());
            }
            Content::Pdf { bytes, text_layer } => {
                hash.update(b"pdf\0");
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(bytes);
                if let Some(text) = text_layer {
                    hash.update(b"\0text\0");
                    hash.update(text.as_bytes());
                }
            }
        }
        let digest = hash.finalize();
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("doc-{hex}")
    }

    /// The title, if one was given.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What the document holds.
    pub fn content(&self) -> &Content {
        &self.content
    }

    /// Whether the document is a PDF.
    pub fn is_pdf(&self) -> bool {
        matches!(self.content, Content::Pdf { .. })
    }

    /// The text `Sourced` quotes are checked against: the text, or a PDF's
    /// text layer; `None` for a PDF without one (its quotes cannot be verified).
    pub fn searchable_text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(text) => Some(text),
            Content::Pdf { text_layer, .. } => text_layer.as_deref(),
        }
    }

    /// The document's size in bytes (a PDF's file size).
    pub fn len(&self) -> usize {
        match &self.content {
            Content::Text(text) => text.len(),
            Content::Pdf { bytes, .. } => bytes.len(),
        }
    }

    /// Whether the document is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What is wrong with the document as configured: an id that breaks the
    /// pattern, a text layer on a text document. Checked when it is extracted.
    pub fn problem(&self) -> Option<String> {
        if let Some(misuse) = self.misuse {
            return Some(misuse.to_string());
        }
        let id = self.id.as_deref()?;
        let valid = !id.is_empty()
            && id.len() <= 64
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        (!valid).then(|| {
            format!(
                "document id {} does not match ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, `_` and `-`, 1 to 64 characters)",
                super::quote_prefix(id)
            )
        })
    }

    /// How the flattened text of a prompt shows a PDF: one line naming its size and title.
    pub(crate) fn placeholder(&self) -> String {
        let title =
            self.title.as_deref().map(|t| format!(", titled {}", super::quote_prefix(t))).unwrap_or_default();
        let layer = match &self.content {
            Content::Pdf { text_layer: Some(_), .. } => ", with a text layer",
            _ => "",
        };
        format!("[a PDF document of {} bytes{title}{layer}]", self.len())
    }
}

impl fmt::Debug for Document {
    /// The id, kind, title and size: never a whole document.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Document")
            .field("id", &self.id())
            .field("kind", &if self.is_pdf() { "pdf" } else { "text" })
            .field("title", &self.title)
            .field("bytes", &self.len())
            .finish()
    }
}

impl From<&str> for Document {
    fn from(text: &str) -> Document {
        Document::text(text)
    }
}

impl From<&&str> for Document {
    fn from(text: &&str) -> Document {
        Document::text(*text)
    }
}

impl From<&String> for Document {
    fn from(text: &String) -> Document {
        Document::text(text.as_str())
    }
}

impl From<String> for Document {
    fn from(text: String) -> Document {
        Document::text(text)
    }
}

impl From<&Document> for Document {
    fn from(document: &Document) -> Document {
        document.clone()
    }
}

impl PartialEq<&str> for Document {
    /// A text document equals its text.
    fn eq(&self, other: &&str) -> bool {
        matches!(&self.content, Content::Text(text) if text == other)
    }
}

impl PartialEq<str> for Document {
    fn eq(&self, other: &str) -> bool {
        matches!(&self.content, Content::Text(text) if text == other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ids_are_stable_and_tell_kinds_apart() {
        // Stable across runs and versions: this value must never change.
        assert_eq!(Document::text("hello").id(), "doc-306f89347195cc05");
        assert_ne!(Document::text("hello").id(), Document::pdf(b"hello".to_vec()).id());
        assert_ne!(Document::pdf(b"x".to_vec()).id(), Document::pdf(b"x".to_vec()).with_text_layer("x").id());
        assert_eq!(Document::text("hello").with_id("A-1").id(), "A-1");
    }

    #[test]
    fn bad_ids_and_misuse_are_problems() {
        assert!(Document::text("x").problem().is_none());
        assert!(Document::text("x").with_id("ok_id-7").problem().is_none());
        let problem = Document::text("x").with_id("no spaces\nplease").problem().unwrap();
        assert!(problem.contains(r#""no spaces\nplease""#), "{problem}");
        assert!(Document::text("x").with_id("x".repeat(65)).problem().is_some());
        assert!(Document::text("x").with_id("").problem().is_some());
        assert!(Document::text("x").with_text_layer("y").problem().unwrap().contains("text document"));
    }
}
