"""Named guards: deterministic predicates over explicit inputs, never a side effect.

A guard returns whether it holds and the labels of the checks it made, so the audit trail
records *why* a transition was allowed or refused (`role_allowed`, `!version_current` …).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from interlock.contracts.definition import Branch, WorkflowDefinition
from interlock.contracts.effectcheck import effect_guard_holds, effects_of
from interlock.contracts.envelope import Envelope
from interlock.projector.engine.model import Context, Workflow


@dataclass(frozen=True)
class Facts:
    """Everything a guard or action may look at for one decision."""

    definition: WorkflowDefinition
    workflow: Workflow
    event: Envelope
    ctx: Context
    parameters: Mapping[str, Any]
    branch: str | None = None

    @property
    def payload(self) -> dict[str, Any]:
        return self.event.payload


@dataclass(frozen=True)
class Verdict:
    ok: bool
    labels: tuple[str, ...] = ()


GuardFn = Callable[[Facts, Mapping[str, Any]], Verdict]


def _checks(**named: bool) -> Verdict:
    return Verdict(all(named.values()), tuple(k if v else f"!{k}" for k, v in named.items()))


def _decimal(value: object) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _finite(value: object) -> Decimal | None:
    number = None if value is None else _decimal(value)
    return number if number is not None and number.is_finite() else None


def attempts_remaining(f: Facts, _: Mapping[str, Any]) -> Verdict:
    policy = f.definition.retry[f.workflow.state]
    failures = f.workflow.execution.attempts.get(f.workflow.state, 0) + 1
    return _checks(attempts_remaining=failures < policy.attempts_allowed(f.parameters))


def current_branch(f: Facts) -> Branch | None:
    """The branch of the parallel state the event addresses (None outside one)."""
    par = f.definition.parallel_state(f.workflow.state)
    return next((b for b in par.branches if b.name == f.branch), None) if par else None


def branch_attempts_remaining(f: Facts, _: Mapping[str, Any]) -> Verdict:
    branch = current_branch(f)
    state = f.workflow.execution.branches.get(f.branch or "")
    if branch is None or state is None:
        return _checks(branch_known=False)
    allowed = branch.retry.attempts_allowed(f.parameters)
    return _checks(branch_attempts_remaining=state.attempts + 1 < allowed)


def join_ready(f: Facts, _: Mapping[str, Any]) -> Verdict:
    others = {n: b for n, b in f.workflow.execution.branches.items() if n != f.branch}
    return _checks(join_ready=all(b.status == "succeeded" for b in others.values()))


def confidence_at_least(f: Facts, params: Mapping[str, Any]) -> Verdict:
    threshold = float(f.parameters[params["param"]])
    return _checks(confidence_sufficient=float(f.payload.get("confidence", 0.0)) >= threshold)


def validation_current(f: Facts, _: Mapping[str, Any]) -> Verdict:
    return _checks(
        validation_passed=f.payload.get("passed") is True,
        validation_version_current=f.payload.get("recommendation_version")
        == f.workflow.data.get("recommendation_version"),
    )


def approval_valid(f: Facts, _: Mapping[str, Any]) -> Verdict:
    """An approval counts only from a role with a limit covering the amount, for the amount
    and the version of the current recommendation, after a policy validation of that
    version, while the workflow is not being cancelled and the approval has not expired."""
    data, execution = f.workflow.data, f.workflow.execution
    limits: Mapping[str, Any] = f.parameters.get("approver_limits", {})
    limit = _decimal(limits.get(f.event.actor.role))
    amount = _decimal(f.payload.get("amount"))
    recommended = _decimal((data.get("recommendation") or {}).get("amount"))
    validation = data.get("validation") or {}
    timer = execution.timers.get("approval")
    return _checks(
        role_allowed=limit is not None,
        amount_within_limit=limit is not None and amount is not None and amount <= limit,
        amount_matches_recommendation=amount is not None and amount == recommended,
        version_current=f.payload.get("recommendation_version")
        == data.get("recommendation_version"),
        validation_current=validation.get("passed") is True
        and validation.get("recommendation_version") == data.get("recommendation_version"),
        not_cancelled=not execution.cancel_requested,
        not_expired=timer is None or f.ctx.now < timer.fire_at,
    )


def amount_within_limit(f: Facts, params: Mapping[str, Any]) -> Verdict:
    """An approval of an amount: the actor's role has a limit in the parameter
    `params["param"]` (role -> amount), the payload's `params["field"]` is within it and, with
    `params["shown"]`, equals the workflow data at that dotted path (what the task showed).
    Amounts compare as decimals, so `"120.0"` approves `"120.00"`."""
    limits: Mapping[str, Any] = f.parameters.get(str(params.get("param", "approver_limits")), {})
    limit = _finite(limits.get(f.event.actor.role))
    amount = _finite(lookup(f.payload, str(params.get("field", "amount"))))
    checks = {
        "role_allowed": limit is not None,
        "amount_within_limit": limit is not None and amount is not None and amount <= limit,
    }
    if params.get("shown"):
        shown = _finite(lookup(f.workflow.data, str(params["shown"])))
        checks["amount_matches_shown"] = amount is not None and amount == shown
    return _checks(**checks)


def reviewer_current(f: Facts, _: Mapping[str, Any]) -> Verdict:
    """A reviewer's rejection or change request must come from a reviewer and name the
    current recommendation (or none, for a rejection of whatever is current)."""
    roles = set(f.parameters.get("approver_limits", {})) | set(
        f.parameters.get("operator_roles", ())
    )
    named = f.payload.get("recommendation_version")
    return _checks(
        role_allowed=f.event.actor.role in roles,
        version_current=named is None or named == f.workflow.data.get("recommendation_version"),
    )


def cancel_requested(f: Facts, _: Mapping[str, Any]) -> Verdict:
    return _checks(cancel_requested=f.workflow.execution.cancel_requested)


def actor_role_in(f: Facts, params: Mapping[str, Any]) -> Verdict:
    return _checks(role_allowed=f.event.actor.role in set(f.parameters[params["param"]]))


def has_review_target(f: Facts, _: Mapping[str, Any]) -> Verdict:
    review = f.workflow.execution.review
    return _checks(resumable=review is not None and review.target is not None)


def has_data(f: Facts, params: Mapping[str, Any]) -> Verdict:
    key = str(params["key"])
    return _checks(**{f"has_{key}": f.workflow.data.get(key) is not None})


def lookup(value: Any, path: str) -> Any:
    """The value at dotted `path` inside nested mappings (None where the path breaks)."""
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def payload_matches(f: Facts, params: Mapping[str, Any]) -> Verdict:
    """The payload agrees with the record: each payload path in `params["data"]` equals the
    workflow data at the given dotted path (or at each of a list of paths), and each in
    `params["values"]` equals the given constant. A missing value never matches."""
    labels: list[str] = []
    ok = True
    for field, paths in params.get("data", {}).items():
        value = lookup(f.payload, field)
        for path in [paths] if isinstance(paths, str) else paths:
            held = value is not None and value == lookup(f.workflow.data, path)
            labels.append(f"{'' if held else '!'}{field}=={path}")
            ok = ok and held
    for field, expected in params.get("values", {}).items():
        held = lookup(f.payload, field) == expected
        labels.append(f"{'' if held else '!'}{field}=='{expected}'")
        ok = ok and held
    return Verdict(ok, tuple(labels))


def payload_not_in(f: Facts, params: Mapping[str, Any]) -> Verdict:
    """`payload[params["field"]]` is not one of the values listed by the definition
    parameter `params["param"]` (e.g. an effect that needs an approval)."""
    field = str(params["field"])
    listed = set(f.parameters.get(params["param"], ()))
    return _checks(**{f"{field}_not_in_{params['param']}": lookup(f.payload, field) not in listed})


def effect_is(f: Facts, params: Mapping[str, Any]) -> Verdict:
    """The effect of `params["state"]` (every effect, without it) has one of the statuses
    `params["status"]` (see `contracts.effects`)."""
    facts = {e.state: "none" for e in effects_of(f.definition)}
    facts.update({s: fact.status for s, fact in f.workflow.execution.effects.items()})
    label = f"effect_{params.get('state', 'all')}_{'_or_'.join(params.get('status', ()))}"
    held = effect_guard_holds(params, facts)
    return Verdict(held, (label.lower() if held else f"!{label.lower()}",))


GUARDS: dict[str, GuardFn] = {
    fn.__name__: fn
    for fn in (
        attempts_remaining,
        branch_attempts_remaining,
        join_ready,
        confidence_at_least,
        validation_current,
        approval_valid,
        amount_within_limit,
        reviewer_current,
        cancel_requested,
        actor_role_in,
        has_review_target,
        has_data,
        payload_matches,
        payload_not_in,
        effect_is,
    )
}
