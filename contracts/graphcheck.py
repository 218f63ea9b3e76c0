"""Static checks over a workflow definition, run in the unit tests and at projector start.

The checks find what a transition table cannot be allowed to contain: references to states or
events that do not exist, states nothing can reach, non-terminal states nothing can leave,
and — the safety invariant — any path into an effect state that does not pass every gate
(for `support`: policy validation, then a guarded approval).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import cast

from pydantic import BaseModel, ConfigDict

from interlock.contracts.definition import (
    GENERIC_RESULTS,
    RETRY_TARGET,
    REVIEW_TARGET,
    Gate,
    Transition,
    WorkflowDefinition,
)
from interlock.contracts.effectcheck import counterexamples, effects_of
from interlock.contracts.effects import EFFECT_GUARD
from interlock.contracts.errors import DefinitionError


class GraphIssue(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    message: str


def targets(definition: WorkflowDefinition, transition: Transition) -> set[str]:
    """Every state a transition can lead to (dynamic targets expanded)."""
    if transition.target == RETRY_TARGET:
        return set(definition.retry)
    if transition.target == REVIEW_TARGET:
        return set(definition.resumable_states)
    return {transition.target}


def check(
    definition: WorkflowDefinition,
    known_guards: Iterable[str] | None = None,
    known_actions: Iterable[str] | None = None,
) -> list[GraphIssue]:
    """All issues of `definition`; an empty list means it may be executed."""
    issues = _references(definition, known_guards, known_actions)
    if issues:
        return issues  # reachability over dangling names would only add noise
    return (
        _reachability(definition)
        + _dead_ends(definition)
        + _gates(definition)
        + _promises(definition)
    )


def assert_valid(
    definition: WorkflowDefinition,
    known_guards: Iterable[str] | None = None,
    known_actions: Iterable[str] | None = None,
) -> None:
    issues = check(definition, known_guards, known_actions)
    if issues:
        raise DefinitionError(definition.workflow_type, definition.version, issues)


class _Issues(list[GraphIssue]):
    def need(self, kind: str, name: str, pool: set[str] | frozenset[str], where: str) -> None:
        if name not in pool:
            self.append(GraphIssue(code=f"unknown_{kind}", message=f"{where}: {name!r}"))


def _references(
    d: WorkflowDefinition, guards: Iterable[str] | None, actions: Iterable[str] | None
) -> list[GraphIssue]:
    found = _Issues()
    states = set(d.states)
    found.need("state", d.initial_state, states, "initial state")
    for s in (
        *d.terminal_states,
        *d.waiting_states,
        *d.effect_states,
        *d.resumable_states,
        *d.stages,
        *d.retry,
        *d.cancellable_states,
        *d.deferred_cancel_states,
        *(w.state for w in d.human_waits),
    ):
        found.need("state", s, states, "state set")
    _transition_refs(
        d,
        found,
        set(guards) if guards is not None else None,
        set(actions) if actions is not None else None,
    )
    _policy_refs(d, found)
    _effect_refs(d, found)
    _emitted_results(d, found)
    return found


def _effect_refs(d: WorkflowDefinition, found: _Issues) -> None:
    states, events = set(d.states), {e.name for e in d.events}
    for effect in d.effects:
        where = f"effect {effect.state}"
        found.need("state", effect.state, states, where)
        if effect.compensation is not None:
            found.need("state", effect.compensation, states, where)
        for name in (*effect.committed, *effect.compensated, *effect.confirmed):
            found.need("event", name, events, where)
    for terminal in d.terminals:
        found.need("state", terminal.state, set(d.terminal_states), "terminal promise")
        for state in terminal.requires:
            found.need("effect", state, {e.state for e in effects_of(d)}, "terminal promise")


def _promises(d: WorkflowDefinition) -> list[GraphIssue]:
    """Every path into a terminal keeps what the terminal promises about effects."""
    return [GraphIssue(code="broken_promise", message=c.message(d)) for c in counterexamples(d)]


def _transition_refs(
    d: WorkflowDefinition, found: _Issues, guards: set[str] | None, actions: set[str] | None
) -> None:
    states, events = set(d.states), {e.name for e in d.events}
    for t in d.transitions:
        where = f"transition {t.source} --{t.event}-->"
        found.need("state", t.source, states, where)
        found.need("event", t.event, events, where)
        for target in targets(d, t):
            found.need("state", target, states, where)
        for g in t.guards if guards is not None else ():
            found.need("guard", g.name, guards or set(), where)
        if actions is not None and t.action is not None:
            found.need("action", t.action, actions, where)
        if t.source in d.terminal_states:
            found.append(GraphIssue(code="terminal_exit", message=f"{where} leaves a terminal"))


def _policy_refs(d: WorkflowDefinition, found: _Issues) -> None:
    states, events = set(d.states), {e.name for e in d.events}
    for par in d.parallel:
        for s in (par.state, par.join_target, par.failure_target):
            found.need("state", s, states, f"parallel {par.state}")
        for b in par.branches:
            found.need("event", b.success_event, events, f"branch {b.name}")
    for timer in d.timers:
        found.need("event", timer.event, events, f"timer {timer.kind}")
        found.need("parameter", timer.delay_param, set(d.parameters), f"timer {timer.kind}")
        if timer.state is not None:
            found.need("state", timer.state, states, f"timer {timer.kind}")
    for event in d.data_updates:
        found.need("event", event, events, "data update")
    for a in d.announcements:
        found.need("state", a.state, states, f"announcement {a.name}")


def _emitted_results(d: WorkflowDefinition, found: _Issues) -> None:
    """Every stage names its results, each a result event of `d`, and every result event but
    the generic ones has a stage that emits it: the projector takes a result only from a
    stage that emits it."""
    events = {e.name: e for e in d.events}
    emitted = set(GENERIC_RESULTS)
    for stage in d.all_stages():
        if not stage.emits:
            found.append(
                GraphIssue(code="stage_emits_nothing", message=f"stage {stage.name} emits nothing")
            )
        for name in stage.emits:
            found.need("event", name, set(events), f"stage {stage.name}")
            if name in events and events[name].source != "result":
                message = f"stage {stage.name} emits {name}, a {events[name].source}"
                found.append(GraphIssue(code="not_a_result", message=message))
        emitted |= set(stage.emits)
    for event in d.events:
        if event.source == "result" and event.name not in emitted:
            message = f"no stage emits the result {event.name}"
            found.append(GraphIssue(code="result_not_emitted", message=message))


def _successors(
    d: WorkflowDefinition, skip_events: frozenset[str] = frozenset(), *, reentry: bool = True
) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {s: set() for s in d.states}
    for t in d.transitions:
        if t.event not in skip_events and (reentry or not is_reentry(t)):
            graph[t.source] |= targets(d, t)
    return graph


def is_reentry(t: Transition) -> bool:
    """An edge back into the effect state it is guarded on having left with its effect
    unknown or standing (a re-run under the same key): only a path that passed the effect's
    gate can take it, since an effect's status changes only inside its own state."""
    return any(
        g.name == EFFECT_GUARD
        and g.params.get("state") == t.target
        and "none" not in set(cast("Iterable[str]", g.params.get("status", ("none",))))
        for g in t.guards
    )


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, queue = {start}, deque([start])
    while queue:
        for nxt in graph[queue.popleft()] - seen:
            seen.add(nxt)
            queue.append(nxt)
    return seen


