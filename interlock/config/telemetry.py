"""Telemetry for one Interlock process: OTLP when configured, local span files, metrics, and
(in the relay) the Prometheus scrape endpoint."""

from __future__ import annotations

import logging
from pathlib import Path

from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from interlock.config.settings import Settings
from interlock.otel import setup
from interlock.otel.local import JsonLinesSpanExporter

log = logging.getLogger("interlock.metrics")

SCRAPED = "relay"
"""The process that serves `/metrics`: its gauges are sampled from the database, so one
endpoint reports the whole installation's figures whichever process decided."""


def traces_dir(settings: Settings) -> Path:
    return settings.home / "traces"


def metrics_url(settings: Settings) -> str | None:
    """Where the scrape endpoint answers (None: switched off, or no metrics at all)."""
    if not settings.metrics_port or setup.disabled():
        return None
    return f"http://{settings.metrics_host}:{settings.metrics_port}/metrics"


def _scrape_endpoint(settings: Settings) -> list[MetricReader]:
    """A Prometheus reader served on `metrics_host:metrics_port`; none when switched off or
    when the port is taken (logged: metrics never stop the relay)."""
    if not settings.metrics_port:
        return []
    from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: PLC0415
    from prometheus_client import start_http_server  # noqa: PLC0415

    try:
        start_http_server(settings.metrics_port, addr=settings.metrics_host)
    except OSError as exc:
        log.warning("no metrics endpoint on %s: %s", metrics_url(settings), exc)
        return []
    return [PrometheusMetricReader()]


def start(settings: Settings, process: str) -> None:
    """Configure tracing and metrics for this process (no-op if already configured)."""
    provider = setup.configure_tracing(f"interlock-{process}")
    if provider is not None and settings.local_traces:
        exporter = JsonLinesSpanExporter(traces_dir(settings), process)
        # A short delay so `interlock trace` sees a workflow's spans a second after it moves.
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    readers = _scrape_endpoint(settings) if process == SCRAPED else []
    setup.configure_metrics(f"interlock-{process}", readers)


def stop() -> None:
    setup.shutdown()
