"""Outcome digests under a version tag: decisions are recorded with the newest version
(`digest: 2`), and a history recorded before the tag existed (version 1) still replays, each
record's outcome recomputed with the version it names, equal when nothing changed and
divergent where something did; both versions tell the same differences apart."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.contracts.registry import Registry
from interlock.projector.digest import FIELDS, VERSION, outcome
from interlock.projector.engine import Context, resolve
from interlock.projector.engine.model import Accepted
from interlock.projector.replay import redecided, replay
from interlock.projector.service import Projector, first_checkpoint
from interlock.projector.store.records import HistoryRecord
from tests.support import digest_v1
from tests.support.direct import accepted, answer
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY
from tests.unit.test_model_call_replay import _recorded as _recorded_with_model_calls
from tests.unit.test_replay import T0, Clock, _recorded, _stricter_confidence

DIGESTED = [f for f in FIELDS if f not in ("accepted", "reason", "state", "version")]


async def _histories() -> dict[str, list[HistoryRecord]]:
    """Histories recorded by the projector: the replay tests' (one of them in words outside
    ASCII, which the two versions encode differently) and the model-call tests'."""
    store, calls = await _recorded(), await _recorded_with_model_calls()
    projector = Projector(store, registry=REGISTRY, clock=Clock())
    worded = {**PAYLOADS["START"], "body": "Zweimal abgebucht, Gebühr erstatten ✓"}
    await accepted(projector.handle(envelope("START", workflow_id="wf-3", payload=worded)))
    await accepted(answer(projector, store, "wf-3", "CLASSIFICATION_SUCCEEDED"))
    return {
        **{wf: list(await store.history("acme", wf)) for wf in ("wf-1", "wf-2", "wf-3")},
        **{wf: list(await calls.history("acme", wf)) for wf in ("wf-rep", "wf-bud")},
    }


async def _decisions() -> list[Accepted]:
    return [
        decision
        for history in (await _histories()).values()
        for _, _, decision in redecided(history, REGISTRY)
        if isinstance(decision, Accepted)
    ]


def _as_version_1(history: list[HistoryRecord]) -> list[HistoryRecord]:
    """`history` as the projector recorded it before digests had versions."""
    decided = {record.event["event_id"]: d for record, _, d in redecided(history, REGISTRY)}
    return [
        replace(h, outcome=digest_v1.outcome(decided[h.event["event_id"]]))
        if h.event["event_id"] in decided
        else h
        for h in history
    ]


async def test_decisions_are_recorded_with_the_newest_digest_version() -> None:
    for history in (await _histories()).values():
        assert {h.outcome.get("digest") for h in history if h.accepted} == {VERSION}
        assert all("digest" not in h.outcome for h in history if not h.accepted)
    assert VERSION == 2


async def test_version_1_is_the_digest_recorded_before_versions_bit_for_bit() -> None:
    for decision in await _decisions():
        assert outcome(decision, 1) == digest_v1.outcome(decision)


async def test_the_versions_digest_words_outside_ascii_differently() -> None:
    start = (await _histories())["wf-3"][0]
    (decision,) = (d for r, _, d in redecided([start], REGISTRY))

    assert outcome(decision, 1)["data"] != outcome(decision, 2)["data"]


async def test_a_version_1_history_replays_without_divergence() -> None:
    for workflow_id, history in (await _histories()).items():
        old = _as_version_1(history)
        assert all("digest" not in h.outcome for h in old)
        replayed = replay(old, REGISTRY)
        assert (replayed.complete, replayed.divergences) == (True, ()), workflow_id


async def test_a_changed_guard_diverges_alike_in_a_version_1_and_a_version_2_history() -> None:
    history = (await _histories())["wf-1"]
    stricter = Registry(_stricter_confidence(d) for d in REGISTRY)

    new, old = replay(history, stricter), replay(_as_version_1(history), stricter)

    assert new.divergences
    assert old.events == new.events
    assert [(d.event_id, d.field) for d in old.divergences] == [
        (d.event_id, d.field) for d in new.divergences
    ]


async def test_a_tampered_version_1_record_is_a_divergence_in_that_field() -> None:
    old = _as_version_1((await _histories())["wf-2"])
    old[1] = replace(old[1], outcome={**old[1].outcome, "timers": "0" * 16})

    (divergence,) = replay(old, REGISTRY).divergences

    assert (divergence.event_id, divergence.field) == (old[1].event["event_id"], "timers")


async def test_a_record_of_an_unknown_digest_version_is_a_divergence() -> None:
    history = (await _histories())["wf-2"]
    history[1] = replace(history[1], outcome={**history[1].outcome, "digest": 99})

    (divergence,) = replay(history, REGISTRY).divergences

    assert (divergence.field, divergence.recorded) == ("digest", 99)


async def test_both_versions_tell_the_same_recorded_decisions_apart() -> None:
    decisions = await _decisions()
    outcomes = [(outcome(d, 1), outcome(d, 2)) for d in decisions]
    for (a1, a2), (b1, b2) in combinations(outcomes, 2):
        for field in DIGESTED:
            assert (a1[field] == b1[field]) == (a2[field] == b2[field]), field


_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)  # beyond 64 bits too
    | st.floats(allow_nan=False, allow_infinity=False)  # what a jsonb column can hold
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), _JSON, max_size=4),
    st.dictionaries(st.text(max_size=6), _JSON, max_size=4),
    st.randoms(),
)
def test_both_versions_tell_the_same_data_apart(
    first: dict[str, Any], second: dict[str, Any], rand: Any
) -> None:
    base = _started()
    reordered = dict(rand.sample(list(first.items()), len(first)))
    with_data = [
        replace(base, workflow=base.workflow.model_copy(update={"data": data}))
        for data in (first, second, reordered)
    ]
    v1 = [outcome(d, 1)["data"] for d in with_data]
    v2 = [outcome(d, 2)["data"] for d in with_data]
    assert (v1[0] == v1[1]) == (v2[0] == v2[1])
    assert v1[0] == v1[2]  # the order of keys decides nothing
    assert v2[0] == v2[2]


def _started() -> Accepted:
    """A support workflow's first decision, made by the pure engine."""
    definition = REGISTRY.latest("support")
    start = envelope("START", workflow_id="wf-p", payload=PAYLOADS["START"])
    ctx = Context(now=T0, parameters={}, guards=REGISTRY.guards("support"))
    decision = resolve(definition, first_checkpoint(definition, start), start, ctx)
    assert isinstance(decision, Accepted)
    return decision
