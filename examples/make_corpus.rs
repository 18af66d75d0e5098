//! Writes the labelled corpus of `examples/corpus/`: 64 invoices, each a
//! document and the JSON a right extraction gives (`null` where the source
//! lacks the datum), every fourth one a PDF with a text layer (written with
//! `pdf-writer`; its text layer is the `.txt` beside it). Deterministic: the
//! same program writes the same bytes, and `tests/docs` checks that the
//! committed corpus is what it writes.
//!
//! ```text
//! cargo run --example make_corpus            # rewrites examples/corpus/
//! cargo run --example make_corpus -- DIR     # writes into DIR instead
//! ```
//!
//! The cases cover what real invoices do to an extraction (one kind in
//! eight of the corpus each): a clean invoice; a line item printed apart
//! from the table (under "Additional charges"); dates written in other
//! formats; no purchase order but a reference number that looks like one;
//! no invoice number at all; a total that does not add up on the page
//! itself; a printed due date that conflicts with the payment terms; and a
//! clean invoice with every optional field.

#[path = "common/calendar.rs"]
mod calendar;
#[path = "common/pdf.rs"]
mod pdf;

use std::path::{Path, PathBuf};

use pdf_writer::{Name, Pdf, Rect, Ref};
use serde_json::{Value, json};

use calendar::{MONTHS, date_of};

/// What a case does to an extraction.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Clean,
    ItemApart,
    OtherDateFormats,
    NoPurchaseOrder,
    NoInvoiceNumber,
    TotalDoesNotAddUp,
    ConflictingTerms,
    Complete,
}

const KINDS: [Kind; 8] = [
    Kind::Clean,
    Kind::ItemApart,
    Kind::OtherDateFormats,
    Kind::NoPurchaseOrder,
    Kind::NoInvoiceNumber,
    Kind::TotalDoesNotAddUp,
    Kind::ConflictingTerms,
    Kind::Complete,
];

const CASES: usize = 64;

const VENDORS: [&str; 8] = [
    "Nordlicht Office Supplies GmbH",
    "Harbor & Pike Consulting LLC",
    "Atelier Moreau SARL",
    "Blue Fern Catering Ltd",
    "Kestrel Logistics B.V.",
    "Quarry Lane Print Works",
    "Sato Precision Parts K.K.",
    "Oakridge Facility Services Inc.",
];

const ITEMS: [&str; 12] = [
    "Ergonomic chairs (3)",
    "Standing desk frame",
    "Consulting, March (12 h)",
    "Travel expenses",
    "Catering for 40 guests",
    "Pallet storage, 2 weeks",
    "Business cards (500)",
    "CNC bracket, batch of 20",
    "Window cleaning, 3 floors",
    "Software licence (annual)",
    "Laptop docking station",
    "On-site workshop (1 day)",
];

/// A small deterministic generator (SplitMix64), so the corpus never changes
/// unless this program does.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

fn iso((month, day): (u32, u32)) -> String {
    format!("2026-{month:02}-{day:02}")
}

/// A date as some invoices print it: "1 March 2026", "03/01/2026" (US),
/// "01.03.2026".
fn other_format((month, day): (u32, u32), style: u64) -> String {
    match style % 3 {
        0 => format!("{day} {} 2026", MONTHS[month as usize - 1]),
        1 => format!("{month:02}/{day:02}/2026 (MM/DD/YYYY)"),
        _ => format!("{day:02}.{month:02}.2026"),
    }
}

fn money(cents: u64) -> String {
    let units = cents / 100;
    let grouped =
        if units >= 1000 { format!("{},{:03}", units / 1000, units % 1000) } else { units.to_string() };
    format!("{grouped}.{:02}", cents % 100)
}

struct Invoice {
    text: String,
    truth: Value,
}

