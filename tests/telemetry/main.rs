//! extract's traces as OpenTelemetry sees them: the `tracing` spans go
//! through `tracing-opentelemetry` into the SDK's in-memory exporter, and
//! each test reads the exported spans attribute by attribute (names from
//! OpenTelemetry's GenAI conventions). With the feature `otel`, one test
//! exports over OTLP/HTTP, from a child process, to a receiver on
//! 127.0.0.1 that decodes the protobuf.

#[path = "../support/mod.rs"]
mod support;

#[cfg(feature = "otel")]
mod otlp;

use std::time::Duration;

use extract::model::Reply;
use extract::testing::Scripted;
use extract::{Bulk, Document, Extractable, Extractor, Retries, Usage};
use opentelemetry::trace::{SpanId, SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Record a receipt.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, Extractable)]
#[check(total > 0)]
pub struct Receipt {
    pub vendor: String,
    pub total: f64,
}

/// The document: its text must reach no span unless content capture is on.
pub const DOCUMENT: &str = "Confidential: Café Aurora, total 7.50";

/// A reply as a real API describes itself: id, model, stop reason, usage.
pub fn reply(total: f64, n: u32) -> Reply {
    Reply::tool_call(json!({"vendor": "Café Aurora", "total": total}))
        .with_usage(Usage::new(100, 20).with_cache(30, 40))
        .with_response(Some(format!("msg_{n}")), Some("scripted-2026".into()), Some("tool_use".into()))
}

/// The spans `work` makes, exported through tracing-opentelemetry.
fn spans(work: impl FnOnce()) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        // Another test's thread may have registered a callsite meanwhile,
        // cached as of interest to no one: ask every callsite again.
        tracing::callsite::rebuild_interest_cache();
        work();
    });
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a OtelValue> {
    attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> String {
    match attribute(&span.attributes, key) {
        Some(value) => value.as_str().into_owned(),
        None => panic!("{} has no {key}: {:?}", span.name, span.attributes),
    }
}

fn int(span: &SpanData, key: &str) -> i64 {
    match attribute(&span.attributes, key) {
        Some(OtelValue::I64(n)) => *n,
        other => panic!("{} has no integer {key}: {other:?}", span.name),
    }
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// Every string any span or event carries.
fn every_value(spans: &[SpanData]) -> String {
    let mut all = String::new();
    for span in spans {
        all.push_str(&span.name);
        for kv in span.attributes.iter().chain(span.events.iter().flat_map(|e| e.attributes.iter())) {
            all.push_str(&kv.value.as_str());
            all.push('\n');
        }
    }
    all
}

#[test]
fn a_valid_extraction_is_an_extract_span_over_a_chat_span_in_the_genai_names() {
    let spans = spans(|| {
        let outcome =
            Extractor::new(Scripted::new([reply(7.5, 1)])).extract_blocking::<Receipt>(DOCUMENT).unwrap();
        assert!(outcome.is_valid());
    });
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let extract = named(&spans, "extract receipt")[0];
    let chat = named(&spans, "chat scripted")[0];
    assert_eq!((extract.span_kind.clone(), chat.span_kind.clone()), (SpanKind::Internal, SpanKind::Client));
    assert_eq!(chat.parent_span_id, extract.span_context.span_id(), "the call is a child of its extraction");

    assert_eq!(text(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(text(chat, "gen_ai.provider.name"), "extract.scripted");
    assert_eq!(text(chat, "gen_ai.request.model"), "scripted");
    assert_eq!(text(chat, "gen_ai.response.model"), "scripted-2026");
    assert_eq!(text(chat, "gen_ai.response.id"), "msg_1");
    assert_eq!(text(chat, "gen_ai.response.finish_reasons"), "tool_use");
    // Input counts all input: 100 uncached, 30 read from the cache, 40 written.
    assert_eq!(int(chat, "gen_ai.usage.input_tokens"), 170);
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), 20);
    assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), 30);
    assert_eq!(int(chat, "gen_ai.usage.cache_creation.input_tokens"), 40);
    let validation = chat.events.events.iter().find(|e| e.name == "validation").expect("a validation event");
    assert_eq!(attribute(&validation.attributes, "extract.valid"), Some(&OtelValue::Bool(true)));

    assert_eq!(text(extract, "extract.tool"), "receipt");
    assert_eq!(text(extract, "extract.outcome"), "valid");
    assert_eq!(int(extract, "extract.attempts"), 1);
    assert_eq!(int(extract, "extract.rung"), 0);
    assert_eq!(int(extract, "extract.document.bytes"), DOCUMENT.len() as i64);
    assert!(text(extract, "extract.document.id").starts_with("doc-"));
    assert_eq!(int(extract, "gen_ai.usage.input_tokens"), 170);
    assert!(attribute(&extract.attributes, "extract.reason").is_none());
}

#[test]
fn a_corrected_extraction_has_a_chat_span_per_call_and_the_failed_ones_codes_and_paths() {
    let spans = spans(|| {
        let model = Scripted::new([reply(-1.0, 1), reply(7.5, 2)]);
        let outcome = Extractor::new(model).extract_blocking::<Receipt>(DOCUMENT).unwrap();
        assert_eq!(outcome.attempts(), 2);
    });
    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 2);
    let attempts: Vec<i64> = chats.iter().map(|c| int(c, "extract.attempt")).collect();
    assert_eq!(attempts, [1, 2]);
    let first = chats.iter().find(|c| int(c, "extract.attempt") == 1).unwrap();
    let validation = first.events.events.iter().find(|e| e.name == "validation").unwrap();
    let get = |key| attribute(&validation.attributes, key).map(|v| v.as_str().into_owned());
    assert_eq!(get("extract.violation.codes").as_deref(), Some("check_failed"));
    assert_eq!(get("extract.violation.paths").as_deref(), Some("total"));
    assert_eq!(get("extract.violation.layer").as_deref(), Some("semantic"));
    let extract = named(&spans, "extract receipt")[0];
    assert_eq!((text(extract, "extract.outcome"), int(extract, "extract.attempts")), ("valid".into(), 2));
    assert_eq!(int(extract, "gen_ai.usage.output_tokens"), 40, "summed over both calls");
}

