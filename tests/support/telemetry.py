"""One SDK tracer and meter provider for the whole test session, recording in memory.

OpenTelemetry allows a process one global provider; tests that read spans or metrics share
these and look only at what their own workflows produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass(frozen=True)
class Recorded:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def finished(self) -> tuple[ReadableSpan, ...]:
        return self.spans.get_finished_spans()

    def _points(self, name: str) -> Iterator[tuple[tuple[tuple[str, Any], ...], float]]:
        data = self.metrics.get_metrics_data()
        for resource_metrics in data.resource_metrics if data else ():
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            key = tuple(sorted((point.attributes or {}).items()))
                            yield key, point.value  # type: ignore[union-attr]

    def counter(self, name: str) -> dict[tuple[tuple[str, Any], ...], float]:
        """Current cumulative value of a counter, per attribute set."""
        values: dict[tuple[tuple[str, Any], ...], float] = {}
        for key, value in self._points(name):
            values[key] = values.get(key, 0) + value
        return values

    def gauge(self, name: str) -> dict[tuple[tuple[str, Any], ...], float]:
        """Last observed value of a gauge, per attribute set (collected now)."""
        return dict(self._points(name))


@cache
def recorded() -> Recorded:
    resource = Resource.create({"service.name": "interlock-tests"})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracer_provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    return Recorded(spans, reader)
