"""Telemetry for one Interlock process: OTLP when configured, local span files, metrics."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace.export import BatchSpanProcessor

from interlock.otel import setup
from interlock.otel.local import JsonLinesSpanExporter
from interlock.settings import Settings


def traces_dir(settings: Settings) -> Path:
    return settings.home / "traces"


def start(settings: Settings, process: str) -> None:
    """Configure tracing and metrics for this process (no-op if already configured)."""
    provider = setup.configure_tracing(f"interlock-{process}")
    if provider is not None and settings.local_traces:
        exporter = JsonLinesSpanExporter(traces_dir(settings), process)
        # A short delay so `interlock trace` sees a workflow's spans a second after it moves.
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    setup.configure_metrics(f"interlock-{process}")


def stop() -> None:
    setup.shutdown()
