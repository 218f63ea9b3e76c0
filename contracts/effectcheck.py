"""The path-sensitive proof that every terminal keeps its promise about effects.

The graph check's other rules look at states alone; this one explores states together with
what the engine will know at that point: the status of each effect (`contracts.effects`), the
state a retry returns to and the state manual review may resume. It follows every row of the
table from the initial state, reading exactly the guards whose truth those facts decide
(`effect_is`, `has_review_target`) and assuming any other guard may pass or fail, so a row
shadowed by an earlier row that certainly holds is not followed. Any terminal reached with
facts that break its promise is reported with the shortest path that does it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from interlock.contracts.definition import (
    RETRY_TARGET,
    REVIEW_TARGET,
    Guard,
    Transition,
    WorkflowDefinition,
)
from interlock.contracts.effects import (
    EFFECT_GUARD,
    Effect,
    EffectStatus,
    describe,
    satisfied,
)

GENERIC_FAILURES = frozenset({"RETRYABLE_ERROR", "PERMANENT_ERROR", "ESCALATE"})


def effects_of(d: WorkflowDefinition) -> tuple[Effect, ...]:
    """The declared effects, or for each undeclared effect state the default: every result
    of its stage but the generic failures commits it, `ESCALATE` leaves it unknown."""
    declared = {e.state for e in d.effects}
    derived = tuple(
        Effect(
            state=state,
            committed=tuple(e for e in d.stages[state].emits if e not in GENERIC_FAILURES),
        )
        for state in sorted(d.effect_states - declared)
        if state in d.stages
    )
    return (*d.effects, *derived)


def next_status(effect: Effect, status: EffectStatus, source: str, event: str) -> EffectStatus:
    """The effect's status after `event` is accepted in `source` (the engine's rule too)."""
    if source == effect.state:
        if event in effect.committed:
            return "committed"
        if event in effect.unknown:
            return "unknown"
        if event in effect.refused:
            return "none"
        return status
    if source == effect.compensation and event in effect.compensated:
        return "compensated" if status != "none" else status
    if event in effect.confirmed and status == "unknown":
        return "committed"
    return status


def effect_guard_holds(params: Mapping[str, Any], facts: Mapping[str, str]) -> bool:
    """`effect_is(state=S, status=[...])` over effect facts (state -> status)."""
    wanted = set(params.get("status", ()))
    state = params.get("state")
    chosen = [state] if state is not None else list(facts)
    return all(facts.get(s, "none") in wanted for s in chosen)


@dataclass(frozen=True)
class _Node:
    state: str
    facts: tuple[EffectStatus, ...]
    retry_target: str | None = None
    review_target: str | None = None


@dataclass(frozen=True)
class Counterexample:
    terminal: str
    promise: str
    path: tuple[tuple[str, str], ...]
    """(event, state) steps from the initial state."""
    standing: tuple[str, ...]

    def message(self, d: WorkflowDefinition) -> str:
        steps = "".join(f" -{event}-> {state}" for event, state in self.path)
        why = ", ".join(self.standing) or "an effect's status"
        return (
            f"{d.workflow_type} v{d.version}: {self.terminal} {self.promise}, but "
            f"{d.initial_state}{steps} reaches it with {why}"
        )


Parents = dict["_Node", "tuple[_Node, str] | None"]


def _explore(d: WorkflowDefinition, effects: tuple[Effect, ...]) -> Parents:
    """Every (state, facts) node reachable from the initial state, each with the node and
    event that first reached it (breadth first: the paths are shortest)."""
    start = _Node(d.initial_state, tuple("none" for _ in effects))
    parent: Parents = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node.state in d.terminal_states:
            continue
        for event, nxt in _steps(d, effects, node):
            if nxt not in parent:
                parent[nxt] = (node, event)
                queue.append(nxt)
    return parent


def counterexamples(d: WorkflowDefinition) -> list[Counterexample]:
    """One shortest counterexample per terminal whose promise some path breaks."""
    effects = effects_of(d)
    promises = {t.state: t for t in d.terminals}
    parent = _explore(d, effects)
    found: dict[str, Counterexample] = {}
    for node in parent:  # in the order reached, so the first found is a shortest path
        promise = promises.get(node.state)
        if promise is None or node.state in found:
            continue
        facts = dict(zip((e.state for e in effects), node.facts, strict=True))
        if not satisfied(promise, effects, facts):
            found[node.state] = _counterexample(node, parent, effects, describe(promise))
    return [found[s] for s in sorted(found)]


def facts_by_state(d: WorkflowDefinition) -> dict[str, dict[str, list[str]]]:
    """For each state, the statuses each effect may have there (over every path)."""
    effects = effects_of(d)
    seen: dict[str, dict[str, set[str]]] = {s: {e.state: set() for e in effects} for s in d.states}
    for node in _explore(d, effects):
        for effect, status in zip(effects, node.facts, strict=True):
            seen[node.state][effect.state].add(status)
    order = ("none", "committed", "compensated", "unknown")
    return {
        state: {e: [s for s in order if s in got] for e, got in by_effect.items()}
        for state, by_effect in seen.items()
    }


def _counterexample(
    node: _Node,
    parent: Parents,
    effects: tuple[Effect, ...],
    promise: str,
) -> Counterexample:
    path: list[tuple[str, str]] = []
    cursor: _Node | None = node
    while cursor is not None and parent[cursor] is not None:
        previous, event = parent[cursor] or (None, "")
        path.append((event, cursor.state))
        cursor = previous
    standing = tuple(
        f"{e.state} {s}" for e, s in zip(effects, node.facts, strict=True) if s != "none"
    )
    return Counterexample(node.state, promise, tuple(reversed(path)), standing)


def _steps(
    d: WorkflowDefinition, effects: tuple[Effect, ...], node: _Node
) -> Iterator[tuple[str, _Node]]:
    facts = dict(zip((e.state for e in effects), node.facts, strict=True))
    events = dict.fromkeys(t.event for t in d.transitions if t.source == node.state)
    for event in events:
        for row in _possible_rows(d.transitions_from(node.state, event), node, facts):
            statuses = tuple(
                next_status(e, s, node.state, event)
                for e, s in zip(effects, node.facts, strict=True)
            )
            for target, retry, review in _targets(d, row, node):
                yield event, _Node(target, statuses, retry, review)


def _possible_rows(
    rows: tuple[Transition, ...], node: _Node, facts: Mapping[str, str]
) -> Iterator[Transition]:
    """The rows that may be chosen, in table order: a row stops the search once one whose
    guards certainly hold (and which has no limit) is found."""
    for row in rows:
        known = [_known(g, node, facts) for g in row.guards]
        if False in known:
            continue
        yield row
        if row.limit is None and all(k is True for k in known):
            return


def _known(guard: Guard, node: _Node, facts: Mapping[str, str]) -> bool | None:
    if guard.name == EFFECT_GUARD:
        return effect_guard_holds(guard.params, facts)
    if guard.name == "has_review_target":
        return node.review_target is not None
    return None


def _targets(
    d: WorkflowDefinition, row: Transition, node: _Node
) -> Iterator[tuple[str, str | None, str | None]]:
    """(target, retry target, review target) after `row`, as the engine's actions set them."""
    retry, review = node.retry_target, node.review_target
    if row.action == "schedule_retry":
        retry = node.state
    target = row.target
    if target == RETRY_TARGET:
        if retry is None:
            return
        target, retry = retry, None
    elif target == REVIEW_TARGET:
        if review is None:
            return
        target, review = review, None
    if target != d.review_state:
        review = None
    elif target != node.state:
        source = retry if node.state == d.retry_wait_state and retry else node.state
        review = source if source in d.resumable_states else None
    yield target, retry, review


def effects_view(
    definition: WorkflowDefinition, execution: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """`show --json`'s `effects`: every effect of `definition` with its status and key (for
    an unknown outcome, the key review records if the fact has none)."""
    kept = execution.get("effects") or {}
    review_key = (execution.get("review") or {}).get("idempotency_key")
    rows = []
    for effect in effects_of(definition):
        fact = kept.get(effect.state) or {}
        status = fact.get("status", "none")
        key = fact.get("idempotency_key") or (review_key if status == "unknown" else None)
        rows.append({"state": effect.state, "status": status, "idempotency_key": key})
    return rows
