"""Guards a plugin adds to the built-in ones: pure predicates over what a decision sees.

A plugin guard reads only its `GuardInput` (no clock of its own, no I/O), so deciding the same
event again gives the same answer. The engine records it in the audit as its name, or
`!name` when it refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class GuardInput:
    """What a plugin guard may look at for one decision."""

    state: str
    data: Mapping[str, object]
    payload: Mapping[str, object]
    params: Mapping[str, object]
    """The row's parameters for this guard (`check("name", **params)`)."""
    parameters: Mapping[str, object]
    """The definition's parameters with the deployment's overrides."""
    actor_role: str
    now: datetime


GuardPredicate = Callable[[GuardInput], bool]


@dataclass(frozen=True)
class PluginGuard:
    """A named pure guard (see `interlock.guard`)."""

    name: str
    predicate: GuardPredicate
