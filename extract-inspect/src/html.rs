//! The frame every page of this crate shares (the report, the desk's
//! pages): doctype, language, charset, viewport, title.

use maud::{DOCTYPE, Markup, html};

/// A whole HTML document titled `title`: `head` after the title, then `body`.
pub(crate) fn document(title: &str, head: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                (head)
            }
            body { (body) }
        }
        "\n"
    }
}
