"""What a definition says about its outside effects, and what its terminal states promise.

An `Effect` names the state that acts on the world and the events that settle what happened:
which of its results mean the effect stands (`committed`), which leave nobody knowing
(`unknown`, with the idempotency key to ask the provider about), and where and by which event
it is reversed (`compensated`). The engine keeps one fact per effect from those events alone
(`none → committed | unknown → compensated`); no plugin code sets it.

A `Terminal` says what reaching a terminal state asserts about those facts:

* ``none``: no effect ever stood or may have stood (cancelled, rejected, failed before acting);
* ``reversed``: whatever stood was compensated (every effect ``none`` or ``compensated``);
* ``done``: the effects named in ``requires`` (by default every gated effect) are committed;
* ``any``: nothing is promised.

An effect whose outcome is ``unknown`` satisfies no promise but ``any``: a workflow must not end
while nobody knows whether it acted. The graph check (`contracts.effectcheck`) proves every
path into a terminal keeps its promise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

EffectStatus = Literal["none", "committed", "compensated", "unknown"]
Promise = Literal["none", "reversed", "done", "any"]
STANDING: frozenset[EffectStatus] = frozenset({"committed", "unknown"})
"""Statuses under which the effect may be in force at the provider."""

EFFECT_GUARD = "effect_is"
"""The built-in guard over effect facts: `effect_is(state=S, status=[...])` holds when the
effect of `S` (every declared effect, without `state`) has one of the statuses. The graph
check reads it exactly, so a table can branch on whether an effect stands."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Effect(_Frozen):
    """The outside effect performed in `state`, and the events that settle it."""

    state: str
    committed: tuple[str, ...]
    """Results in `state` after which the effect stands (a receipt, even a faulty one)."""
    unknown: tuple[str, ...] = ("ESCALATE",)
    """Results in `state` after which nobody knows whether it acted."""
    refused: tuple[str, ...] = ("PERMANENT_ERROR",)
    """Results in `state` after which it certainly did not act (the provider refused the
    call made under the key, having found nothing under it first)."""
    compensation: str | None = None
    """The state whose stage reverses the effect."""
    compensated: tuple[str, ...] = ()
    """Results in `compensation` after which the effect is reversed."""
    confirmed: tuple[str, ...] = ()
    """Operator events that record the receipt found at the provider (unknown → committed)."""
    gated: bool = True
    """False for a follow-up (a notification) that needs no gate of its own."""


class Terminal(_Frozen):
    """What reaching terminal `state` asserts about the workflow's effects."""

    state: str
    effects: Promise
    requires: tuple[str, ...] = ()
    """With ``done``: the effect states that must be committed (empty: every gated one)."""


def satisfied(terminal: Terminal, effects: tuple[Effect, ...], facts: Mapping[str, str]) -> bool:
    """Whether `facts` (effect state -> status) keep `terminal`'s promise."""
    status = {e.state: facts.get(e.state, "none") for e in effects}
    if terminal.effects == "any":
        return True
    if terminal.effects == "none":
        return all(s == "none" for s in status.values())
    if terminal.effects == "reversed":
        return all(s in ("none", "compensated") for s in status.values())
    required = terminal.requires or tuple(e.state for e in effects if e.gated)
    return all(status.get(s) == "committed" for s in required) and "unknown" not in set(
        status.values()
    )


def describe(terminal: Terminal) -> str:
    """The promise in words, for a counterexample."""
    if terminal.effects == "none":
        return "promises no effect"
    if terminal.effects == "reversed":
        return "promises every effect reversed"
    if terminal.effects == "done":
        return f"promises {'/'.join(terminal.requires) or 'every gated effect'} committed"
    return "promises nothing"


CONFIRM_EVENT = "EFFECT_CONFIRMED"
"""An operator records the receipt found at the provider for an effect whose outcome was
unknown; its payload is the effect's receipt, and the workflow continues as executed."""
RERUN_EVENT = "EFFECT_RERUN_REQUESTED"
"""An operator runs an effect whose outcome is unknown again, under the same key."""
COMPENSATE_EVENT = "COMPENSATE"
"""An operator has an effect that stands, or may stand, reversed."""
RECOVERY_EVENTS = (CONFIRM_EVENT, RERUN_EVENT, COMPENSATE_EVENT)
