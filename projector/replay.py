"""Re-deciding recorded histories with the definitions installed now (`interlock replay`).

Each workflow's history is decided again from its request, event by event, by the pure engine
with the inputs the projector recorded (`now`, the parameter overrides), and each outcome is
compared with the recorded one. Any difference in acceptance, state, data, execution, jobs,
outbox or timers is a divergence: the installed code would not have done what was done, so it
must not take over the workflows in flight. A workflow's replay stops at its first diverging
event (what follows it was decided on a checkpoint the new code would not have reached).

Refusals made before the engine was asked (at the projector's door, or of a repeated
request) are not re-decided: the engine has no say in them and they changed nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import UnknownDefinition
from interlock.contracts.registry import Registry
from interlock.projector.digest import FIELDS, OPTIONAL_FIELDS, VERSIONS, outcome, version_of
from interlock.projector.engine import Context, Decision, Workflow, resolve
from interlock.projector.engine.migrate import MIGRATE_EVENT, move
from interlock.projector.service import first_checkpoint
from interlock.projector.store.records import HistoryRecord

ENGINE_REASONS = frozenset({"invalid_transition", "guard_rejected", "stale_version", "terminal"})
"""Refusals the engine made (and so re-decides)."""


@dataclass(frozen=True)
class Divergence:
    workflow_id: str
    event_id: str
    field: str
    recorded: Any
    replayed: Any


@dataclass(frozen=True)
class Replayed:
    """One workflow's replay: how many events were re-decided and what diverged."""

    events: int
    divergences: tuple[Divergence, ...] = ()
    complete: bool = True
    """False when the history does not start with the workflow's request (kept from before
    the history existed): nothing of it is re-decided."""


def replay(history: Sequence[HistoryRecord], registry: Registry) -> Replayed:
    """Re-decide one workflow's `history` (in the order it was recorded) with the definitions
    and plugin guards of `registry`."""
    if not history or history[0].from_version != 0 or not history[0].accepted:
        return Replayed(events=0, complete=False)
    wf: Workflow | None = None
    for count, record in enumerate(in_decided_order(history), start=1):
        event = Envelope.model_validate(record.event)
        ctx = _context(record, event, registry)
        version = _version(record, event)
        try:
            definition = registry.get(record.workflow_type, version)
        except UnknownDefinition:
            missing = Divergence(record.workflow_id, event.event_id, "definition", version, None)
            return Replayed(events=count, divergences=(missing,))
        if wf is None:
            wf = first_checkpoint(definition, event)
        if record.accepted or record.reason in ENGINE_REASONS:
            decision = _decide(definition, wf, event, ctx)
            found = _compare(record, event, decision)
            if found:
                return Replayed(events=count, divergences=found)
            if decision.accepted:
                wf = decision.workflow
    return Replayed(events=len(history))


def redecided(
    history: Sequence[HistoryRecord], registry: Registry
) -> Iterator[tuple[HistoryRecord, Envelope, Decision]]:
    """Each event of `history` the engine decides, with its decision re-made by `registry`'s
    definitions (as `replay` does, without comparing); stops at an event whose definition is
    not installed. A history that does not start with its request yields nothing."""
    if not history or history[0].from_version != 0 or not history[0].accepted:
        return
    wf: Workflow | None = None
    for record in in_decided_order(history):
        event = Envelope.model_validate(record.event)
        try:
            definition = registry.get(record.workflow_type, _version(record, event))
        except UnknownDefinition:
            return
        if wf is None:
            wf = first_checkpoint(definition, event)
        if record.accepted or record.reason in ENGINE_REASONS:
            decision = _decide(definition, wf, event, _context(record, event, registry))
            yield record, event, decision
            if decision.accepted:
                wf = decision.workflow


def in_decided_order(history: Sequence[HistoryRecord]) -> list[HistoryRecord]:
    """`history` with each refusal just before the acceptance that moved the workflow past the
    version it was refused at. A refusal takes no lock on the workflow, so one decided at
    version v may be recorded after the acceptance that made v+1; it is re-decided on v."""
    return sorted(history, key=lambda h: (h.from_version, h.accepted))


def _decide(
    definition: WorkflowDefinition, wf: Workflow, event: Envelope, ctx: Context
) -> Decision:
    if event.type == MIGRATE_EVENT:
        return move(definition, wf, str(event.payload["state"]), event, ctx)
    return resolve(definition, wf, event, ctx)


def _version(record: HistoryRecord, event: Envelope) -> int:
    """The definition version the event was decided by: the workflow's, or for a move the
    one it moved to."""
    if event.type == MIGRATE_EVENT:
        return int(event.payload["to_version"])
    return record.definition_version


def _context(record: HistoryRecord, event: Envelope, registry: Registry) -> Context:
    now = record.inputs.get("now")
    return Context(
        now=datetime.fromisoformat(now) if now else event.occurred_at,
        parameters=dict(record.inputs.get("parameters") or {}),
        guards=registry.guards(record.workflow_type),
    )


def _compare(record: HistoryRecord, event: Envelope, decision: Decision) -> tuple[Divergence, ...]:
    """The fields of `decision`'s outcome that differ from the record's, digested with the
    digest version the record names (one this code does not know is itself a divergence)."""
    version = version_of(record.outcome)
    if version not in VERSIONS:
        return (Divergence(record.workflow_id, event.event_id, "digest", version, None),)
    replayed = outcome(decision, version)
    return tuple(
        Divergence(record.workflow_id, event.event_id, name, record.outcome.get(name), got)
        for name in FIELDS
        if (name in record.outcome or name not in OPTIONAL_FIELDS)
        and (got := replayed.get(name)) != record.outcome.get(name)
    )
