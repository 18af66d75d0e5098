//! The run the journals in `tests/fixtures/` hold, as `tests/fixtures/made_by.rs`
//! wrote it: the same type (so the same tool and schema digest) and the same
//! documents (so the same content digests).

use extract::{Document, Extractable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, JsonSchema, Extractable)]
#[check(total >= 0)]
pub struct Receipt {
    pub total: f64,
    pub vendor: String,
}

/// The documents of the bulk run, in its order.
pub const IDS: [&str; 8] =
    ["valid", "corrected", "escalated", "reviewed", "desk-fixed", "rejected", "unfinished", "failed"];

pub fn documents() -> Vec<Document> {
    IDS.iter()
        .map(|id| Document::text(format!("Receipt {id} from ACME, total 12.50.")).with_id(*id))
        .collect()
}

/// The document of the message batches.
pub fn batched() -> Document {
    Document::text("Receipt batch from ACME, total 12.50.").with_id("batched")
}

/// A copy of fixture `name` in a fresh directory (opening a journal migrates it).
pub fn copy_of(name: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let copy = dir.join(name);
    std::fs::copy(&fixture, &copy).unwrap();
    copy
}
