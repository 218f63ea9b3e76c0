"""Evaluating a model task against its golden set: what `interlock eval` runs.

A golden case is one JSON object a line, `{"inputs": {...}, "expected": {field: value}}`:
the inputs a stage would give the model and the fields its answer should have. Each case is
asked of the model under a prompt (a released version, or a candidate's words not yet
released), and the answer is checked as the runtime checks it — against the task's output
model — and field by field against the expectation. The figures: how many answers were
valid, the share of cases that agree per expected field (of the cases that expect it), tokens,
cost and latency. A shadow run's cases (`interlock.ops.shadow`) may also carry what a person
approved (`approved`), reported apart as `approved_agreement`. A run passes when every ratio
reaches the threshold: the gate a prompt or model change must pass.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from interlock._sdk.models import ModelTask
from interlock.ops.errors import GoldenSetError
from interlock.services.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.ports import ModelClient, ModelRequest, output_schema

MAX_CASES = 10_000
"""A golden set larger than this is refused rather than read whole."""
CANDIDATE = "candidate-"
"""The prompt version a candidate's words are asked under: `candidate-<digest>`."""


@dataclass(frozen=True)
class Case:
    inputs: dict[str, Any]
    expected: dict[str, Any]
    approved: dict[str, Any] = field(default_factory=dict)
    """The values a person settled for some output fields (shadow runs only)."""
    case_key: str | None = None


def golden_cases(path: Path) -> list[Case]:
    """The cases of a golden set; `GoldenSetError` naming the line of the first bad one."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise GoldenSetError(f"the golden set {path} cannot be read: {why}") from None
    cases = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            case = Case(dict(record["inputs"]), dict(record["expected"]))
        except (ValueError, KeyError, TypeError):
            raise GoldenSetError(
                f"{path}:{number}: not a golden case (a JSON object with inputs and expected)"
            ) from None
        cases.append(case)
        if len(cases) > MAX_CASES:
            raise GoldenSetError(f"{path}: more than {MAX_CASES} cases")
    if not cases:
        raise GoldenSetError(f"{path}: no cases")
    return cases


def candidate_version(instructions: str) -> str:
    """The version a candidate prompt is asked under, named by its words' digest."""
    return CANDIDATE + hashlib.sha256(instructions.encode()).hexdigest()[:12]


def _agrees(answer: Mapping[str, Any], name: str, expected: Any) -> bool:
    value = answer.get(name)
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        try:
            return abs(float(value) - float(expected)) < 1e-9  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
    if isinstance(expected, str) and isinstance(value, str) and value != expected:
        try:  # amounts: "25" and "25.00" are the same decision
            return Decimal(value) == Decimal(expected)
        except InvalidOperation:
            return False
    return bool(value == expected)


def _ratios(agreed: Mapping[str, int], asked: Mapping[str, int]) -> dict[str, float]:
    return {f: round(agreed[f] / asked[f], 4) for f in sorted(asked) if asked[f]}


@dataclass
class _Tally:
    valid: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


async def evaluate(
    task: ModelTask,
    cases: Sequence[Case],
    model: ModelClient,
    *,
    prompt_version: str,
    threshold: float,
) -> dict[str, Any]:
    """Ask `model` every case under `prompt_version` and report the figures (see the
    module's docstring); a reply's cost is what its client priced it at (`PricedModel`).
    A call that fails (unavailable, rejected) counts as an invalid answer."""
    output: type[BaseModel] | None = task.output
    schema = output_schema(output) if output is not None else {}
    asked = Counter(f for case in cases for f in case.expected)
    approved = Counter(f for case in cases for f in case.approved)
    agreed, settled = Counter[str](), Counter[str]()
    tally, latencies, cost = _Tally(), [], Decimal(0)
    models: set[str] = set()
    for case in cases:
        request = ModelRequest(
            task=task.name,
            prompt_version=prompt_version,
            inputs=case.inputs,
            output_schema=schema,
            case_key=case.case_key,
        )
        started = time.perf_counter()
        try:
            reply = await model.complete(request)
        except (ExternalRejected, ExternalTimeout, ExternalUnavailable):
            tally.failed += 1
            latencies.append((time.perf_counter() - started) * 1000)
            continue
        latencies.append(reply.latency_ms)
        models.add(reply.model)
        tally.tokens_in += reply.prompt_tokens
        tally.tokens_out += reply.completion_tokens
        cost += reply.cost
        answer = reply.output
        if output is not None:
            try:
                answer = output.model_validate(reply.output).model_dump(mode="json")
            except ValidationError:
                continue
        tally.valid += 1
        for name, expected in case.expected.items():
            agreed[name] += _agrees(answer, name, expected)
        for name, expected in case.approved.items():
            settled[name] += _agrees(answer, name, expected)
    n = len(cases)
    schema_valid = round(tally.valid / n, 4) if n else 0.0
    agreement = _ratios(agreed, asked)
    approved_agreement = _ratios(settled, approved)
    return {
        "task": task.name,
        "prompt_version": prompt_version,
        "models": sorted(models),
        "cases": n,
        "schema_valid": schema_valid,
        "agreement": agreement,
        "approved_agreement": approved_agreement,
        "approved_cases": dict(sorted(approved.items())),
        "failed_calls": tally.failed,
        "tokens": {"input": tally.tokens_in, "output": tally.tokens_out},
        "cost": float(cost),
        "latency_ms_p50": round(statistics.median(latencies), 2) if latencies else None,
        "threshold": threshold,
        "passed": bool(n)
        and all(
            r >= threshold
            for r in (schema_valid, *agreement.values(), *approved_agreement.values())
        ),
    }
