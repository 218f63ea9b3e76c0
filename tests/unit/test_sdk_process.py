"""The SDK's business-process primitives: typed guards receive models (a `Decimal` amount as a
`Decimal`), the built-in guards are public constructors of exactly the rows the engine reads,
and approval and cancellation expand to rows the engine decides as documented."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pydantic import BaseModel

import interlock
from interlock import (
    Anything,
    GuardInput,
    Result,
    Typed,
    Workflow,
    actor_role_in,
    amount_within_limit,
    cancel_requested,
    check,
    guard,
    payload_matches,
)
from interlock._sdk.guards import BUILT_IN
from interlock.contracts.graphcheck import assert_valid
from interlock.projector.engine.actions import ACTIONS
from interlock.projector.engine.guards import GUARDS

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Claim(BaseModel):
    amount: Decimal


class Shown(BaseModel):
    claim: Claim


def given(payload: dict[str, object], data: dict[str, object]) -> GuardInput:
    return GuardInput(
        state="S",
        data=data,
        payload=payload,
        params={},
        parameters={"limit": "100.00"},
        actor_role="manager",
        now=NOW,
    )


def test_a_typed_guard_receives_the_data_as_its_model_with_decimal_amounts() -> None:
    seen: list[object] = []

    @guard(data=Shown)
    def small(g: Typed[Anything, Shown]) -> bool:
        seen.append(g.data.claim.amount)
        return g.data.claim.amount <= Decimal(str(g.parameters["limit"]))

    assert small.name == "small"
    assert small.predicate(given({}, {"claim": {"amount": "99.99"}, "other": 1}))
    assert not small.predicate(given({}, {"claim": {"amount": "100.01"}}))
    assert seen == [Decimal("99.99"), Decimal("100.01")]


def test_a_typed_guard_fails_on_a_payload_its_model_refuses() -> None:
    @guard(payload=Claim)
    def positive(g: Typed[Claim, Anything]) -> bool:
        return g.payload.amount > 0

    assert positive.predicate(given({"amount": "1.50"}, {}))
    assert not positive.predicate(given({"amount": "lots"}, {}))
    assert not positive.predicate(given({}, {}))


def test_a_plain_guard_still_reads_the_guard_input() -> None:
    @guard
    def polite(g: GuardInput) -> bool:
        return not g.payload.get("shouting", False)

    assert polite.predicate(given({}, {}))
    assert not polite.predicate(given({"shouting": True}, {}))


def test_the_built_in_guards_are_public_and_name_guards_the_engine_has() -> None:
    assert actor_role_in("reviewer_roles") == check("actor_role_in", param="reviewer_roles")
    assert cancel_requested() == check("cancel_requested")
    assert payload_matches(data={"amount": "claim.amount"}) == check(
        "payload_matches", data={"amount": "claim.amount"}
    )
    assert set(BUILT_IN) <= set(GUARDS)
    for name in ("actor_role_in", "approval_valid", "cancel_requested", "payload_matches"):
        assert getattr(interlock, name).__doc__


class Paid(Result):
    __event__ = "PAID_OUT"
    ref: str


class Request(BaseModel):
    amount: Decimal


def claim_workflow() -> Workflow:
    wf = Workflow("claim")
    wf.request(Request, into="claim").result(Paid).failures()
    wf.states("NEW", "PAYING", "REFUNDING", "DONE", "CANCELLED", "REFUNDED", "REJECTED")
    wf.states(terminal=("DONE", "CANCELLED", "REFUNDED", "REJECTED"), effects=("PAYING",))
    wf.stage("PAYING", "pay", emits=(Paid,))
    wf.stage("REFUNDING", "refund", emits=("REFUNDED_OK",))
    wf.event("REFUNDED_OK", "result")
    wf.on("PAYING", Paid, "DONE")
    wf.on("REFUNDING", "REFUNDED_OK", "REFUNDED")
    wf.effect("PAYING", committed=(Paid,), compensation="REFUNDING", compensated=("REFUNDED_OK",))
    wf.gate("PAYING", "APPROVED")
    wf.terminal("DONE", effects="done")
    wf.terminal("REFUNDED", effects="reversed")
    wf.approval("NEW", approved="PAYING", rejected="REJECTED", binds={"amount": "claim.amount"})
    wf.cancellation("CANCELLED", before=("NEW",), during=("PAYING",), compensate="REFUNDING")
    return wf


def test_approval_and_cancellation_expand_to_rows_the_graph_check_accepts() -> None:
    definition = claim_workflow().settings(parameters={"approver_limits": {"m": "10"}}).build()
    assert_valid(definition, set(GUARDS), ACTIONS)
    approved = definition.transitions_from("NEW", "APPROVED")[0]
    assert approved.guards == (amount_within_limit(shown="claim.amount"),)
    # during the effect: recorded, then its outcome decides; the guarded row comes first
    assert definition.transitions_from("PAYING", "CANCEL_REQUESTED")[0].action == "defer_cancel"
    first, then = definition.transitions_from("PAYING", "PAID_OUT")
    assert (first.target, first.guards, then.target) == ("REFUNDING", (cancel_requested(),), "DONE")
    refused = definition.transitions_from("PAYING", "PERMANENT_ERROR")[0]
    assert refused.target == "CANCELLED"
    assert definition.terminal("CANCELLED") is not None
    assert "PAYING" in definition.deferred_cancel_states
    assert "NEW" in definition.cancellable_states


def test_cancellation_during_an_undeclared_effect_is_refused_at_build() -> None:
    wf = Workflow("x").states("A", "B", terminal=("B",), effects=("A",))
    with pytest.raises(ValueError, match="declare its effect first"):
        wf.cancellation("B", before=(), during=("A",))
