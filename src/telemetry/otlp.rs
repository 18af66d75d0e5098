//! The one-call OTLP setup (feature `otel`).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

use super::METRICS_TARGET;
use crate::Error;

/// What [`init_otlp`] set up; dropping it flushes and shuts down the
/// exporters, so the last spans are not lost when a program ends.
#[must_use = "dropping the guard shuts telemetry down at once"]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

/// Exports `extract`'s spans and metrics to the OTLP/HTTP collector at
/// `endpoint` (`http://127.0.0.1:4318`: traces go to `/v1/traces`, metrics
/// to `/v1/metrics`), as the process's global `tracing` subscriber. The
/// service is named by `OTEL_SERVICE_NAME` when set. `Err` when the
/// exporters cannot be built or a global subscriber is already set.
pub fn init_otlp(endpoint: &str) -> Result<Telemetry, Error> {
    let base = endpoint.trim_end_matches('/').to_string();
    // The exporters' blocking HTTP client is made (and later dropped) away
    // from any async runtime the caller may be inside.
    let (tracer, meter) = std::thread::spawn(move || -> Result<_, Error> {
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(format!("{base}/v1/traces"))
            .build()
            .map_err(|e| Error::config(format!("cannot build the OTLP span exporter for {base}: {e}")))?;
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_endpoint(format!("{base}/v1/metrics"))
            .build()
            .map_err(|e| Error::config(format!("cannot build the OTLP metric exporter for {base}: {e}")))?;
        let tracer = SdkTracerProvider::builder().with_batch_exporter(spans).build();
        let meter = SdkMeterProvider::builder().with_periodic_exporter(metrics).build();
        Ok((tracer, meter))
    })
    .join()
    .map_err(|_| Error::config("the OTLP exporters panicked while being built"))??;
    let traces = tracing_opentelemetry::layer()
        .with_tracer(tracer.tracer("extract"))
        .with_filter(tracing_subscriber::filter::filter_fn(|metadata| metadata.target() != METRICS_TARGET));
    let metrics = tracing_opentelemetry::MetricsLayer::new(meter.clone());
    let subscriber = tracing_subscriber::registry().with(traces).with(metrics);
    tracing::subscriber::set_global_default(subscriber).map_err(|e| {
        Error::config(format!("cannot set extract's telemetry as the global subscriber: {e}"))
    })?;
    Ok(Telemetry { tracer: Some(tracer), meter: Some(meter) })
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let (tracer, meter) = (self.tracer.take(), self.meter.take());
        // Flushed and shut down on a thread of its own: the exporters'
        // blocking client must not be dropped inside an async runtime.
        let _ = std::thread::spawn(move || {
            if let Some(tracer) = tracer {
                let _ = tracer.force_flush();
                let _ = tracer.shutdown();
            }
            if let Some(meter) = meter {
                let _ = meter.force_flush();
                let _ = meter.shutdown();
            }
        })
        .join();
    }
}
