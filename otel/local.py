"""Spans kept on local disk, so `interlock trace` works with no collector or Jaeger.

Each process appends its finished spans as JSON lines to `<dir>/<service>-<pid>.jsonl`
(rotated once at a size cap). Only span metadata and Interlock's own attributes are written —
the same data that goes to OTLP, never payloads or prompts.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

MAX_BYTES = 64 * 2**20


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """The public shape of a span (`interlock trace --json`)."""
    context = span.get_span_context()
    assert context is not None
    parent = span.parent
    return {
        "trace_id": _hex(context.trace_id, 32),
        "span_id": _hex(context.span_id, 16),
        "parent_span_id": _hex(parent.span_id, 16) if parent else None,
        "name": span.name,
        "service": span.resource.attributes.get("service.name"),
        "kind": span.kind.name.lower(),
        "start": span.start_time,
        "end": span.end_time,
        "status": span.status.status_code.name.lower(),
        "attributes": dict(span.attributes or {}),
        "links": [
            {"trace_id": _hex(link.context.trace_id, 32), "span_id": _hex(link.context.span_id, 16)}
            for link in span.links
        ],
    }


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, directory: Path, service: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        # Host and pid: replicas of one component may share the directory (a volume).
        self._path = directory / f"{service}-{socket.gethostname()}-{os.getpid()}.jsonl"
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(span_record(s), default=str) + "\n" for s in spans)
        with self._lock:
            if self._path.exists() and self._path.stat().st_size > MAX_BYTES:
                self._path.replace(self._path.with_suffix(".jsonl.1"))
            with self._path.open("a", encoding="utf-8") as out:
                out.write(lines)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def read_spans(directory: Path, trace_ids: set[str]) -> Iterator[dict[str, Any]]:
    """Every locally recorded span of the given traces."""
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.jsonl*")):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if any(t in line for t in trace_ids):
                    record = json.loads(line)
                    if record["trace_id"] in trace_ids:
                        yield record
