"""The stuck rule as one SQL condition over `workflows`, for the relay's gauge and the
console's stuck filter alike (see `contracts.progress` for the bounds).

A workflow outside its terminal states, in a state with bound B, is stuck when
- it has an armed timer overdue by more than B (the timer service is not firing), or
- it expects progress (not a wait on a person), has not moved for B seconds and has no armed
  timer due within B from now. A timer counts as progress on its way only when it fires that
  soon: support's 7-day deadline, armed at START, must not hide a stage that never answers.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, DateTime, and_, column, exists, false, or_, table, true
from sqlalchemy import tuple_ as row
from sqlalchemy.sql.expression import TableClause

from interlock.contracts.progress import Overrides, Pair, human_states, progress_bounds
from interlock.contracts.registry import Registry

workflows = table(
    "workflows",
    column("tenant_id"),
    column("id"),
    column("workflow_type"),
    column("state"),
    column("updated_at", DateTime(timezone=True)),
)
timers = table(
    "timers",
    column("tenant_id"),
    column("workflow_id"),
    column("status"),
    column("fire_at", DateTime(timezone=True)),
)


def _in_pairs(wf: TableClause, found: list[Pair]) -> ColumnElement[bool]:
    if not found:
        return false()
    return row(wf.c.workflow_type, wf.c.state).in_(sorted(found))


def _armed(wf: TableClause, *when: ColumnElement[bool]) -> ColumnElement[bool]:
    return exists().where(
        timers.c.tenant_id == wf.c.tenant_id,
        timers.c.workflow_id == wf.c.id,
        timers.c.status == "armed",
        *when,
    )


def _stuck_within(
    wf: TableClause, bound: float, expects_progress: ColumnElement[bool], now: datetime
) -> ColumnElement[bool]:
    span = timedelta(seconds=bound)
    return or_(
        _armed(wf, timers.c.fire_at < now - span),
        and_(
            expects_progress,
            wf.c.updated_at < now - span,
            ~_armed(wf, timers.c.fire_at <= now + span),
        ),
    )


def stuck_condition(
    registry: Registry,
    overrides: Overrides,
    default: float,
    now: datetime,
    wf: TableClause = workflows,
) -> ColumnElement[bool]:
    """True for a stuck workflow at `now`; `default` is the bound where no parameter sets one;
    `wf` is the `workflows` table of the caller's query."""
    bounds = progress_bounds(registry, overrides, default)
    human = human_states(registry)
    by_bound: dict[float, list[Pair]] = defaultdict(list)
    for pair, bound in bounds.items():
        by_bound[bound].append(pair)
    known = {(d.workflow_type, s) for d in registry for s in d.states}
    return or_(
        *(
            and_(_in_pairs(wf, pairs), _stuck_within(wf, bound, ~_in_pairs(wf, list(human)), now))
            for bound, pairs in sorted(by_bound.items())
        ),
        # A state no installed definition knows (a removed type or version) expects progress.
        and_(~_in_pairs(wf, list(known)), _stuck_within(wf, default, true(), now)),
    )