def _reachability(d: WorkflowDefinition) -> list[GraphIssue]:
    reached = _reachable(_successors(d), d.initial_state)
    return [
        GraphIssue(
            code="unreachable_state", message=f"{s} cannot be reached from {d.initial_state}"
        )
        for s in d.states
        if s not in reached
    ]


def _dead_ends(d: WorkflowDefinition) -> list[GraphIssue]:
    graph = _successors(d)
    return [
        GraphIssue(code="no_exit", message=f"non-terminal state {s} has no way out")
        for s in d.states
        if s not in d.terminal_states and not (graph[s] - {s})
    ]


def _gates(d: WorkflowDefinition) -> list[GraphIssue]:
    """Every edge into a gated state passes its gate, and no path skips a gate event. An
    effect state is gated, and so is a declared effect unless it says `gated=False`."""
    found: list[GraphIssue] = []
    gates = {g.state: g for g in d.gates}
    gated = sorted(d.effect_states | {e.state for e in d.effects if e.gated})
    for effect in gated:
        if effect not in gates:
            found.append(GraphIssue(code="ungated_effect", message=f"{effect} has no gate"))
    for gate in d.gates:
        for t in d.transitions:
            if gate.state not in targets(d, t) or t.source == gate.state or is_reentry(t):
                continue
            guard_ok = gate.guard is None or gate.guard in {g.name for g in t.guards}
            if t.event not in gate.events or not guard_ok or t.target != gate.state:
                found.append(
                    GraphIssue(
                        code="gate_bypass",
                        message=f"{t.source} --{t.event}--> {gate.state} does not pass its gate "
                        f"({'/'.join(gate.events)} guarded by {gate.guard})",
                    )
                )
    for effect in gated:
        entry = gates.get(effect)
        if entry is not None and entry.any_of:
            required = [frozenset(entry.events)]  # at least one of them on every path
        else:
            required = [frozenset({e}) for e in _required_events(d, effect, gates)]
        for events in required:
            graph = _successors(d, skip_events=events, reentry=False)
            if effect in _reachable(graph, d.initial_state):
                found.append(
                    GraphIssue(
                        code="gate_bypass",
                        message=f"{effect} is reachable from {d.initial_state} without "
                        f"{'/'.join(sorted(events))}",
                    )
                )
    return found


def _required_events(d: WorkflowDefinition, state: str, gates: dict[str, Gate]) -> set[str]:
    """Gate events on the chain of gates leading into `state`."""
    required: set[str] = set()
    pending, seen = [state], set()
    while pending:
        current = pending.pop()
        if current in seen or current not in gates:
            continue
        seen.add(current)
        gate = gates[current]
        required |= set(gate.events)
        pending += [
            t.source for t in d.transitions if t.target == current and t.event in gate.events
        ]
    return required
