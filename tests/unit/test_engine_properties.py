"""Property-based tests: random event sequences against the pure engine.

Invariants, checked from first principles (not by calling the guards under test):
* the effect state is only ever entered by a current, authorised approval of a
  recommendation whose policy validation passed (or, from version 3, by an operator's re-run
  of a refund whose outcome is unknown, under the approval that first entered it);
* a terminal keeps its promise about the refund, as the provider would see it: `CANCELLED`,
  `REJECTED` and `FAILED` with no refund standing or possibly standing, `FAILED_COMPENSATED`
  with it reversed, `COMPLETED` with it done and the customer notified;
* every accepted event raises the version by exactly one; a rejection changes nothing;
* a terminal workflow never changes again.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from interlock.projector.engine import Accepted, Context, Workflow, resolve
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

LIMITS = {"support_approver": Decimal("500.00"), "support_supervisor": Decimal("5000.00")}
ROLES = ["support_approver", "support_supervisor", "operator", "customer", "system"]
DISRUPTIVE = {
    "CANCEL_REQUESTED",
    "DEADLINE_EXCEEDED",
    "ESCALATE",
    "PERMANENT_ERROR",
    "APPROVAL_EXPIRED",
    "REJECTED_BY_REVIEWER",
    "POLICY_INVALID",
    "POLICY_UNCLEAR",
}


def legal_events(machine: SupportWorkflowMachine, disrupt: bool) -> list[str]:
    """Events the table allows in the current state; without `disrupt`, the ones that
    move the workflow forward, so random walks get deep into the graph."""
    legal = sorted(
        {t.event for t in machine.definition.transitions if t.source == machine.workflow.state}
    )
    forward = [e for e in legal if e not in DISRUPTIVE]
    return legal if disrupt or not forward else forward


AMOUNTS = ["20.00", "450.00", "900.00", "7000.00"]


class SupportWorkflowMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.definition = REGISTRY.get("support", 2)
        self.now = datetime(2026, 6, 1, tzinfo=UTC)
        self.workflow = Workflow(
            workflow_id="wf-p",
            workflow_type="support",
            tenant_id="acme",
            state=self.definition.initial_state,
            version=0,
            definition_version=self.definition.version,
        )
        self.history: list[str] = []
        self.entered_effect = 0
        self.refund = "none"
        self.notified = False

    @initialize(version=st.sampled_from([1, 2, 3, 3]))
    def use_definition(self, version: int) -> None:
        """The definition version the walk starts on (once: as a rule among the others it took
        a third of every walk's steps, doing nothing after the first)."""
        self.definition = REGISTRY.get("support", version)
        self.workflow = self.workflow.model_copy(update={"definition_version": version})

    @rule(
        data=st.data(),
        prefer_legal=st.sampled_from([True, True, True, False]),
        disrupt=st.sampled_from([False, False, False, True]),
        answer_job=st.sampled_from([True, True, True, False]),
        role=st.sampled_from(ROLES),
        version_shift=st.sampled_from([0, 0, 0, -1, 1]),
        amount=st.sampled_from(AMOUNTS),
        passed=st.booleans(),
        advance=st.sampled_from([0, 1, 3600, 100_000]),
    )
    def send(
        self,
        *,
        data: st.DataObject,
        prefer_legal: bool,
        disrupt: bool,
        answer_job: bool,
        role: str,
        version_shift: int,
        amount: str,
        passed: bool,
        advance: int,
    ) -> None:
        legal = legal_events(self, disrupt)
        pool = legal if prefer_legal and legal else sorted(e.name for e in self.definition.events)
        event_type = data.draw(st.sampled_from(pool))
        self.now += timedelta(seconds=advance)
        self._decide(
            self._event(
                event_type,
                answer_job=answer_job,
                role=role,
                shift=version_shift,
                amount=amount,
                passed=passed,
            )
        )

    @rule(data=st.data())
    def progress(self, data: st.DataObject) -> None:
        """A well-formed forward step, so walks get deep enough to meet the gates."""
        legal = legal_events(self, disrupt=False)
        if legal:
            self._decide(self._event(data.draw(st.sampled_from(legal))))

    def _decide(self, event: Any) -> None:
        before = self.workflow
        decision = resolve(self.definition, before, event, Context(now=self.now))
        if not isinstance(decision, Accepted):
            return
        assert not self.definition.is_terminal(before.state), "a terminal workflow changed"
        assert decision.workflow.version == before.version + 1
        self.history.append(event.type)
        if decision.workflow.state == "EXECUTING_ACTION" and before.state != "EXECUTING_ACTION":
            if event.type == "EFFECT_RERUN_REQUESTED":
                assert self.refund == "unknown", "a re-run of a refund whose outcome is known"
            else:
                self._assert_authorised_entry(before, event)
            self.entered_effect += 1
            hypothesis_event("entered the effect state")
        self._observe_refund(before.state, event.type)
        self.workflow = decision.workflow

    def _observe_refund(self, source: str, event_type: str) -> None:
        """What the provider holds after `event_type` was accepted in `source`."""
        if source == "EXECUTING_ACTION":
            if event_type in ("ACTION_EXECUTED", "POST_ACTION_INVARIANT_FAILED"):
                self.refund = "committed"
            elif event_type == "ESCALATE":
                self.refund = "unknown"
            elif event_type == "PERMANENT_ERROR":
                self.refund = "none"
        elif event_type == "EFFECT_CONFIRMED":
            self.refund = "committed"
        elif event_type == "COMPENSATION_SUCCEEDED" and self.refund != "none":
            self.refund = "compensated"
        elif event_type == "CUSTOMER_NOTIFIED":
            self.notified = True

    def _event(
        self,
        event_type: str,
        *,
        answer_job: bool = True,
        role: str = "support_approver",
        shift: int = 0,
        amount: str = "20.00",
        passed: bool = True,
    ) -> Any:
        payload: dict[str, Any] = copy.deepcopy(PAYLOADS[event_type])
        current = int(self.workflow.data.get("recommendation_version", 0))
        if "recommendation_version" in payload:
            payload["recommendation_version"] = max(1, current + shift)
        if event_type in ("APPROVED", "RECOMMENDATION_GENERATED"):
            payload["amount"] = amount
        if event_type == "POLICY_VALID":
            payload["passed"] = passed
        timers = [t for t in self.workflow.execution.timers.values() if t.event == event_type]
        spec = self.definition.event(event_type)
        if spec is not None and spec.source == "timer" and timers and answer_job:
            timer = timers[0]
            payload.update(timer_id=timer.id, fire_at=timer.fire_at.isoformat())
            if timer.branch:
                payload["branch"] = timer.branch
            self.now = max(self.now, timer.fire_at)
        jobs = list(self.workflow.execution.open_jobs)
        causation = jobs[-1] if jobs and answer_job else None
        if role == "system" or spec is None or spec.source != "signal":
            role = role if spec is not None and spec.source == "signal" else "system"
        return envelope(
            event_type,
            workflow_id="wf-p",
            payload=payload,
            role=role,
            causation_id=causation,
            occurred_at=self.now,
        )

    def _assert_authorised_entry(self, before: Workflow, event: Any) -> None:
        data = before.data
        assert event.type == "APPROVED"
        assert event.actor.role in LIMITS
        assert Decimal(event.payload["amount"]) <= LIMITS[event.actor.role]
        assert Decimal(event.payload["amount"]) == Decimal(data["recommendation"]["amount"])
        assert event.payload["recommendation_version"] == data["recommendation_version"]
        assert data["validation"]["passed"] is True
        assert data["validation"]["recommendation_version"] == data["recommendation_version"]
        assert not before.execution.cancel_requested
        last_recommendation = max(
            i for i, e in enumerate(self.history) if e == "RECOMMENDATION_GENERATED"
        )
        assert "POLICY_VALID" in self.history[last_recommendation:]

    @invariant()
    def version_counts_accepted_events(self) -> None:
        assert self.workflow.version == len(self.history)

    @invariant()
    def a_terminal_keeps_its_promise_about_the_refund(self) -> None:
        if self.definition.terminal(self.workflow.state) is None:
            return  # versions before 3 promise nothing
        promised = {
            "CANCELLED": self.refund == "none",
            "REJECTED": self.refund == "none",
            "FAILED": self.refund == "none",
            "FAILED_COMPENSATED": self.refund == "compensated",
            "COMPLETED": self.refund == "committed" and self.notified,
        }
        assert promised[self.workflow.state], (self.workflow.state, self.refund, self.history)


SupportWorkflowMachine.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSupportWorkflowProperties = SupportWorkflowMachine.TestCase


def test_random_walks_do_reach_the_effect_state() -> None:
    """Guard against a vacuous property: the generator must get past approval sometimes."""
    reached = 0
    for seed in range(200):
        machine = SupportWorkflowMachine()
        rng = __import__("random").Random(seed)
        for _ in range(80):
            legal = legal_events(machine, disrupt=rng.random() < 0.1)
            if not legal:
                break
            event_type = rng.choice(legal)
            event = machine._event(event_type, role=rng.choice(ROLES[:2]))
            decision = resolve(
                machine.definition, machine.workflow, event, Context(now=machine.now)
            )
            if isinstance(decision, Accepted):
                machine.history.append(event_type)
                if decision.workflow.state == "EXECUTING_ACTION":
                    reached += 1
                machine.workflow = decision.workflow
    assert reached > 0