fn invoice(index: usize) -> Invoice {
    let kind = KINDS[index % KINDS.len()];
    let mut dice = Dice(0x00C0_FFEE ^ (index as u64).wrapping_mul(0x1_0000_0001));
    let vendor = VENDORS[dice.roll(VENDORS.len() as u64) as usize];
    let number = format!("INV-{}", 1000 + index * 7 + dice.roll(7) as usize);
    let purchase_order = format!("PO-{}", 40_000 + dice.roll(9_000));
    let issued = dice.roll(300);
    let due = issued + 30;
    let item_count = 2 + dice.roll(4) as usize;
    let mut items: Vec<(String, u64)> = (0..item_count)
        .map(|k| {
            (
                ITEMS[(index * 5 + k * 7 + dice.roll(3) as usize) % ITEMS.len()].to_string(),
                1_500 + dice.roll(240_000),
            )
        })
        .collect();
    items.dedup_by(|a, b| a.0 == b.0);
    let apart =
        (kind == Kind::ItemApart).then(|| ("Delivery and packaging".to_string(), 2_500 + dice.roll(9_000)));
    let sum: u64 = items.iter().chain(apart.iter()).map(|(_, cents)| cents).sum();
    // The page's own arithmetic slip: the printed total is off by a round amount.
    let total = if kind == Kind::TotalDoesNotAddUp { sum + 10_000 } else { sum };

    let has_number = kind != Kind::NoInvoiceNumber;
    let has_order = matches!(kind, Kind::Complete | Kind::ConflictingTerms | Kind::OtherDateFormats)
        || index.is_multiple_of(3) && kind != Kind::NoPurchaseOrder;
    let has_due = kind != Kind::Clean || index.is_multiple_of(2);

    let mut text = format!(
        "{vendor}\n{} Market Street, Suite {}\n\nINVOICE\n",
        10 + dice.roll(90),
        100 + dice.roll(800)
    );
    if has_number {
        text.push_str(&format!("Invoice number: {number}\n"));
    } else {
        text.push_str("Statement of charges (no invoice number assigned yet)\n");
    }
    if has_order {
        text.push_str(&format!("Purchase order: {purchase_order}\n"));
    }
    if kind == Kind::NoPurchaseOrder {
        text.push_str(&format!("Reference: R-{}\n", 4_000 + dice.roll(5_000)));
    }
    let show = |date: u64| {
        if kind == Kind::OtherDateFormats { other_format(date_of(date), date) } else { iso(date_of(date)) }
    };
    text.push_str(&format!("Issued: {}\n", show(issued)));
    if has_due {
        text.push_str(&format!("Due: {}\n", show(due)));
    }
    if kind == Kind::ConflictingTerms {
        text.push_str("Terms: payment within 14 days of the issue date\n");
    }
    text.push_str("\nDescription                                 Amount\n");
    for (description, cents) in &items {
        text.push_str(&format!("{description:<40}{:>12}\n", money(*cents)));
    }
    text.push_str(
        "\nNotes: thank you for your business. Please quote the invoice number with your payment.\n",
    );
    if let Some((description, cents)) = &apart {
        text.push_str(&format!("\nAdditional charges\n{description:<40}{:>12}\n", money(*cents)));
    }
    text.push_str(&format!("\nTOTAL DUE{:>43} EUR\n", money(total)));

    let line_items: Vec<Value> = items
        .iter()
        .chain(apart.iter())
        .map(|(description, cents)| json!({"description": description, "amount": *cents as f64 / 100.0}))
        .collect();
    let truth = json!({
        "invoice_number": if has_number { json!(number) } else { Value::Null },
        "purchase_order": if has_order { json!(purchase_order) } else { Value::Null },
        "vendor": vendor,
        "issue_date": iso(date_of(issued)),
        "due_date": if has_due { json!(iso(date_of(due))) } else { Value::Null },
        "line_items": line_items,
        "total": total as f64 / 100.0,
    });
    Invoice { text, truth }
}

/// A one-page PDF whose text layer is `text`, line by line, in Courier
/// (a standard font: nothing embedded).
fn pdf(text: &str) -> Vec<u8> {
    let (catalog, pages, page, font, content_id) =
        (Ref::new(1), Ref::new(2), Ref::new(3), Ref::new(4), Ref::new(5));
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(pages);
    pdf.pages(pages).kids([page]).count(1);
    let mut page_writer = pdf.page(page);
    page_writer.media_box(Rect::new(0.0, 0.0, 595.0, 842.0)).parent(pages).contents(content_id);
    page_writer.resources().fonts().pair(Name(b"F1"), font);
    drop(page_writer);
    pdf.type1_font(font).base_font(Name(b"Courier"));
    pdf.stream(content_id, &pdf::page_content(text));
    pdf.finish()
}

/// The corpus's files, by name: `inv-NNN.json`, `inv-NNN.txt`, and for
/// every fourth case `inv-NNN.pdf`.
pub fn files() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for index in 0..CASES {
        let Invoice { text, truth } = invoice(index);
        let name = format!("inv-{:03}", index + 1);
        let mut json = serde_json::to_string_pretty(&truth).expect("JSON");
        json.push('\n');
        files.push((format!("{name}.json"), json.into_bytes()));
        if index % 4 == 3 {
            files.push((format!("{name}.pdf"), pdf(&text)));
        }
        files.push((format!("{name}.txt"), text.into_bytes()));
    }
    files
}

fn main() -> std::io::Result<()> {
    let dir: PathBuf = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/corpus"));
    std::fs::create_dir_all(&dir)?;
    let files = files();
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes)?;
    }
    println!("wrote {} files for {CASES} cases to {}", files.len(), dir.display());
    Ok(())
}
