"""`interlock graph TYPE --json`: a definition's states with their kind and what the graph
check knows of each effect there, its rows, its effects and its terminals' promises."""

from __future__ import annotations

from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.diagram import Kind, guard_label
from interlock.contracts.diagram import kinds as kinds_of
from interlock.contracts.effectcheck import effects_of, facts_by_state
from interlock.contracts.graphcheck import targets

PRECEDENCE: tuple[Kind, ...] = ("terminal", "effect", "review", "waiting", "parallel", "initial")


def graph_json(d: WorkflowDefinition) -> dict[str, Any]:
    facts = facts_by_state(d)
    promises = {t.state: t for t in d.terminals}
    states = []
    for name in d.states:
        kinds = kinds_of(d, name)
        state: dict[str, Any] = {
            "name": name,
            "kind": next((k for k in PRECEDENCE if k in kinds), "work"),
            "kinds": sorted(kinds),
            "effects": facts[name],
        }
        if name in promises:
            state["promise"] = promises[name].model_dump(mode="json", exclude={"state"})
        states.append(state)
    return {
        "workflow_type": d.workflow_type,
        "version": d.version,
        "states": states,
        "transitions": [
            {
                "source": t.source,
                "event": t.event,
                "targets": sorted(targets(d, t)),
                "guards": [guard_label(g) for g in t.guards],
                "reason": t.reason,
            }
            for t in d.transitions
        ],
        "effects": [e.model_dump(mode="json") for e in effects_of(d)],
    }
