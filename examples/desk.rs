//! A review desk on a run with escalations, offline: five invoices (one a
//! PDF without a text layer) go through `Bulk` with a scripted model and a
//! journal; four escalate (a misread total, a mistyped quote, a due date
//! before the issue date, a missing date with a currency that is no
//! choice). The desk then serves them on 127.0.0.1 and prints the address;
//! open it in a browser, fix or reject each, and stop it with Ctrl+C. The
//! journal keeps every decision: `Journal::sqlite(path).summary()?` reads
//! them back (`reviews`), and `Report::reviews` puts them in the run report.
//!
//! ```text
//! cargo run --example desk --features desk                     # a new journal in the temporary directory, port 8088
//! cargo run --example desk --features desk -- runs/desk.db 0   # that journal (made once), any free port
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use extract::desk::Desk;

#[path = "../tests/support/desk_run.rs"]
mod desk_run;

use desk_run::Invoice;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let journal = args.next().map(PathBuf::from).unwrap_or_else(|| {
        let path = std::env::temp_dir().join(format!("extract-desk-example-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    });
    let port = args.next().unwrap_or_else(|| "8088".into());
    let pdf = desk_run::pdf_bytes();
    let documents =
        if journal.exists() { desk_run::documents(&pdf) } else { desk_run::run(&journal, &pdf).await };
    let desk = match Desk::<Invoice>::new(&journal, documents) {
        Ok(desk) => desk,
        Err(error) => {
            eprintln!("cannot open the desk: {error}");
            return ExitCode::FAILURE;
        }
    };
    let serving = match desk.bind(&format!("127.0.0.1:{port}")).await {
        Ok(serving) => serving,
        Err(error) => {
            eprintln!("cannot serve the desk: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("journal: {}", journal.display());
    println!("review desk: {}", serving.url());
    match serving.run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
