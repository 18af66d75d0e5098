//! The one-call setup, end to end: a child process calls
//! `extract::telemetry::init_otlp` with the address of a receiver on
//! 127.0.0.1 (real sockets, HTTP/1.1), runs an extraction with a
//! correction and drops the guard; the receiver decodes the OTLP protobuf
//! it was sent.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;

use super::{DOCUMENT, Receipt, reply};
use extract::Extractor;
use extract::testing::Scripted;

/// The bodies each path was sent.
type Received = Arc<Mutex<BTreeMap<String, Vec<Vec<u8>>>>>;

/// A receiver on a free port: every POST's body kept by path, answered 200.
fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let received: Received = Arc::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                // Requests one after another on the connection, until it closes.
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    kept.lock().unwrap().entry(path).or_default().push(body);
                    let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{address}"), received)
}

/// The child: telemetry set up in one call, one extraction with a
/// correction, the guard dropped (which flushes). Nothing as an ordinary test.
#[test]
fn child_process_exports_over_otlp() {
    let Ok(endpoint) = std::env::var("EXTRACT_OTLP_ENDPOINT") else { return };
    let telemetry = extract::telemetry::init_otlp(&endpoint).unwrap();
    let model = Scripted::new([reply(-1.0, 1), reply(7.5, 2)]);
    let outcome = Extractor::new(model).extract_blocking::<Receipt>(DOCUMENT).unwrap();
    assert!(outcome.is_valid());
    drop(telemetry);
}

#[test]
fn init_otlp_exports_the_spans_and_metrics_of_an_extraction_to_a_collector() {
    let (endpoint, received) = receiver();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["otlp::child_process_exports_over_otlp", "--exact", "--nocapture"])
        .env("EXTRACT_OTLP_ENDPOINT", &endpoint)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && said.contains("1 passed"), "{said}");

    let received = received.lock().unwrap();
    let traces = received.get("/v1/traces").expect("traces were exported");
    let mut spans = Vec::new();
    for body in traces {
        let request = ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP trace request");
        for resource in request.resource_spans {
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.iter().filter(|n| **n == "chat scripted").count(), 2, "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == "extract receipt").count(), 1, "{names:?}");
    let chat = spans.iter().find(|s| s.name == "chat scripted").unwrap();
    let operation = chat.attributes.iter().find(|kv| kv.key == "gen_ai.operation.name").unwrap();
    assert_eq!(operation.value.as_ref().unwrap().value, Some(Value::StringValue("chat".into())));
    let extract = spans.iter().find(|s| s.name == "extract receipt").unwrap();
    assert_eq!(chat.parent_span_id, extract.span_id, "the call under its extraction");

    let metrics = received.get("/v1/metrics").expect("metrics were exported");
    let mut metric_names = Vec::new();
    for body in metrics {
        let request = ExportMetricsServiceRequest::decode(body.as_slice()).expect("an OTLP metrics request");
        for resource in request.resource_metrics {
            for scope in resource.scope_metrics {
                metric_names.extend(scope.metrics.into_iter().map(|m| m.name));
            }
        }
    }
    assert!(metric_names.iter().any(|n| n == "gen_ai.client.token.usage"), "{metric_names:?}");
}
