"""Every row of every definition's table is reachable and leads where it says; every
(state, event) pair outside the table is refused."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from interlock.definition import Transition, WorkflowDefinition
from interlock.projector.engine import Accepted, Context, Rejected, resolve
from interlock.projector.engine.model import Workflow
from tests.support.arrange import arrange
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
ROWS = [
    pytest.param(d, i, row, id=f"{d.workflow_type}.v{d.version}:{row.source}--{row.event}#{i}")
    for d in REGISTRY
    for i, row in enumerate(d.transitions)
]


@pytest.mark.parametrize(("definition", "index", "row"), ROWS)
def test_every_allowed_pair_reaches_its_expected_state(
    definition: WorkflowDefinition, index: int, row: Transition
) -> None:
    workflow, event, expected = arrange(definition, row, NOW)

    decision = resolve(definition, workflow, event, Context(now=NOW))

    assert isinstance(decision, Accepted), decision
    assert decision.transition == row
    assert decision.workflow.state == expected
    assert decision.workflow.version == workflow.version + 1


def _undefined_pairs() -> list[Any]:
    pairs = []
    for d in REGISTRY:
        defined = {(t.source, t.event) for t in d.transitions}
        pairs += [
            pytest.param(d, s, e.name, id=f"{d.workflow_type}.v{d.version}:{s}--{e.name}")
            for s in d.states
            for e in d.events
            if (s, e.name) not in defined
        ]
    return pairs


@pytest.mark.parametrize(("definition", "state", "event_type"), _undefined_pairs())
def test_every_undefined_pair_is_refused(
    definition: WorkflowDefinition, state: str, event_type: str
) -> None:
    workflow = Workflow(
        workflow_id="wf-1",
        workflow_type=definition.workflow_type,
        tenant_id="acme",
        state=state,
        version=3,
        definition_version=definition.version,
    )

    decision = resolve(definition, workflow, envelope(event_type), Context(now=NOW))

    assert isinstance(decision, Rejected)
    expected = "terminal" if definition.is_terminal(state) else "invalid_transition"
    assert decision.reason == expected


def test_payload_catalogue_covers_every_event() -> None:
    names = {e.name for d in REGISTRY for e in d.events}
    assert names <= set(PAYLOADS)
