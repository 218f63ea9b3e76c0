"""The builder's part for outside effects: what each effect's events mean and what each
terminal state promises about them (see `contracts.effects`), and the `effect_is` guard."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

from interlock._sdk.results import EventRef, event_name
from interlock.contracts.definition import Guard
from interlock.contracts.effects import EFFECT_GUARD, Effect, EffectStatus, Promise, Terminal


def effect_is(state: str | None, *status: EffectStatus) -> Guard:
    """The guard that holds when the effect of `state` (every effect, with None) has one of
    `status` (`none`, `committed`, `compensated`, `unknown`); the graph check reads it."""
    params: dict[str, Any] = {"status": list(status)}
    if state is not None:
        params["state"] = state
    return Guard(name=EFFECT_GUARD, params=params)


class Effects:
    """Mixed into `Workflow`: the effect declarations and the terminals' promises."""

    _lists: dict[str, list[Any]]

    def effect(
        self,
        state: str,
        *,
        committed: Iterable[EventRef],
        unknown: Iterable[EventRef] = ("ESCALATE",),
        refused: Iterable[EventRef] = ("PERMANENT_ERROR",),
        compensation: str | None = None,
        compensated: Iterable[EventRef] = (),
        confirmed: Iterable[EventRef] = (),
        gated: bool = True,
    ) -> Self:
        """The outside effect of `state` and the events that settle it: the engine keeps its
        status (none, committed, compensated, unknown) from them alone."""
        names = [[event_name(e) for e in group] for group in (committed, unknown, refused)]
        effect = Effect(
            state=state,
            committed=tuple(names[0]),
            unknown=tuple(names[1]),
            refused=tuple(names[2]),
            compensation=compensation,
            compensated=tuple(event_name(e) for e in compensated),
            confirmed=tuple(event_name(e) for e in confirmed),
            gated=gated,
        )
        self._lists.setdefault("effects", []).append(effect)
        return self

    def terminal(self, *states: str, effects: Promise, requires: Iterable[str] = ()) -> Self:
        """What reaching each of `states` promises about the effects: `none`, `reversed`,
        `done` (the effect states in `requires`, default every gated one) or `any`. The
        graph check proves every path keeps it."""
        for state in states:
            terminal = Terminal(state=state, effects=effects, requires=tuple(requires))
            self._lists.setdefault("terminals", []).append(terminal)
        return self
