"""What every business process has, as builder declarations: an approval, a cancellation, a
manual review operators act on, and announcements. Each expands to ordinary rows, timers,
announcements and parameters of the definition (so the graph check proves them, and
`interlock graph` shows them); nothing here runs at decision time.

```python
wf.approval("AWAITING_APPROVAL", approved="PAYING", rejected="REJECTED",
            amount="amount", binds={"amount": "claim.amount"},
            limits={"manager": "1000.00", "finance_director": "25000.00"},
            expires=72 * 3600.0, escalate_to="ESCALATED")
wf.cancellation("CANCELLED", before=("RECEIVED", "AWAITING_APPROVAL"), during=("PAYING",))
wf.operator_review("REVIEW", resumable=("CLASSIFYING",), cancel="CANCELLED")
wf.announce_each({"PAID": "completed", "REJECTED": "rejected"}, fields={"amount": "claim.amount"})
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel

from interlock._sdk.effects import effect_is
from interlock._sdk.guards import (
    actor_role_in,
    amount_within_limit,
    has_review_target,
    payload_matches,
)
from interlock._sdk.guards import cancel_requested as cancelling
from interlock._sdk.results import EventRef
from interlock.contracts.definition import (
    REVIEW_TARGET,
    Announcement,
    EventSpec,
    Guard,
    HumanWait,
    Limit,
    TimerSpec,
    Transition,
)
from interlock.contracts.effects import Promise
from interlock.contracts.payloads import Amount, Payload, Text
from interlock.contracts.progress import DEFAULT_REMINDER_EVERY_S, DEFAULT_WAIT_DEADLINE_S

APPROVED, REJECTED, CANCEL, RETRY = (
    "APPROVED",
    "REJECTED_BY_REVIEWER",
    "CANCEL_REQUESTED",
    "RETRY_REQUESTED",
)
EXPIRED = "APPROVAL_EXPIRED"


class Approval(Payload):
    """An approval of the amount the task showed (the console and `interlock approve` fill it
    in from the workflow); `note` for the audit trail."""

    amount: Amount
    note: Text | None = None


class Rejection(Payload):
    reason: Text = ""


class Cancellation(Payload):
    reason: Text = ""


class Process:
    """Mixed into `Workflow`: approvals, cancellation, operator review, announcements."""

    _fields: dict[str, Any]
    _events: dict[str, EventSpec]
    _rows: list[Transition]
    _sets: dict[str, set[str]]
    _lists: dict[str, list[Any]]

    if TYPE_CHECKING:  # the builder's own declarations these expand to

        def signal(
            self, name: str, payload: type[BaseModel] = ..., *, into: str | None = None
        ) -> Self: ...
        def on(
            self,
            source: str,
            event: EventRef,
            target: str,
            *,
            guards: Iterable[Guard] = (),
            limit: Limit | None = None,
            action: str | None = None,
            reissue: bool = False,
            reason: str | None = None,
        ) -> Self: ...
        def states(
            self,
            *names: str,
            initial: str | None = None,
            terminal: Iterable[str] = (),
            waiting: Iterable[str] = (),
            effects: Iterable[str] = (),
            cancellable: Iterable[str] = (),
        ) -> Self: ...
        def review(self, state: str, *, resumable: Iterable[str] = ()) -> Self: ...
        def timer(self, timer: TimerSpec) -> Self: ...
        def announce(
            self,
            announcement: Announcement | str,
            name: str | None = None,
            *,
            fields: Mapping[str, str] | None = None,
        ) -> Self: ...
        def terminal(
            self, *states: str, effects: Promise, requires: Iterable[str] = ()
        ) -> Self: ...

    def approval(
        self,
        state: str,
        *,
        approved: str,
        rejected: str,
        payload: type[BaseModel] = Approval,
        amount: str | None = "amount",
        binds: Mapping[str, str] | None = None,
        shows: Mapping[str, str] | None = None,
        limits: Mapping[str, str] | None = None,
        limits_param: str = "approver_limits",
        roles_param: str = "approver_roles",
        expires: float | None = None,
        expiry_param: str = "approval_expiry_seconds",
        escalate_to: str | None = None,
    ) -> Self:
        """`state` waits for a person's `APPROVED` (to `approved`) or `REJECTED_BY_REVIEWER`
        (to `rejected`), announced as `approval_requested` with `binds` and `shows`.

        Who may approve: a role with a limit in the parameter `limits_param` (default
        `limits`) covering the payload's `amount` field; without `amount`, any role listed
        in `roles_param` (default: the limits' roles), which also may reject. What exactly is
        approved: each payload field in `binds` must equal the workflow data at its dotted
        path (the value the task showed; an amount compares as a decimal). After `expires`
        seconds (parameter `expiry_param`) the wait moves to `escalate_to` (a second wait
        that takes the same answers, announced `approval_escalated`), else to `rejected`."""
        bound = dict(binds or {})
        parameters = self._fields["parameters"]
        parameters.setdefault(limits_param, dict(limits or {}))
        parameters.setdefault(roles_param, sorted(parameters[limits_param]))
        self.signal(APPROVED, payload, into="approval")
        self.signal(REJECTED, Rejection, into="rejection")
        guards: list[Guard] = [actor_role_in(roles_param)]
        if amount is not None:
            shown = bound.pop(amount, None)
            guards = [amount_within_limit(limits_param, field=amount, shown=shown)]
        if bound:
            guards.append(payload_matches(data=bound))
        waits = [state] if escalate_to is None else [state, escalate_to]
        self.states(*waits, waiting=waits)
        for wait in waits:
            self.on(wait, APPROVED, approved, guards=guards)
            self.on(wait, REJECTED, rejected, guards=(actor_role_in(roles_param),))
        fields = {**(shows or {}), **(binds or {})}
        timer = None
        if expires is not None:
            parameters.setdefault(expiry_param, expires)
            self.timer(
                TimerSpec(kind="approval", event=EXPIRED, delay_param=expiry_param, state=state)
            )
            self.on(state, EXPIRED, escalate_to or rejected, reason="approval_expired")
            timer = "approval"
        self.announce(
            Announcement(state=state, name="approval_requested", fields=fields, expiry_timer=timer)
        )
        if escalate_to is not None:
            self.announce(Announcement(state=escalate_to, name="approval_escalated", fields=fields))
        # the task belongs first to the least-privileged approver
        ranked = sorted(
            parameters[limits_param], key=lambda r: Decimal(str(parameters[limits_param][r]))
        )
        owner = [*ranked, *sorted(parameters[roles_param]), "approver"]
        parameters.setdefault("approval_deadline_seconds", DEFAULT_WAIT_DEADLINE_S)
        parameters.setdefault("approval_reminder_seconds", DEFAULT_REMINDER_EVERY_S)
        self._lists.setdefault("human_waits", []).extend(
            HumanWait(
                state=w,
                owner_role=owner[0],
                deadline_param="approval_deadline_seconds",
                reminder_every_param="approval_reminder_seconds",
            )
            for w in waits
        )
        return self

    def cancellation(
        self,
        target: str,
        *,
        before: Iterable[str],
        during: Iterable[str] = (),
        compensate: str | None = None,
    ) -> Self:
        """`CANCEL_REQUESTED` ends the workflow in `target` at once from each state of
        `before` (no effect has been tried). In an effect state of `during` it is recorded
        and the effect's outcome decides: refused → `target`; committed → `compensate` (the
        state whose stage reverses it) if given, else the effect stands and the workflow goes
        on. Declare the effects (`effect`) first. `target` promises no effect unless the
        definition says otherwise (`terminal`)."""
        if CANCEL not in self._events:
            self.signal(CANCEL, Cancellation, into="cancellation")
        before, during = tuple(before), tuple(during)
        for state in before:
            self.on(state, CANCEL, target)
        effects = {e.state: e for e in self._lists.get("effects", [])}
        for state in during:
            self.on(state, CANCEL, state, action="defer_cancel")
            effect = effects.get(state)
            if effect is None:
                raise ValueError(f"cancellation during {state}: declare its effect first")
            for event in effect.refused:
                _first(self, state, event, target)
            for event in effect.committed if compensate else ():
                _first(self, state, event, compensate or target)
        self._sets.setdefault("cancellable_states", set()).update(before)
        self._sets.setdefault("deferred_cancel_states", set()).update(during)
        if not any(t.state == target for t in self._lists.get("terminals", [])):
            self.terminal(target, effects="none")
        return self

    def operator_review(
        self,
        state: str,
        *,
        resumable: Iterable[str] = (),
        operators: str = "operator_roles",
        cancel: str | None = None,
        reject: str | None = None,
    ) -> Self:
        """`state` is the manual review: operators (roles in the parameter `operators`,
        default `["operator"]`) send it back to the step that paused (`RETRY_REQUESTED`,
        `interlock retry`), or — while no effect stands — cancel it to `cancel` or reject
        it to `reject`."""
        self._fields["parameters"].setdefault(operators, ["operator"])
        self.states(state, waiting=(state,))
        self.review(state, resumable=resumable)
        operator = actor_role_in(operators)
        if RETRY not in self._events:
            self.signal(RETRY)
        self.on(
            state,
            RETRY,
            REVIEW_TARGET,
            guards=(operator, has_review_target()),
            action="resume_review",
        )
        nothing = effect_is(None, "none")
        if cancel is not None:
            if CANCEL not in self._events:
                self.signal(CANCEL, Cancellation, into="cancellation")
            self.on(state, CANCEL, cancel, guards=(operator, nothing))
        if reject is not None:
            if REJECTED not in self._events:
                self.signal(REJECTED, Rejection, into="rejection")
            self.on(state, REJECTED, reject, guards=(operator, nothing))
        return self

    def announce_each(
        self, names: Mapping[str, str], *, fields: Mapping[str, str] | None = None
    ) -> Self:
        """Publish `wf.out.<type>.<name>` on entering each state of `names` (state -> name),
        with `fields` (payload field -> dotted path into the workflow data)."""
        for state, name in names.items():
            self.announce(Announcement(state=state, name=name, fields=dict(fields or {})))
        return self


def _first(wf: Process, source: str, event: str, target: str) -> None:
    """A row tried before the rows already written for (source, event): if a cancellation
    was requested, the effect's outcome takes the workflow to `target`."""
    row = Transition(source=source, event=event, target=target, guards=(cancelling(),))
    at = next(
        (i for i, r in enumerate(wf._rows) if (r.source, r.event) == (source, event)),
        len(wf._rows),
    )
    wf._rows.insert(at, row)
