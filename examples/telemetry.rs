//! The spans of one extraction with a correction, as OpenTelemetry sees
//! them (names and attributes from its GenAI conventions), printed as a
//! tree. With a collector, one call exports them instead:
//! `let _telemetry = extract::telemetry::init_otlp("http://127.0.0.1:4318")?;`
//!
//! ```text
//! cargo run --example telemetry --features otel
//! ```

use extract::model::Reply;
use extract::testing::Scripted;
use extract::{Extractable, Extractor, Usage};
use opentelemetry::trace::{SpanId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Record a receipt.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Extractable)]
#[check(total > 0)]
struct Receipt {
    vendor: String,
    total: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("conventions: {}\n", extract::telemetry::CONVENTIONS);
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("example")));
    tracing::subscriber::with_default(subscriber, || -> Result<(), extract::Error> {
        let answer = |total: f64, id: &str| {
            Reply::tool_call(json!({"vendor": "Café Aurora", "total": total}))
                .with_usage(Usage::new(900, 40).with_cache(0, 600))
                .with_response(Some(id.into()), Some("scripted-2026".into()), Some("tool_use".into()))
        };
        // The first answer breaks `total > 0`; the correction fixes it.
        let model = Scripted::new([answer(-7.5, "msg_1"), answer(7.5, "msg_2")]);
        Extractor::new(model).extract_blocking::<Receipt>("Café Aurora\nTotal 7.50")?;
        Ok(())
    })?;
    provider.force_flush()?;
    let spans = exporter.get_finished_spans()?;
    print_tree(&spans, SpanId::INVALID, 0);
    Ok(())
}

/// The spans under `parent`, oldest first, each with its attributes and events.
fn print_tree(spans: &[SpanData], parent: SpanId, depth: usize) {
    let mut children: Vec<&SpanData> = spans.iter().filter(|s| s.parent_span_id == parent).collect();
    children.sort_by_key(|s| s.start_time);
    let pad = "  ".repeat(depth);
    for span in children {
        println!("{pad}{} ({:?})", span.name, span.span_kind);
        for kv in &span.attributes {
            let key = kv.key.as_str();
            if key.starts_with("gen_ai.") || key.starts_with("extract.") || key == "error.type" {
                println!("{pad}  {key} = {}", kv.value);
            }
        }
        for event in span.events.iter() {
            let fields: Vec<String> = event
                .attributes
                .iter()
                .filter(|kv| kv.key.as_str().starts_with("extract."))
                .map(|kv| format!("{}={}", kv.key, kv.value))
                .collect();
            println!("{pad}  event {}: {}", event.name, fields.join(" "));
        }
        print_tree(spans, span.span_context.span_id(), depth + 1);
    }
}
