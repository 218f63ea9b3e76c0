"""`interlock trace`: a workflow's causal tree, from the locally kept spans.

The workflow's audit rows name the traces its decisions were made in (usually one; a
signal that arrived without trace context starts another, linked to the first). Their spans
are read back from `<home>/traces` and arranged by parent.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from interlock.otel.local import read_spans


def trace_ids(view: dict[str, Any]) -> list[str]:
    """Distinct trace ids of the workflow's audit trail, in order of first appearance."""
    return list(dict.fromkeys(a["trace_id"] for a in view["audit"] if a.get("trace_id")))


def assemble(view: dict[str, Any], directory: Path) -> dict[str, Any]:
    """`{"trace_id", "trace_ids", "spans": [...]}` with spans sorted by start time."""
    ids = trace_ids(view)
    spans = sorted(read_spans(directory, set(ids)), key=lambda s: (s["start"], s["span_id"]))
    unique = {s["span_id"]: s for s in spans}
    return {
        "workflow_id": view["workflow_id"],
        "trace_id": ids[0] if ids else None,
        "trace_ids": ids,
        "spans": [_public(s) for s in unique.values()],
    }


def _public(span: dict[str, Any]) -> dict[str, Any]:
    return {
        k: span[k]
        for k in (
            "trace_id",
            "span_id",
            "parent_span_id",
            "name",
            "service",
            "kind",
            "start",
            "end",
            "status",
            "attributes",
            "links",
        )
    }


def render(tree: dict[str, Any]) -> list[str]:
    """Indented lines: one per span, children under parents, with durations and states."""
    spans = tree["spans"]
    known = {s["span_id"] for s in spans}
    children: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        parent = span["parent_span_id"] if span["parent_span_id"] in known else None
        children[parent].append(span)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for span in children[parent]:
            lines.append("  " * depth + _line(span))
            walk(span["span_id"], depth + 1)

    walk(None, 0)
    return lines


def _line(span: dict[str, Any]) -> str:
    ms = (span["end"] - span["start"]) / 1e6 if span["end"] else 0.0
    attributes = span["attributes"]
    notes = []
    if "interlock.to_state" in attributes and attributes.get("interlock.accepted"):
        notes.append(
            f"{attributes.get('interlock.from_state')} -> {attributes['interlock.to_state']}"
        )
    for key in ("interlock.rejection_reason", "interlock.dead_letter_reason"):
        if attributes.get(key):
            notes.append(f"refused: {attributes[key]}")
    failure = [
        str(attributes[k]) for k in ("interlock.error_class", "interlock.error") if k in attributes
    ]
    if failure:
        notes.append(f"failed: {': '.join(failure)}")
    if attributes.get("interlock.job_stale"):
        notes.append("stale job skipped")
    suffix = f"  [{'; '.join(notes)}]" if notes else ""
    return f"{span['name']} ({span['service']}) {ms:.1f} ms{suffix}"
