"""What `migrate-workflow` allows, by the graph of the target definition: support v1 (serial
evidence) to v2 (parallel evidence). Never out of an effect in flight, into an effect, gate or
terminal state, or forward past a gate; backward only where no effect would run twice."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interlock.contracts.envelope import Envelope
from interlock.projector.engine import Accepted, Context, Workflow, resolve
from interlock.projector.engine.effects import facts_from_steps
from interlock.projector.engine.migrate import MIGRATE_EVENT, move, refusal
from interlock.projector.engine.model import EffectFact, Execution, OpenJob, Review
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

V1, V2 = REGISTRY.get("support", 1), REGISTRY.get("support", 2)
NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def at(state: str, version: int = 1, review_from: str | None = None) -> Workflow:
    review = (
        Review(reason="escalated", from_state=review_from, event_type="ESCALATE")
        if review_from
        else None
    )
    return Workflow(
        workflow_id="wf-1",
        workflow_type="support",
        tenant_id="acme",
        state=state,
        version=4,
        definition_version=version,
        execution=Execution(
            open_jobs={"job-old": OpenJob(stage="retrieve_policy")},
            review=review,
        ),
    )


@pytest.mark.parametrize(
    ("state", "into", "allowed"),
    [
        ("RETRIEVING_POLICY", "GATHERING_EVIDENCE", True),  # the state v2 replaced
        ("RETRIEVING_POLICY", "RETRIEVING_POLICY", False),  # v2 has no such state
        ("INSPECTING_ACCOUNT", "CLASSIFYING", True),  # backward: classified again
        ("VALIDATING_POLICY", "VALIDATING_POLICY", True),  # same state, new version
        ("VALIDATING_POLICY", "AWAITING_APPROVAL", False),  # a gate not passed
        ("AWAITING_APPROVAL", "AWAITING_APPROVAL", True),  # a gate already passed
        ("VALIDATING_POLICY", "EXECUTING_ACTION", False),  # an effect state
        ("VALIDATING_POLICY", "NOTIFYING_CUSTOMER", False),  # past the approval gate
        ("EXECUTING_ACTION", "VALIDATING_POLICY", False),  # an effect in flight
        ("NOTIFYING_CUSTOMER", "GENERATING_RECOMMENDATION", False),  # the effect again
        ("CLASSIFYING", "COMPLETED", False),  # terminal
        ("COMPLETED", "COMPLETED", False),  # a finished workflow
    ],
)
def test_a_move_to_v2_is_allowed_only_where_the_graph_allows(
    state: str, into: str, allowed: bool
) -> None:
    why = refusal(V1, V2, at(state), into)

    assert (why is None) == allowed, why


def test_a_workflow_in_review_is_judged_from_where_it_escalated() -> None:
    escalated_early = at("MANUAL_REVIEW", review_from="CLASSIFYING")
    escalated_late = at("MANUAL_REVIEW", review_from="NOTIFYING_CUSTOMER")

    assert refusal(V1, V2, escalated_early, "GATHERING_EVIDENCE") is None
    assert refusal(V1, V2, escalated_late, "GATHERING_EVIDENCE") is not None
    assert refusal(V1, V2, escalated_late, "NOTIFYING_CUSTOMER") is None


def test_a_move_enters_the_new_state_as_a_transition_would() -> None:
    wf = at("RETRIEVING_POLICY")
    event = envelope(MIGRATE_EVENT, payload={"to_version": 2, "state": "GATHERING_EVIDENCE"})

    decision = move(V2, wf, "GATHERING_EVIDENCE", event, Context(now=NOW))

    moved = decision.workflow
    assert (moved.state, moved.definition_version, moved.version) == ("GATHERING_EVIDENCE", 2, 5)
    assert sorted(j.stage for j in moved.execution.open_jobs.values()) == [
        "inspect_account",
        "retrieve_policy",
    ]
    assert "job-old" not in moved.execution.open_jobs
    assert {m.envelope.payload["definition_version"] for m in decision.messages} == {2}
    assert set(moved.execution.branches) == {"policy", "account"}


def test_a_move_that_keeps_the_state_keeps_its_jobs() -> None:
    wf = at("VALIDATING_POLICY")
    event = envelope(MIGRATE_EVENT, payload={"to_version": 2, "state": "VALIDATING_POLICY"})

    decision = move(V2, wf, "VALIDATING_POLICY", event, Context(now=NOW))

    assert decision.workflow.execution.open_jobs == wf.execution.open_jobs
    assert decision.messages == ()


V3 = REGISTRY.get("support", 3)
REFUNDED_THEN_NOTIFICATION_FAILED = [
    ("REQUEST_RECEIVED", "START"),
    ("CLASSIFYING", "CLASSIFICATION_SUCCEEDED"),
    ("GATHERING_EVIDENCE", "POLICY_RETRIEVED"),
    ("GATHERING_EVIDENCE", "ACCOUNT_INSPECTED"),
    ("GENERATING_RECOMMENDATION", "RECOMMENDATION_GENERATED"),
    ("VALIDATING_POLICY", "POLICY_VALID"),
    ("AWAITING_APPROVAL", "APPROVED"),
    ("EXECUTING_ACTION", "ACTION_EXECUTED"),
    ("NOTIFYING_CUSTOMER", "PERMANENT_ERROR"),
]


def test_a_v2_review_after_the_refund_moves_to_v3_knowing_the_refund_stands() -> None:
    """A workflow decided before the engine kept effect facts carries, in its move, what its
    audit says of the refund: under v3 a cancellation then compensates it."""
    facts = facts_from_steps(V2, REFUNDED_THEN_NOTIFICATION_FAILED)
    in_review = at("MANUAL_REVIEW", version=2, review_from="NOTIFYING_CUSTOMER")
    assert refusal(V2, V3, in_review, "MANUAL_REVIEW") is None
    event = envelope(
        MIGRATE_EVENT,
        payload={
            "to_version": 3,
            "state": "MANUAL_REVIEW",
            "effects": {k: v.model_dump(mode="json") for k, v in facts.items()},
        },
        role="operator",
    )

    moved = move(V3, in_review, "MANUAL_REVIEW", event, Context(now=NOW)).workflow
    cancel = resolve(V3, moved, envelope("CANCEL_REQUESTED"), Context(now=NOW))

    assert moved.execution.effects["EXECUTING_ACTION"].status == "committed"
    assert isinstance(cancel, Accepted)
    assert cancel.workflow.state == "COMPENSATING"


def test_an_invoice_pinned_to_v2_has_no_reversal_until_moved_to_v3() -> None:
    """A v2 invoice whose posting is unknown keeps v2's meaning (no compensation); moved to
    v3 in review, with its effect facts, an operator's COMPENSATE reverses the posting."""
    from interlock_invoice import PLUGIN as INVOICE  # noqa: PLC0415  (a third-party plugin)

    v2, v3 = INVOICE.definitions[1:]
    unknown = EffectFact(status="unknown", idempotency_key="wf-1")
    in_review = at("MANUAL_REVIEW", version=2).model_copy(
        update={
            "workflow_type": "invoice",
            "execution": Execution(
                review=Review(
                    reason="posting_unconfirmed",
                    from_state="POSTING",
                    event_type="POSTING_UNCONFIRMED",
                ),
                effects={"POSTING": unknown},
            ),
        }
    )

    def compensate() -> Envelope:
        return envelope("COMPENSATE", workflow_type="invoice", payload={}, role="operator")

    pinned = resolve(v2, in_review, compensate(), Context(now=NOW))
    assert refusal(v2, v3, in_review, "MANUAL_REVIEW") is None
    event = envelope(
        MIGRATE_EVENT,
        workflow_type="invoice",
        payload={"to_version": 3, "state": "MANUAL_REVIEW"},
        role="operator",
    )
    moved = move(v3, in_review, "MANUAL_REVIEW", event, Context(now=NOW)).workflow
    reversed_ = resolve(v3, moved, compensate(), Context(now=NOW))

    assert not pinned.accepted
    assert moved.execution.effects["POSTING"] == unknown
    assert isinstance(reversed_, Accepted)
    assert reversed_.workflow.state == "REVERSING"
