"""Guards on rows: the built-in ones, by name and documented, and typed plugin guards.

A built-in guard is data the engine interprets (and the graph check reads); each function
here returns the `Guard` a row names, so a definition says `guards=(actor_role_in("reviewer_
roles"),)` instead of spelling `check("actor_role_in", param=...)`. The audit records the
labels each one checks (`role_allowed`, `!amount_within_limit` …).

A plugin guard of its own (`@guard`) may ask for the payload and the workflow data as its own
pydantic models, so a `Decimal` amount arrives as a `Decimal`:

```python
class Claim(BaseModel):
    amount: Decimal

class Shown(BaseModel):
    claim: Claim

@guard(data=Shown)
def within_policy(g: Typed[Empty, Shown]) -> bool:
    return g.data.claim.amount <= Decimal(g.parameters["policy_limit"])
```
A payload or data that does not fit its model fails the guard (recorded `!within_policy`):
deciding the same event again still gives the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ConfigDict, ValidationError

from interlock._sdk.effects import effect_is
from interlock.contracts.definition import Guard
from interlock.contracts.guards import GuardInput, PluginGuard

P = TypeVar("P", bound=BaseModel)
D = TypeVar("D", bound=BaseModel)


def actor_role_in(param: str) -> Guard:
    """The actor's role is listed in the definition parameter `param` (a list of roles):
    label `role_allowed`."""
    return Guard(name="actor_role_in", params={"param": param})


def cancel_requested() -> Guard:
    """A cancellation was asked for while the state's effect was under way (a row with
    `action="defer_cancel"` records it): label `cancel_requested`."""
    return Guard(name="cancel_requested")


def payload_matches(
    data: Mapping[str, str | list[str]] | None = None, values: Mapping[str, object] | None = None
) -> Guard:
    """The payload agrees with the record: each payload path in `data` equals the workflow
    data at the given dotted path (or each of a list), each in `values` equals the constant.
    A missing value never matches. Labels `field==path`, `field=='value'`."""
    params: dict[str, Any] = {}
    if data:
        params["data"] = dict(data)
    if values:
        params["values"] = dict(values)
    return Guard(name="payload_matches", params=params)


def amount_within_limit(
    param: str = "approver_limits", *, field: str = "amount", shown: str | None = None
) -> Guard:
    """An approval of an amount: the actor's role has a limit in the parameter `param` (role
    -> amount), the payload's `field` is within it and, with `shown`, equals the workflow data
    at that dotted path (compared as decimals). Labels `role_allowed`, `amount_within_limit`,
    `amount_matches_shown`."""
    params: dict[str, Any] = {"param": param, "field": field}
    if shown is not None:
        params["shown"] = shown
    return Guard(name="amount_within_limit", params=params)


def approval_valid() -> Guard:
    """The support workflow's approval: a role whose `approver_limits` covers the amount, for
    the amount and version of the current recommendation, after a policy validation of that
    version, not cancelled, not expired. Labels `role_allowed`, `amount_within_limit`,
    `amount_matches_recommendation`, `version_current`, `validation_current`,
    `not_cancelled`, `not_expired`."""
    return Guard(name="approval_valid")


def has_data(key: str) -> Guard:
    """The workflow data holds `key` (not None): label `has_<key>`."""
    return Guard(name="has_data", params={"key": key})


def has_review_target() -> Guard:
    """Manual review knows the step that paused, so `REVIEW_TARGET` can send it back."""
    return Guard(name="has_review_target")


def payload_not_in(field: str, param: str) -> Guard:
    """The payload's `field` is not one of the values the parameter `param` lists."""
    return Guard(name="payload_not_in", params={"field": field, "param": param})


def confidence_at_least(param: str) -> Guard:
    """The payload's `confidence` is at least the parameter `param`."""
    return Guard(name="confidence_at_least", params={"param": param})


BUILT_IN = {
    fn.__name__: fn
    for fn in (
        actor_role_in,
        cancel_requested,
        payload_matches,
        amount_within_limit,
        approval_valid,
        has_data,
        has_review_target,
        payload_not_in,
        confidence_at_least,
        effect_is,
    )
}
"""The built-in guards a definition may name, each documented on its function."""


class Anything(BaseModel):
    """The model of a typed guard's payload or data it does not read: takes anything."""

    model_config = ConfigDict(extra="ignore", frozen=True)


@dataclass(frozen=True)
class Typed(Generic[P, D]):
    """What a typed guard looks at: `GuardInput` with the payload and data as models."""

    state: str
    payload: P
    data: D
    params: Mapping[str, object]
    parameters: Mapping[str, object]
    actor_role: str
    now: datetime


TypedPredicate = Callable[[Typed[P, D]], bool]


def typed_guard(payload: type[P], data: type[D]) -> Callable[[TypedPredicate[P, D]], PluginGuard]:
    """Declare a guard whose predicate receives the payload and data parsed as `payload` and
    `data` (see the module's example); `guard(payload=..., data=...)` says the same."""

    def declare(predicate: TypedPredicate[P, D]) -> PluginGuard:
        def held(g: GuardInput) -> bool:
            try:
                parsed = Typed(
                    state=g.state,
                    payload=payload.model_validate(dict(g.payload)),
                    data=data.model_validate(dict(g.data)),
                    params=g.params,
                    parameters=g.parameters,
                    actor_role=g.actor_role,
                    now=g.now,
                )
            except ValidationError:
                return False
            return predicate(parsed)

        return PluginGuard(predicate.__name__, held)

    return declare


@overload
def guard(predicate: Callable[[GuardInput], bool], /) -> PluginGuard: ...
@overload
def guard(*, payload: type[P], data: type[D]) -> Callable[[TypedPredicate[P, D]], PluginGuard]: ...
@overload
def guard(*, payload: type[P]) -> Callable[[TypedPredicate[P, Anything]], PluginGuard]: ...
@overload
def guard(*, data: type[D]) -> Callable[[TypedPredicate[Anything, D]], PluginGuard]: ...
def guard(
    predicate: Callable[[GuardInput], bool] | None = None,
    /,
    *,
    payload: type[BaseModel] = Anything,
    data: type[BaseModel] = Anything,
) -> PluginGuard | Callable[[Any], PluginGuard]:
    """Declare a pure guard named after the function, for the plugin's `guards`:

    ```python
    @guard
    def polite(g: GuardInput) -> bool:
        return not g.payload.get("shouting", False)

    @guard(payload=Approval, data=Shown)          # typed: see the module's example
    def covers(g: Typed[Approval, Shown]) -> bool:
        return g.payload.amount == g.data.claim.amount

    wf.on("RECEIVED", "START", "GREETING", guards=(check("polite"),))
    ```
    It may read only what it is given: the same event decided again gets the same answer.
    """
    if predicate is not None:
        return PluginGuard(predicate.__name__, predicate)
    return typed_guard(payload, data)
