//! Writes the long documents of `examples/long/`: bank statements and long
//! invoices of 5 to 40 pages and 20 to 800 items, each a text whose pages
//! are separated by form feeds (`\f`, as a PDF's text layer separates them)
//! and the JSON a right extraction gives; three of them also as multi-page
//! PDFs (written with `pdf-writer`, one PDF page for each page of the
//! `.txt`). Deterministic: the same program writes the same bytes (its only
//! chance is a fixed-seed generator), and `tests/docs/long_corpus.rs` checks
//! that the committed corpus is what it writes and that every truth passes
//! `extract::validate` against its text.
//!
//! ```text
//! cargo run --example make_long            # rewrites examples/long/
//! cargo run --example make_long -- DIR     # writes into DIR instead
//! ```
//!
//! It is the corpus of long documents gathered window by window (DESIGN.md,
//! "Long documents: windows owned by quotes"): the tests and the bench of
//! that engine extract from it, with the stand-in model of
//! `examples/common/long_stand_in.rs`. The truth's types are in
//! `examples/common/long_documents.rs`: a `Statement` (account, opening and
//! closing balance, transactions whose sum is the difference of the two)
//! and a `LongInvoice` (number, total, line items that add up to it). Each
//! item's description is a `Sourced<String>` whose quote is the item's whole
//! line, so the quote says where the item lies, and which window owns it.
//!
//! The documents carry what real long documents do to a windowed
//! extraction:
//!
//! - Every page repeats its header (the bank's name, the account line, the
//!   period) or its footer, with the page's number in it ("Statement of
//!   account - page 4 of 12", "Invoice INV-2026-0417 - page 4 of 8"): the
//!   line a window starts at, since it occurs once.
//! - Identical item lines (same date, description and amount: two metro
//!   tickets the same day, two courier deliveries) on one page and across a
//!   page break, the last line of a page printed again as the first item of
//!   the next: ownership by position must keep both.
//! - Invoice pages after the first have no header: their first line is an
//!   item, so a window starts at an item's own line; where that first item
//!   repeats the line before the break, the window starts at the page's
//!   second line instead and the repeated item belongs to the window before.
//! - Amounts of a thousand and more, printed `1,250.00` (`1250.0` in the
//!   JSON), and debits printed negative; the opening and closing balances
//!   printed as table rows that are not transactions.
//! - A statement with a page of notices and no transaction at all.

#[path = "common/calendar.rs"]
mod calendar;
#[path = "common/dice.rs"]
mod dice;
#[path = "common/pdf.rs"]
mod pdf;

use std::path::{Path, PathBuf};

use pdf_writer::{Name, Pdf, Rect, Ref};

use calendar::{MONTHS, date_of};
use dice::Dice;

