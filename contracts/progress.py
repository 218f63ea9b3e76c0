"""Where progress is expected, and for how long a person may be waited on: pure rules over
the registry and a deployment's parameter overrides, shared by the relay's gauges and
reminders and the console's stuck filter (so they can never disagree).

A workflow is stuck when it made no progress where progress was expected: in a state that is
neither terminal nor a wait on a person, it has not moved for the state's *bound*. The bound is
the parameter `stuck_after_seconds_by_state[state]` if set, else `stuck_after_seconds`, else the
installation's `INTERLOCK_STUCK_AFTER`. Both parameters are accepted for every workflow type,
declared by its definition or not, so a deployment (or a test) can shorten them.

A wait on a person (a waiting state other than the retry wait, or a declared `HumanWait`) is
never stuck by that rule: it has its own deadline and reminders (`HumanWait`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.model_calls import BUDGET_PARAMETERS

STUCK_AFTER = "stuck_after_seconds"
"""Definition-level bound (seconds without progress) of the states that expect progress."""
STUCK_AFTER_BY_STATE = "stuck_after_seconds_by_state"
"""Per-state bounds, `{state: seconds}`, over `STUCK_AFTER` (e.g. a slow stage's state)."""
RESERVED_PARAMETERS = frozenset({STUCK_AFTER, STUCK_AFTER_BY_STATE, *BUDGET_PARAMETERS})
"""Parameters every workflow type accepts as overrides, whether its definition declares them."""

DEFAULT_WAIT_DEADLINE_S = 24 * 3600.0
DEFAULT_REMINDER_EVERY_S = 4 * 3600.0

Overrides = Mapping[str, Mapping[str, Any]]
"""Per workflow type, a deployment's parameter overrides (`INTERLOCK_PARAMETERS`)."""
Pair = tuple[str, str]


def parameters_of(definition: WorkflowDefinition, overrides: Overrides) -> dict[str, Any]:
    """The definition's parameters with the deployment's overrides of its type applied."""
    return {**definition.parameters, **overrides.get(definition.workflow_type, {})}


def progress_bounds(
    definitions: Iterable[WorkflowDefinition], overrides: Overrides, default: float
) -> dict[Pair, float]:
    """The bound of every non-terminal (type, state); versions that disagree take the longer
    bound, so no version is flagged before its own bound."""
    bounds: dict[Pair, float] = {}
    for d in definitions:
        params = parameters_of(d, overrides)
        base = float(params.get(STUCK_AFTER, default))
        by_state: Mapping[str, Any] = params.get(STUCK_AFTER_BY_STATE) or {}
        for state in d.states:
            if state not in d.terminal_states:
                bound = float(by_state.get(state, base))
                bounds[(d.workflow_type, state)] = max(
                    bound, bounds.get((d.workflow_type, state), 0)
                )
    return bounds


def human_states(definitions: Iterable[WorkflowDefinition]) -> set[Pair]:
    """(type, state) where waiting on a person is normal: the waiting states but the retry
    wait (which a timer always ends), and every declared `HumanWait`."""
    found: set[Pair] = set()
    for d in definitions:
        found |= {(d.workflow_type, s) for s in d.waiting_states if s != d.retry_wait_state}
        found |= {(d.workflow_type, w.state) for w in d.human_waits}
    return found


@dataclass(frozen=True, slots=True)
class WaitRule:
    """A declared wait on a person with its parameters resolved for this deployment."""

    workflow_type: str
    state: str
    owner_role: str
    deadline_s: float
    every_s: float
    max_reminders: int
    announcement: str
    """The name of the state's announcement, which a reminder publishes again."""
    fields: tuple[tuple[str, str], ...]
    """The announcement's (payload field, dotted data path) pairs."""
    expiry_timer: str | None = None
    """The timer whose fire time the announcement carries as `expires_at`."""


def wait_rules(definitions: Iterable[WorkflowDefinition], overrides: Overrides) -> list[WaitRule]:
    """Every declared wait, by (type, state); the latest version's declaration wins."""
    rules: dict[Pair, WaitRule] = {}
    for d in sorted(definitions, key=lambda d: (d.workflow_type, d.version)):
        params = parameters_of(d, overrides)
        for w in d.human_waits:
            spec = d.announcement(w.state)
            rules[(d.workflow_type, w.state)] = WaitRule(
                workflow_type=d.workflow_type,
                state=w.state,
                owner_role=w.owner_role,
                deadline_s=float(params.get(w.deadline_param, DEFAULT_WAIT_DEADLINE_S)),
                every_s=float(params.get(w.reminder_every_param, DEFAULT_REMINDER_EVERY_S)),
                max_reminders=w.max_reminders,
                announcement=spec.name if spec else w.state.lower(),
                fields=tuple(sorted(spec.fields.items())) if spec else (),
                expiry_timer=spec.expiry_timer if spec else None,
            )
    return sorted(rules.values(), key=lambda r: (r.workflow_type, r.state))
