"""A minimal OTLP/HTTP trace receiver, run as its own process by tests.

It accepts `POST /v1/traces` (protobuf), decodes the request with the official
`opentelemetry-proto` package, and appends one JSON line per span (with its kind and scalar
attributes) to an output file. Other signals (the components' metrics) are accepted and
dropped unread. The port it listens on is printed as the first line of stdout.

    python -m tests.support.otlp_receiver OUTFILE
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

SCALARS = {"string_value", "bool_value", "int_value", "double_value"}


def _value(value: AnyValue) -> object:
    """A scalar attribute's value (arrays and maps, which Interlock does not set, as None)."""
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind in SCALARS else None


def _spans(request: ExportTraceServiceRequest) -> list[dict[str, object]]:
    found = []
    for resource_spans in request.resource_spans:
        service = next(
            (
                a.value.string_value
                for a in resource_spans.resource.attributes
                if a.key == "service.name"
            ),
            "",
        )
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex() or None,
                        "name": span.name,
                        "kind": Span.SpanKind.Name(span.kind),
                        "service": service,
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                        "links": [link.trace_id.hex() for link in span.links],
                    }
                )
    return found


def serve(out: Path) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with out.open("a", encoding="utf-8") as sink:
                    for span in _spans(request):
                        sink.write(json.dumps(span) + "\n")
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