impl Dice {
    /// An amount in cents from `low` to `high` (inclusive) in steps of
    /// `step`; `step` 0 is the fixed amount `low`.
    fn amount(&mut self, (low, high, step): (i64, i64, i64)) -> i64 {
        if step == 0 {
            return low;
        }
        low + step * self.roll(((high - low) / step + 1) as u64) as i64
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Statement,
    Invoice,
}

/// One document of the corpus and how it is made.
struct Spec {
    name: &'static str,
    kind: Kind,
    pages: usize,
    items: usize,
    seed: u64,
    /// Also written as a PDF with a text layer.
    pdf: bool,
    /// The pages whose last item is printed again as the next page's first
    /// (1-based).
    straddles: &'static [usize],
    /// A page of notices without items (1-based).
    empty_page: Option<usize>,
}

const SPECS: [Spec; 8] = [
    Spec {
        name: "statement-05",
        kind: Kind::Statement,
        pages: 5,
        items: 24,
        seed: 0x5EED_0005,
        pdf: true,
        straddles: &[3],
        empty_page: None,
    },
    Spec {
        name: "statement-08",
        kind: Kind::Statement,
        pages: 8,
        items: 20,
        seed: 0x5EED_0008,
        pdf: false,
        straddles: &[],
        empty_page: Some(5),
    },
    Spec {
        name: "statement-12",
        kind: Kind::Statement,
        pages: 12,
        items: 150,
        seed: 0x5EED_0012,
        pdf: true,
        straddles: &[3, 9],
        empty_page: None,
    },
    Spec {
        name: "statement-30",
        kind: Kind::Statement,
        pages: 30,
        items: 300,
        seed: 0x5EED_0030,
        pdf: false,
        straddles: &[3, 17],
        empty_page: None,
    },
    Spec {
        name: "statement-40",
        kind: Kind::Statement,
        pages: 40,
        items: 800,
        seed: 0x5EED_0040,
        pdf: false,
        straddles: &[3, 6, 22],
        empty_page: None,
    },
    Spec {
        name: "invoice-05",
        kind: Kind::Invoice,
        pages: 5,
        items: 60,
        seed: 0x1A70_0005,
        pdf: false,
        straddles: &[2],
        empty_page: None,
    },
    Spec {
        name: "invoice-08",
        kind: Kind::Invoice,
        pages: 8,
        items: 120,
        seed: 0x1A70_0008,
        pdf: true,
        straddles: &[3],
        empty_page: None,
    },
    Spec {
        name: "invoice-12",
        kind: Kind::Invoice,
        pages: 12,
        items: 300,
        seed: 0x1A70_0012,
        pdf: false,
        straddles: &[6],
        empty_page: None,
    },
];

/// A statement's lines: what they say and their amounts in cents (low,
/// high, step; step 0 a fixed amount). Rent and salary come once a month
/// (`MONTHLY`), not from here.
const STATEMENT_LINES: [(&str, (i64, i64, i64)); 15] = [
    ("Card payment - Corner Bakery", (-2500, -300, 5)),
    ("Card payment - Fresh Market Supermarket", (-18000, -1500, 1)),
    ("Card payment - Metro ticket machine", (-290, -290, 0)),
    ("Card payment - Metro ticket machine", (-290, -290, 0)),
    ("Card payment - Petrol station A12", (-9000, -3000, 1)),
    ("Direct debit - City Power & Light", (-14000, -6000, 1)),
    ("Direct debit - Telecom mobile plan", (-2999, -2999, 0)),
    ("Online purchase - Bookshop Ltd", (-6000, -800, 1)),
    ("ATM withdrawal - Harbour Street", (-40000, -2000, 2000)),
    ("Transfer from J. Okafor", (2000, 50000, 500)),
    ("Refund - Fresh Market Supermarket", (200, 4000, 1)),
    ("Transfer to savings 4471-889", (-200000, -10000, 5000)),
    ("Card payment - Corner Bakery", (-2500, -300, 5)),
    ("Interest paid", (50, 1500, 1)),
    ("Account fee", (-450, -450, 0)),
];

/// The first item of each month is the rent; the first on or after the
/// 25th, the salary.
const MONTHLY: [(&str, i64); 2] =
    [("Standing order - Rent Flat 4B", -125_000), ("Salary - Kestrel Logistics B.V.", 385_000)];

/// An invoice's lines, as `STATEMENT_LINES`.
const INVOICE_LINES: [(&str, (i64, i64, i64)); 12] = [
    ("Courier delivery, zone 1", (950, 950, 0)),
    ("Courier delivery, zone 2", (1850, 1850, 0)),
    ("Courier delivery, zone 2", (1850, 1850, 0)),
    ("Pallet storage, 1 week", (4200, 4200, 0)),
    ("Express surcharge", (2500, 2500, 0)),
    ("Warehouse handling, per hour", (3500, 28000, 3500)),
    ("Poster print A1, batch of 10", (12000, 40000, 500)),
    ("Business cards (500)", (8900, 8900, 0)),
    ("Freight, Rotterdam to Lyon", (105_000, 340_000, 1000)),
    ("Customs clearance fee", (6500, 6500, 0)),
    ("Credit: returned goods", (-30000, -2000, 100)),
    ("Packaging material", (1500, 9000, 1)),
];

/// The line printed twice in a row (on one page, and across page breaks).
fn repeated_line(kind: Kind) -> (&'static str, i64) {
    match kind {
        Kind::Statement => ("Card payment - Metro ticket machine", -290),
        Kind::Invoice => ("Courier delivery, zone 2", 1850),
    }
}

const VENDORS: [(&str, &str); 3] = [
    ("QUARRY LANE LOGISTICS LTD", "14 Dock Road, Felixstowe IP11 3QT"),
    ("KESTREL FREIGHT B.V.", "Havenweg 88, 3089 JB Rotterdam"),
    ("NORDLICHT PRINT & SUPPLY GMBH", "Speicherstrasse 5, 20457 Hamburg"),
];

const CUSTOMERS: [&str; 3] =
    ["Oakridge Facility Services Inc.", "Blue Fern Catering Ltd", "Atelier Moreau SARL"];

const HOLDERS: [&str; 5] = ["Maria Lindqvist", "Tomasz Wrobel", "Aiko Sato", "Daniel Okafor", "Ines Moreau"];

/// One item as the page prints it and the truth holds it.
#[derive(Debug, Clone)]
struct Item {
    /// Day of 2026, 0 for 1 January.
    day: u64,
    description: &'static str,
    cents: i64,
}

impl Item {
    /// Its line on the page: date, description, amount.
    fn line(&self) -> String {
        format!("{}  {:<46}{:>14}", iso(self.day), self.description, money(self.cents))
    }
}

fn iso(day: u64) -> String {
    let (month, day) = date_of(day);
    format!("2026-{month:02}-{day:02}")
}

/// "1 January 2026".
fn spelled(day: u64) -> String {
    let (month, day) = date_of(day);
    format!("{day} {} 2026", MONTHS[month as usize - 1])
}

/// An amount as pages print it: `-1,234.56`.
fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let digits = (abs / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{:02}", abs % 100)
}

/// A table row without a date: the balances, the total.
fn row(label: &str, cents: i64) -> String {
    format!("{:<12}{label:<46}{:>14}", "", money(cents))
}

/// How many items each page holds: about as many on every page, give or
/// take a quarter, none on the empty page.
fn page_counts(dice: &mut Dice, spec: &Spec) -> Vec<usize> {
    let (items, pages) = (spec.items, spec.pages);
    let jitter = items / pages / 4;
    let mut bounds = vec![0];
    for page in 1..pages {
        let ideal = items * page / pages;
        let shifted = (ideal + dice.roll(2 * jitter as u64 + 1) as usize).saturating_sub(jitter);
        let previous = bounds[page - 1];
        // The empty page ends where the page before it ends.
        let bound = if spec.empty_page == Some(page) { previous } else { shifted.clamp(previous, items) };
        bounds.push(bound);
    }
    bounds.push(items);
    bounds.windows(2).map(|pair| pair[1] - pair[0]).collect()
}

/// Prints `line` twice in a row at `at` and `at + 1`, on the day of `at`.
fn repeat_at(items: &mut [Item], at: usize, (description, cents): (&'static str, i64)) {
    let day = items[at].day;
    for item in &mut items[at..=at + 1] {
        *item = Item { day, description, cents };
    }
}

/// The items of a document in page order, and how many each page holds.
fn items(dice: &mut Dice, spec: &Spec) -> (Vec<Item>, Vec<usize>) {
    let (first_day, days) = match spec.kind {
        Kind::Statement => (0, (spec.items as u64 * 2 / 5).clamp(28, 364)),
        Kind::Invoice => (59, 31),
    };
    let mut paid = [None; 2];
    let mut items: Vec<Item> = (0..spec.items)
        .map(|k| {
            let day = first_day + k as u64 * days / spec.items as u64;
            if spec.kind == Kind::Statement {
                let (month, day_of_month) = date_of(day);
                let due = [true, day_of_month >= 25];
                for (which, (description, cents)) in MONTHLY.iter().enumerate() {
                    if due[which] && paid[which] != Some(month) {
                        paid[which] = Some(month);
                        return Item { day, description, cents: *cents };
                    }
                }
            }
            let lines: &[(&'static str, (i64, i64, i64))] =
                if spec.kind == Kind::Statement { &STATEMENT_LINES } else { &INVOICE_LINES };
            let (description, range) = lines[dice.roll(lines.len() as u64) as usize];
            Item { day, description, cents: dice.amount(range) }
        })
        .collect();
    let counts = page_counts(dice, spec);
    let starts: Vec<usize> = counts.iter().scan(0, |at, n| Some(std::mem::replace(at, *at + n))).collect();
    // On page 2, one line twice in a row; across each straddled break, the
    // page's last line again as the next page's first.
    if counts.len() > 1 && counts[1] >= 3 {
        repeat_at(&mut items, starts[1] + counts[1] / 2, repeated_line(spec.kind));
    }
    for &page in spec.straddles {
        if counts[page - 1] >= 1 && counts[page] >= 1 {
            repeat_at(&mut items, starts[page] - 1, repeated_line(spec.kind));
        }
    }
    (items, counts)
}

/// A written document: its text (pages joined by form feeds) and its truth.
struct Written {
    text: String,
    truth: String,
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string")
}

fn number(cents: i64) -> String {
    serde_json::to_string(&(cents as f64 / 100.0)).expect("a number")
}

fn sourced(value: &str, quote: &str) -> String {
    format!("{{\"value\": {}, \"quote\": {}}}", quoted(value), quoted(quote))
}

/// The truth as JSON: the fields one to a line, then the list, one item to
/// a line, so a diff of the corpus shows which items changed.
fn truth(fields: &[(&str, String)], list: &str, items: &[String]) -> String {
    let mut json = String::from("{\n");
    for (name, value) in fields {
        json.push_str(&format!("  {}: {value},\n", quoted(name)));
    }
    json.push_str(&format!("  {}: [\n    {}\n  ]\n}}\n", quoted(list), items.join(",\n    ")));
    json
}

fn statement(spec: &Spec) -> Written {
    let mut dice = Dice(spec.seed);
    let holder = HOLDERS[dice.roll(HOLDERS.len() as u64) as usize];
    let account = format!("{}-{:06}-{:02}", 4400 + dice.roll(100), dice.roll(1_000_000), dice.roll(100));
    let opening = 250_000 + dice.roll(2_250_000) as i64;
    let (items, counts) = items(&mut dice, spec);
    let closing = opening + items.iter().map(|item| item.cents).sum::<i64>();
    let last_day = items.last().map_or(0, |item| item.day).max(27);
    let account_quote = format!("Account number: {account}");
    let mut pages = Vec::new();
    let mut next = items.iter();
    for (page, count) in counts.iter().enumerate() {
        let mut text = format!(
            "NORTHGATE SAVINGS BANK\nStatement of account - page {} of {}\n{account_quote}    Holder: {holder}\n\
             Period: {} to {}\n\n",
            page + 1,
            spec.pages,
            spelled(0),
            spelled(last_day),
        );
        if spec.empty_page == Some(page + 1) {
            text.push_str(
                "Important information about your account\n\n\
                 From 1 March 2026 the monthly account fee is 4.50 EUR.\n\
                 Card payments abroad are free of charge within the euro area.\n\
                 Please check this statement and tell us of any error within 60 days.\n",
            );
        } else {
            text.push_str(&format!("{:<12}{:<46}{:>14}\n", "Date", "Description", "Amount"));
            if page == 0 {
                text.push_str(&row("Opening balance", opening));
                text.push('\n');
            }
            for item in next.by_ref().take(*count) {
                text.push_str(&item.line());
                text.push('\n');
            }
            if page + 1 == spec.pages {
                text.push_str(&row("Closing balance", closing));
                text.push('\n');
            }
        }
        text.push_str("\nNorthgate Savings Bank plc - Questions? Call 0800 123 4567\n");
        pages.push(text);
    }
    let lines: Vec<String> = items
        .iter()
        .map(|item| {
            format!(
                "{{\"description\": {}, \"date\": {}, \"amount\": {}}}",
                sourced(item.description, &item.line()),
                quoted(&iso(item.day)),
                number(item.cents)
            )
        })
        .collect();
    let fields = [
        ("account", sourced(&account, &account_quote)),
        ("opening_balance", number(opening)),
        ("closing_balance", number(closing)),
    ];
    Written { text: pages.join("\u{c}"), truth: truth(&fields, "transactions", &lines) }
}

fn invoice(spec: &Spec) -> Written {
    let mut dice = Dice(spec.seed);
    let (vendor, address) = VENDORS[dice.roll(VENDORS.len() as u64) as usize];
    let customer = CUSTOMERS[dice.roll(CUSTOMERS.len() as u64) as usize];
    let number_text = format!("INV-2026-{:04}", 400 + dice.roll(600));
    let (items, counts) = items(&mut dice, spec);
    let total: i64 = items.iter().map(|item| item.cents).sum();
    let number_quote = format!("Invoice number: {number_text}");
    let mut pages = Vec::new();
    let mut next = items.iter();
    for (page, count) in counts.iter().enumerate() {
        // Pages after the first start with their first item.
        let mut text = String::new();
        if page == 0 {
            text.push_str(&format!(
                "{vendor}\n{address}\n\nINVOICE\n{number_quote}\nBill to: {customer}\nIssued: {}    \
                 Terms: 30 days\n\n{:<12}{:<46}{:>14}\n",
                iso(90),
                "Date",
                "Description",
                "Amount (EUR)"
            ));
        }
        for item in next.by_ref().take(*count) {
            text.push_str(&item.line());
            text.push('\n');
        }
        if page + 1 == spec.pages {
            text.push_str(&format!("\n{}\n", row("TOTAL DUE (EUR)", total)));
            text.push_str("Payment within 30 days to IBAN GB29 NWBK 6016 1331 9268 19.\n");
        }
        text.push_str(&format!("\n{vendor} - Invoice {number_text} - page {} of {}\n", page + 1, spec.pages));
        pages.push(text);
    }
    let lines: Vec<String> = items
        .iter()
        .map(|item| {
            format!(
                "{{\"description\": {}, \"amount\": {}}}",
                sourced(item.description, &item.line()),
                number(item.cents)
            )
        })
        .collect();
    let fields = [("invoice_number", sourced(&number_text, &number_quote)), ("total", number(total))];
    Written { text: pages.join("\u{c}"), truth: truth(&fields, "line_items", &lines) }
}

/// A PDF of one page for each form-feed-separated page of `text`, line by
/// line in Courier (a standard font: nothing embedded), so its text layer
/// is `text`.
fn pdf(text: &str) -> Vec<u8> {
    let pages: Vec<&str> = text.split('\u{c}').collect();
    let (catalog, tree, font) = (Ref::new(1), Ref::new(2), Ref::new(3));
    let page_ref = |i: usize| Ref::new(4 + 2 * i as i32);
    let content_ref = |i: usize| Ref::new(5 + 2 * i as i32);
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids((0..pages.len()).map(page_ref)).count(pages.len() as i32);
    pdf.type1_font(font).base_font(Name(b"Courier"));
    for (i, page) in pages.iter().enumerate() {
        let mut page_writer = pdf.page(page_ref(i));
        page_writer.media_box(Rect::new(0.0, 0.0, 595.0, 842.0)).parent(tree).contents(content_ref(i));
        page_writer.resources().fonts().pair(Name(b"F1"), font);
        drop(page_writer);
        pdf.stream(content_ref(i), &pdf::page_content(page));
    }
    pdf.finish()
}

/// The corpus's files, by name: `NAME.json`, `NAME.txt`, and for three
/// documents `NAME.pdf`.
pub fn files() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for spec in &SPECS {
        let Written { text, truth } = match spec.kind {
            Kind::Statement => statement(spec),
            Kind::Invoice => invoice(spec),
        };
        files.push((format!("{}.json", spec.name), truth.into_bytes()));
        if spec.pdf {
            files.push((format!("{}.pdf", spec.name), pdf(&text)));
        }
        files.push((format!("{}.txt", spec.name), text.into_bytes()));
    }
    files
}

fn main() -> std::io::Result<()> {
    let dir: PathBuf = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/long"));
    std::fs::create_dir_all(&dir)?;
    let files = files();
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes)?;
    }
    let size: usize = files.iter().map(|(_, bytes)| bytes.len()).sum();
    println!("wrote {} files of {} documents ({size} bytes) to {}", files.len(), SPECS.len(), dir.display());
    Ok(())
}