#[test]
fn an_escalation_carries_its_reason_and_what_it_cost() {
    let prices = extract::cost::PriceTable::new()
        .with("scripted", extract::cost::Prices::per_million(1.0, 1.0, 1.0, 1.0));
    let spans = spans(|| {
        let model = Scripted::new([reply(-1.0, 1), reply(-1.0, 2)]);
        let extractor = Extractor::new(model).prices(prices).retries(Retries::new(1).unwrap());
        assert!(!extractor.extract_blocking::<Receipt>(DOCUMENT).unwrap().is_valid());
    });
    let extract = named(&spans, "extract receipt")[0];
    assert_eq!(text(extract, "extract.outcome"), "escalated");
    assert_eq!(text(extract, "extract.reason"), "systematic");
    // 2 calls × (100 + 20 + 30 + 40) tokens at $1 per million.
    match attribute(&extract.attributes, "extract.cost_usd") {
        Some(OtelValue::F64(cost)) => assert!((cost - 380.0 / 1e6).abs() < 1e-12, "{cost}"),
        other => panic!("no cost: {other:?}"),
    }
}

#[test]
fn a_transport_failure_marks_the_call_and_the_extraction_with_its_error_type() {
    // A port nothing listens on: the connection is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let client = extract::anthropic::Client::builder()
        .api_key("test-key")
        .base_url(format!("http://{closed}"))
        .transport_retries(0)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let spans = spans(|| {
        let error = Extractor::new(client).extract_blocking::<Receipt>(DOCUMENT).unwrap_err();
        assert_eq!(error.kind(), extract::ErrorKind::Transport, "{error}");
    });
    let chat = spans.iter().find(|s| s.name.starts_with("chat ")).expect("a chat span");
    assert_eq!(text(chat, "gen_ai.provider.name"), "anthropic");
    assert_eq!(text(chat, "error.type"), "transport");
    let extract = named(&spans, "extract receipt")[0];
    assert_eq!(text(extract, "error.type"), "transport");
}

#[test]
fn a_bulk_runs_documents_are_root_spans_linked_to_the_run_span() {
    let spans = spans(|| {
        let model = Scripted::new([reply(1.0, 1), reply(2.0, 2), reply(-3.0, 3), reply(-3.0, 4)]);
        let documents = (1..=3).map(|i| Document::text(format!("Receipt {i}")).with_id(format!("r-{i}")));
        let bulk = Bulk::new(Extractor::new(model).retries(Retries::new(1).unwrap())).concurrency(1);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let report = runtime.block_on(bulk.run::<Receipt>(documents)).unwrap();
        assert_eq!((report.stats.valid(), report.stats.escalated()), (2, 1));
    });
    let run = named(&spans, "extract.run receipt")[0];
    assert_eq!(int(run, "extract.run.documents"), 3);
    assert_eq!((int(run, "extract.run.valid"), int(run, "extract.run.escalated")), (2, 1));
    let documents = named(&spans, "extract receipt");
    assert_eq!(documents.len(), 3);
    for document in documents {
        assert_eq!(document.parent_span_id, SpanId::INVALID, "a document's extraction is a root span");
        let links: Vec<SpanId> = document.links.iter().map(|l| l.span_context.span_id()).collect();
        assert_eq!(links, [run.span_context.span_id()], "linked to its run");
    }
    assert_eq!(named(&spans, "chat scripted").len(), 4);
}

#[test]
fn no_document_text_or_output_reaches_a_span_unless_content_capture_is_on() {
    let run = |capture: bool| {
        spans(|| {
            let model = Scripted::new([reply(-1.0, 1), reply(7.5, 2)]);
            let outcome =
                Extractor::new(model).trace_content(capture).extract_blocking::<Receipt>(DOCUMENT).unwrap();
            assert!(outcome.is_valid());
        })
    };
    let all = every_value(&run(false));
    assert!(!all.contains("Confidential") && !all.contains("Aurora"), "{all}");
    let all = every_value(&run(true));
    assert!(all.contains("Confidential: Café Aurora"), "the document, on opt-in: {all}");
    assert!(all.contains("\"vendor\":\"Café Aurora\""), "the output, on opt-in: {all}");
}

#[test]
fn metrics_count_tokens_durations_outcomes_and_attempts() {
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    let exporter = InMemoryMetricExporter::default();
    let provider =
        SdkMeterProvider::builder().with_reader(PeriodicReader::builder(exporter.clone()).build()).build();
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::MetricsLayer::new(provider.clone()));
    tracing::subscriber::with_default(subscriber, || {
        tracing::callsite::rebuild_interest_cache();
        let model = Scripted::new([reply(-1.0, 1), reply(7.5, 2)]);
        assert!(Extractor::new(model).extract_blocking::<Receipt>(DOCUMENT).unwrap().is_valid());
    });
    provider.force_flush().unwrap();
    let mut names = std::collections::BTreeSet::new();
    for resource in exporter.get_finished_metrics().unwrap() {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                names.insert(metric.name().to_string());
            }
        }
    }
    for expected in [
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "extract.outcomes",
        "extract.attempts",
    ] {
        assert!(names.contains(expected), "{expected} missing from {names:?}");
    }
}
