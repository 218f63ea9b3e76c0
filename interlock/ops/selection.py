"""A selection of workflows for a bulk operator command: `--type T [--state S] [--tenant X]
[--since DURATION] [--reason R]`.

Pure: parsing and matching only (the query that reads the candidates is `interlock.ops.bulk`).
`--since` keeps the workflows that changed within the duration; `--reason` those whose review
reason (or, outside review, the class of their last failure) is R. Bad input raises
`InvalidSelection` with one line naming the option.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from interlock.config import durations
from interlock.ops.errors import InvalidSelection

MAX_SELECTED = 1000
"""The most workflows one command acts on (`--limit` may lower it, never raise it)."""


@dataclass(frozen=True, slots=True)
class Selection:
    workflow_type: str
    states: tuple[str, ...] = ()
    tenant_id: str | None = None
    since: timedelta | None = None
    reason: str | None = None
    limit: int = MAX_SELECTED

    def describe(self) -> dict[str, Any]:
        """The selection as the operator gave it, for the preview and the audit."""
        found: dict[str, Any] = {"type": self.workflow_type}
        if self.states:
            found["state"] = list(self.states)
        if self.tenant_id:
            found["tenant"] = self.tenant_id
        if self.since is not None:
            found["since_seconds"] = int(self.since.total_seconds())
        if self.reason:
            found["reason"] = self.reason
        return found


def parse_duration(text: str) -> timedelta:
    """`90s`, `15m`, `2h`, `1d`, `1w` or a sum of them (`1h30m`); positive."""
    try:
        return durations.parse_duration(text)
    except ValueError as exc:
        raise InvalidSelection(str(exc)) from None


def states_of(given: Iterable[str]) -> tuple[str, ...]:
    """`--state` values, each possibly a comma-separated list, in order, without repeats."""
    found: list[str] = []
    for item in given:
        for state in item.split(","):
            name = state.strip()
            if not name:
                raise InvalidSelection(f"--state {item!r}: empty state name")
            if name not in found:
                found.append(name)
    return tuple(found)


def selection(
    workflow_type: str,
    *,
    states: Iterable[str] = (),
    tenant_id: str | None = None,
    since: str | None = None,
    reason: str | None = None,
    limit: int | None = None,
    known_states: Iterable[str] | None = None,
) -> Selection:
    """A checked selection; `known_states` (the type's states over all its versions), when
    given, refuses a state the type never has."""
    chosen = states_of(states)
    if known_states is not None:
        known = set(known_states)
        unknown = [s for s in chosen if s not in known]
        if unknown:
            raise InvalidSelection(f"--state: {workflow_type} has no state {', '.join(unknown)}")
    if limit is not None and not 1 <= limit <= MAX_SELECTED:
        raise InvalidSelection(f"--limit {limit}: between 1 and {MAX_SELECTED}")
    return Selection(
        workflow_type=workflow_type,
        states=chosen,
        tenant_id=tenant_id or None,
        since=parse_duration(since) if since is not None else None,
        reason=reason or None,
        limit=limit or MAX_SELECTED,
    )


def reason_of(data: Mapping[str, Any], execution: Mapping[str, Any]) -> str | None:
    """Why the workflow is where it is: its review reason, else its last failure's class."""
    review = execution.get("review") or {}
    if review.get("reason"):
        return str(review["reason"])
    error = data.get("last_error") or {}
    return (
        str(error["error_class"])
        if isinstance(error, Mapping) and error.get("error_class")
        else None
    )


def matches(chosen: Selection, row: Mapping[str, Any], now: datetime) -> bool:
    """Whether the workflow `row` (workflow_type, tenant_id, state, updated_at, data,
    execution) is in the selection."""
    if row["workflow_type"] != chosen.workflow_type:
        return False
    if chosen.states and row["state"] not in chosen.states:
        return False
    if chosen.tenant_id and row["tenant_id"] != chosen.tenant_id:
        return False
    if chosen.since is not None and row["updated_at"] < now - chosen.since:
        return False
    return (
        not chosen.reason or reason_of(row["data"] or {}, row["execution"] or {}) == chosen.reason
    )
