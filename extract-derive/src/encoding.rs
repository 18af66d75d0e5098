//! The compact description of a type the runtime decodes
//! (`extract_core::TypeInfo::derived`): the marks that separate its parts
//! and the encoding of the fields. A check's own parts are encoded by
//! `check::lower::meta`, with the same marks.

use proc_macro2::TokenStream;

use crate::container::Field;

/// Mirror `extract_core::schema::PATH_MARK`, `ITEM_MARK`, `CHECK_MARK` and `PART_MARK`.
pub const PATH_MARK: char = '\u{1}';
pub const ITEM_MARK: char = '\u{2}';
pub const CHECK_MARK: char = '\u{3}';
pub const PART_MARK: char = '\u{4}';

/// Whether `c` is one of the marks, which no text the derive encodes may hold.
pub fn is_mark(c: char) -> bool {
    (PATH_MARK..=PART_MARK).contains(&c)
}

/// `items` joined by `mark`.
pub fn join(items: &[String], mark: char) -> String {
    items.join(&mark.to_string())
}

/// The fields the model sees, encoded (one string literal), and for each
/// named type the constant that holds its description, in the order the
/// encoding names them.
pub fn fields<'a>(fields: impl Iterator<Item = &'a Field>) -> (String, Vec<TokenStream>) {
    let mut out = String::new();
    let mut nested = Vec::new();
    for (i, f) in fields.enumerate() {
        if i > 0 {
            out.push(ITEM_MARK);
        }
        out.push(char::from(b'a' + u8::from(f.required) + 2 * u8::from(f.recoverable)));
        out.push_str(&f.rust_name);
        out.push(PATH_MARK);
        if f.json_name != f.rust_name {
            out.push_str(&f.json_name);
        }
        out.push(PATH_MARK);
        crate::emit::shape_of(f).encode(&mut out, &mut nested);
    }
    (out, nested)
}
