"""The engine's facts about effects: kept from the effect states' own result events.

An accepted event in an effect's state may commit it or leave it unknown; one in its
compensation state may reverse it; an operator's confirmation records what the provider
holds. The rule is `contracts.effectcheck.next_status`, the same one the graph check proves
the table against, so what the proof assumes is what the engine records.
"""

from __future__ import annotations

from collections.abc import Iterable

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.effectcheck import effects_of, next_status
from interlock.contracts.effects import EffectStatus
from interlock.projector.engine.actions import Draft
from interlock.projector.engine.guards import Facts
from interlock.projector.engine.model import EffectFact


def track_effects(f: Facts, d: Draft) -> None:
    """Update `d.effects` for the event `f` decides, accepted in `f.workflow.state`."""
    source, event = f.workflow.state, f.event.type
    for effect in effects_of(f.definition):
        fact = d.effects.get(effect.state, EffectFact())
        status = next_status(effect, fact.status, source, event)
        key = f.payload.get("idempotency_key") if source == effect.state else None
        if status == fact.status and not key:
            continue
        d.effects[effect.state] = EffectFact(
            status=status, idempotency_key=str(key) if key else fact.idempotency_key
        )


def facts_from_steps(
    definition: WorkflowDefinition, steps: Iterable[tuple[str, str]]
) -> dict[str, EffectFact]:
    """The facts the engine would keep after the accepted (from state, event type) `steps`,
    in order: for a workflow decided before its engine kept them (a move to a version that
    declares its effects starts from these)."""
    facts: dict[str, EffectFact] = {}
    for effect in effects_of(definition):
        status: EffectStatus = "none"
        for source, event in steps:
            status = next_status(effect, status, source, event)
        if status != "none":
            facts[effect.state] = EffectFact(status=status)
    return facts
