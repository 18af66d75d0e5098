//! How the corpora's PDFs write a page's text layer: line by line, in
//! Courier (a standard font: nothing embedded), shared by `make_corpus.rs`
//! (one page) and `make_long.rs` (a page per form feed).

use pdf_writer::{Buf, Content, Name, Str};

/// The content stream of one page showing `text`, with the font `F1`.
pub fn page_content(text: &str) -> Buf {
    let mut content = Content::new();
    content.begin_text().set_font(Name(b"F1"), 9.5).set_leading(13.0).next_line(48.0, 790.0);
    for line in text.lines() {
        // Courier's standard encoding covers the corpora's ASCII text.
        content.show(Str(line.as_bytes())).next_line_using_leading();
    }
    content.end_text();
    content.finish()
}
