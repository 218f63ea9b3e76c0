"""The one place Interlock configures OpenTelemetry providers — and only if none is set.

Honours the standard environment: `OTEL_SDK_DISABLED`, `OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` (`none` turns
OTLP off), `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal `_TRACES_`/`_METRICS_`
variants), `OTEL_EXPORTER_OTLP_PROTOCOL` (`grpc` or `http/protobuf`, the default) and the
exporters' own variables (headers, timeouts), which the exporters read themselves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import ProxyTracerProvider

NAMESPACE = "interlock"


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def _disabled() -> bool:
    return (os.environ.get("OTEL_SDK_DISABLED") or "").lower() == "true"


def disabled() -> bool:
    """Whether `OTEL_SDK_DISABLED` turns every provider (and so every exporter) off."""
    return _disabled()


def _protocol(signal: str) -> str:
    return _env(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL") or (
        "http/protobuf"
    )


def _otlp_wanted(signal: str) -> bool:
    chosen = (_env(f"OTEL_{signal}_EXPORTER") or "otlp").lower()
    endpoint = _env(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    return chosen != "none" and endpoint is not None


def resource(service_name: str) -> Resource:
    """`service.name` from OTEL_SERVICE_NAME if set, else Interlock's name for the process."""
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    return Resource.create({"service.name": name, "service.namespace": NAMESPACE})


def otlp_span_exporter() -> SpanExporter | None:
    if not _otlp_wanted("TRACES"):
        return None
    # Only the configured protocol's exporter is loaded, and only when OTLP is wanted: the
    # gRPC one brings grpcio (~90 ms at the start of every process).
    if _protocol("TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]  # noqa: PLC0415
            OTLPSpanExporter,
        )
    return OTLPSpanExporter()


def configure_tracing(
    service_name: str, exporters: Sequence[SpanExporter] = ()
) -> TracerProvider | None:
    """Install a tracer provider exporting to OTLP (if configured) and `exporters`.

    Returns None, changing nothing, when the SDK is disabled or a provider is already set
    (an embedding application, or a test with its own in-memory exporter).
    """
    if _disabled() or not isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        return None
    provider = TracerProvider(resource=resource(service_name))
    otlp = otlp_span_exporter()
    for exporter in (*([otlp] if otlp else []), *exporters):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def configure_metrics(
    service_name: str, readers: Sequence[MetricReader] = ()
) -> MeterProvider | None:
    """Install a meter provider exporting to OTLP (if configured) and `readers`."""
    if _disabled() or type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider":
        return None
    all_readers = list(readers)
    if _otlp_wanted("METRICS"):
        # As for spans: only the configured protocol's exporter, only when wanted.
        if _protocol("METRICS") == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (  # noqa: PLC0415
                OTLPMetricExporter,
            )
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[assignment]  # noqa: PLC0415
                OTLPMetricExporter,
            )
        all_readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
    provider = MeterProvider(resource=resource(service_name), metric_readers=all_readers)
    metrics.set_meter_provider(provider)
    return provider


def shutdown() -> None:
    """Flush and stop whatever providers `configure_*` installed."""
    tracer_provider = trace.get_tracer_provider()
    if isinstance(tracer_provider, TracerProvider):
        tracer_provider.shutdown()
    meter_provider = metrics.get_meter_provider()
    if isinstance(meter_provider, MeterProvider):
        meter_provider.shutdown()
