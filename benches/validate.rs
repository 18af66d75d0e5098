//! The cost of validation over deserialization alone.
//!
//! For the invoice of the check-language issue with 10, 1,000 and 100,000
//! line items, valid and with one failing check, this measures (a)
//! `Invoice::deserialize(&value)` alone and (b) the full `extract::validate`
//! (structure + semantic layers), and the same for an invoice whose line items
//! carry a `pattern` keyword (which serde does not enforce, so the schema
//! validator must run on every output).
//!
//! Run: `cargo bench --bench validate`. `benches/README.md` records the ratios (b)/(a).

mod common;

use std::hint::black_box;

use common::{Invoice, PatternedInvoice, output};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use extract::Extractable;

fn bench_type<T: Extractable>(c: &mut Criterion, name: &str) {
    let mut group = c.benchmark_group(name);
    for items in [10usize, 1_000, 100_000] {
        group.throughput(Throughput::Elements(items as u64));
        if items == 100_000 {
            group.sample_size(20);
        }
        for failing in [false, true] {
            let value = output(items, failing);
            let case = if failing { "one_failing_check" } else { "valid" };
            // Sanity: the outputs are what the case says.
            assert_eq!(extract::validate::<T>(&value, "").is_ok(), !failing);
            group.bench_with_input(BenchmarkId::new(format!("deserialize/{case}"), items), &value, |b, v| {
                b.iter(|| T::deserialize(black_box(v)).unwrap())
            });
            group.bench_with_input(BenchmarkId::new(format!("validate/{case}"), items), &value, |b, v| {
                b.iter(|| extract::validate::<T>(black_box(v), "").is_ok())
            });
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_type::<Invoice>(c, "invoice");
    bench_type::<PatternedInvoice>(c, "invoice_with_pattern");
}

criterion_group!(validation, benches);
criterion_main!(validation);
