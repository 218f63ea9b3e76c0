"""What the workflow page shows besides the diagram: data with personal values and secrets
redacted, the recorded model calls, and the trace as a waterfall from the local spans."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from interlock.contracts.model_calls import calls_view

REDACTED = "[redacted]"
_SECRET = re.compile(
    r"secret|password|passwd|api_?key|authorization|credential|private_key|^token$|_token$",
    re.IGNORECASE,
)


def redact(value: Any, keys: frozenset[str]) -> Any:
    """`value` with the values of `keys` (personal data) and of secret-looking keys replaced."""
    if isinstance(value, Mapping):
        return {
            k: REDACTED if k.lower() in keys or _SECRET.search(str(k)) else redact(v, keys)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v, keys) for v in value]
    return value


def model_calls(
    execution: Mapping[str, Any], data: Mapping[str, Any], keys: frozenset[str]
) -> list[dict[str, Any]]:
    """Every model call of the workflow, in order, as the engine recorded each attempt (task
    and attempt, model and prompt version, verdict and errors, tokens, cost, latency, whether
    the data holds its value); output redacted. A workflow decided before the engine kept
    attempts shows the calls its data holds (the accepted ones only)."""
    if execution.get("model_calls"):
        return [{**c, "output": redact(c["output"], keys)} for c in calls_view(execution, data)]
    found: list[dict[str, Any]] = []
    for step, value in data.items():
        call = value.get("call") if isinstance(value, Mapping) else None
        if isinstance(call, Mapping) and "model" in call:
            failed = call.get("validation") == "failed"
            verdict = "invalid" if failed else "repaired" if call.get("repair") else "valid"
            tokens = call.get("tokens") or {}
            found.append(
                {
                    "seq": len(found) + 1,
                    "task": step,
                    "attempt": 1,
                    "model": call.get("model"),
                    "model_version": call.get("model_version"),
                    "prompt_version": call.get("prompt_version"),
                    "verdict": verdict,
                    "errors": call.get("errors") or [],
                    "latency_ms": call.get("latency_ms"),
                    "tokens": {
                        "input": tokens.get("prompt", 0),
                        "output": tokens.get("completion", 0),
                    },
                    "cost": 0.0,
                    "accepted": not failed,
                    "output": redact(call.get("output") or {}, keys),
                }
            )
    return found


def waterfall(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per span, parents before children, with its offset and width in percent of
    the whole trace, its depth, duration and any refusal."""
    if not spans:
        return []
    start = min(s["start"] for s in spans)
    end = max((s["end"] or s["start"]) for s in spans)
    total = max(end - start, 1)
    known = {s["span_id"] for s in spans}
    children: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        children[span["parent_span_id"] if span["parent_span_id"] in known else None].append(span)
    rows: list[dict[str, Any]] = []

    def walk(parent: str | None, depth: int) -> None:
        for span in children[parent]:
            finish = span["end"] or span["start"]
            attributes = span["attributes"]
            rows.append(
                {
                    "name": span["name"],
                    "service": span["service"],
                    "depth": depth,
                    "offset": 100 * (span["start"] - start) / total,
                    "width": max(100 * (finish - span["start"]) / total, 0.3),
                    "ms": (finish - span["start"]) / 1e6,
                    "refused": attributes.get("interlock.rejection_reason")
                    or attributes.get("interlock.dead_letter_reason"),
                }
            )
            walk(span["span_id"], depth + 1)

    walk(None, 0)
    return rows
