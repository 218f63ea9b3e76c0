"""Causality you can see: every scenario through the whole stack, run inside the test process
so that the real OpenTelemetry SDK records every component's spans and metrics in memory."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from interlock.config.settings import Settings
from interlock.tools.demo import ScenarioResult, run_demo
from interlock.tools.demo.scenarios import SCENARIOS
from tests.support.inprocess import stack_in_process
from tests.support.telemetry import Recorded, recorded
from tests.support.workflow_rows import workflow_views

TERMINAL = {"COMPLETED", "REJECTED", "CANCELLED", "FAILED", "FAILED_COMPENSATED"}
pytestmark = pytest.mark.timeout(300)


@dataclass
class Observed:
    outcomes: dict[str, ScenarioResult]
    views: dict[str, dict[str, Any]]
    outcome_counts: Counter[str]
    recorded: Recorded

    def trace(self, name: str) -> list[ReadableSpan]:
        (trace_id,) = {a["trace_id"] for a in self.views[name]["audit"]}
        return [
            s for s in self.recorded.finished() if format(s.context.trace_id, "032x") == trace_id
        ]


@pytest.fixture(scope="module")
async def observed(e2e_settings: Settings, module_nats: str, module_database: str) -> Observed:
    rec = recorded()
    before = rec.counter("interlock.workflows.outcome")
    async with stack_in_process(e2e_settings, module_nats, module_database, "support"):
        outcomes = await run_demo(
            e2e_settings, module_nats, module_database, list(SCENARIOS), quiet=True
        )
    after = rec.counter("interlock.workflows.outcome")
    counts: Counter[str] = Counter()
    for key, value in after.items():
        attributes = dict(key)
        if attributes.get("workflow_type") == "support":
            counts[str(attributes["outcome"])] += int(value - before.get(key, 0))
    views = await workflow_views(module_database, [o.workflow_id for o in outcomes])
    return Observed(
        {o.name: o for o in outcomes},
        {o.name: views[o.workflow_id] or {} for o in outcomes},
        counts,
        rec,
    )


def _by_id(spans: list[ReadableSpan]) -> dict[int, ReadableSpan]:
    return {s.context.span_id: s for s in spans}


def _parent(span: ReadableSpan, spans: dict[int, ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    return spans[span.parent.span_id]


def test_scenarios_ran(observed: Observed) -> None:
    assert all(o.ok for o in observed.outcomes.values()), [
        (o.name, o.actual, o.failed_checks) for o in observed.outcomes.values() if not o.ok
    ]


def test_a_workflow_is_one_connected_trace_through_every_hop(observed: Observed) -> None:
    view = observed.views["happy_path"]
    spans = observed.trace("happy_path")
    by_id = _by_id(spans)
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["wf.in.request.support.upstream publish"]  # the ingress
    for span in spans:
        if span.parent is not None:
            assert span.parent.span_id in by_id, f"{span.name}: parent outside the trace"
    decisions = [s for s in spans if s.name.startswith("projector decide")]
    assert len(decisions) == len(view["audit"])  # every decision, accepted or refused
    assert {s.name.removeprefix("projector decide ") for s in decisions} == {
        a["event_type"] for a in view["audit"]
    }
    for decision in decisions:
        assert _parent(decision, by_id).kind is SpanKind.PRODUCER  # a publish fed it
    stage_spans = [s for s in spans if s.name.startswith("stage ")]
    jobs = [s for s in spans if s.name.startswith("wf.job.support.")]
    assert len(stage_spans) == len(jobs) >= 7
    for stage in stage_spans:
        publish = _parent(stage, by_id)
        assert publish.name == f"wf.job.support.{stage.name.removeprefix('stage ')} publish"
        assert _parent(publish, by_id).name.startswith("projector decide")  # via the outbox


def test_every_audit_row_records_the_trace_of_its_workflow(observed: Observed) -> None:
    for name, view in observed.views.items():
        traces = {a["trace_id"] for a in view["audit"]}
        assert len(traces) == 1, name
        assert None not in traces
        assert observed.trace(name), name


def test_decision_spans_carry_the_transition(observed: Observed) -> None:
    spans = observed.trace("happy_path")
    approved = next(s for s in spans if s.name == "projector decide APPROVED")
    attributes = dict(approved.attributes or {})
    assert attributes["interlock.from_state"] == "AWAITING_APPROVAL"
    assert attributes["interlock.to_state"] == "EXECUTING_ACTION"
    assert attributes["interlock.accepted"] is True
    assert attributes["interlock.workflow_id"] == observed.views["happy_path"]["workflow_id"]
    assert attributes["messaging.system"] == "nats"


def test_a_rejected_transition_produces_a_span_with_its_reason(observed: Observed) -> None:
    spans = observed.trace("late_approval_after_cancel")
    refused = [s for s in spans if (s.attributes or {}).get("interlock.rejection_reason")]
    assert [(s.name, (s.attributes or {})["interlock.rejection_reason"]) for s in refused] == [
        ("projector decide APPROVED", "terminal")
    ]


def test_outcome_counters_equal_the_scenario_outcomes(observed: Observed) -> None:
    expected = Counter(o.actual for o in observed.outcomes.values() if o.actual in TERMINAL)
    assert observed.outcome_counts == expected
