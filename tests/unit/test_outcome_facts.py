"""What the outcome SLO queries know of the definitions (`relay.outcomes.Facts`)."""

from __future__ import annotations

from interlock.contracts.effectcheck import effects_of
from interlock.contracts.registry import Registry
from interlock.relay.outcomes import Facts
from tests.support.workflows import REGISTRY


def test_an_effect_the_definition_does_not_declare_is_watched_for_duplicates_too() -> None:
    """Support v2 declares no effects: the engine keeps its refund's facts by the defaults
    (`effects_of`), and the duplicate-effect SLO must count its commits the same way."""
    v2 = REGISTRY.get("support", 2)
    assert v2.effects == ()
    types, states, events = Facts.of(Registry([v2])).commits
    watched = set(zip(types, states, events, strict=True))
    expected = {
        ("support", e.state, committed) for e in effects_of(v2) for committed in e.committed
    }
    assert ("support", "EXECUTING_ACTION", "ACTION_EXECUTED") in expected
    assert watched == expected
