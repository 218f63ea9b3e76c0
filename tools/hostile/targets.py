"""What the forgeries of a hostile round aim at: each good workflow as it stands.

An attacker learns a workflow's id, request, open jobs, timers and state version from what it
is shown (its tenant's announcements), as they change. The round reads them from the database
instead, but only as an attacker could follow them: each request once (it never changes), and
the rest from the workflows' rows alone, all in one query, at most every `REFRESH_S`. Reading
each good workflow's whole view (its audit trail included, which the attack itself grows) for
every chunk of messages cost the round's own process 11 of its 18 s of CPU over 40 s of attack,
and the stack's database two queries per workflow every tenth of a second: load the stack
never saw from the attacker, counted against the genuine workflows' timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts.envelope import Actor, Envelope
from interlock.ops import queries
from interlock.tools.demo.runner import Run
from interlock.tools.hostile.good import TENANT
from interlock.tools.hostile.messages import Target

REFRESH_S = 0.5
"""How stale a target may be: the round reads the workflows' rows at most this often."""


@dataclass
class Targets:
    """The good workflows' targets, read as they change (`REFRESH_S`)."""

    engine: AsyncEngine
    refresh_s: float = REFRESH_S
    clock: Callable[[], float] = time.monotonic
    _known: dict[str, Target] = field(default_factory=dict)
    _read_at: float = float("-inf")

    async def of(self, runs: list[Run]) -> list[Target]:
        """Each run's target, read again when the last reading is older than `refresh_s` or
        a run is new."""
        ids = [run.workflow_id for run in runs]
        new = [w for w in ids if w not in self._known]
        if new:
            for workflow_id, start in (await queries.requests_of(self.engine, TENANT, new)).items():
                self._known[workflow_id] = _first(workflow_id, start)
        if new or self.clock() - self._read_at >= self.refresh_s:
            rows = await queries.executions_of(self.engine, TENANT, ids)
            for workflow_id, (execution, version) in rows.items():
                self._known[workflow_id] = _updated(self._known[workflow_id], execution, version)
            self._read_at = self.clock()
        return [self._known[w] for w in ids]


def _first(workflow_id: str, start: dict[str, Any]) -> Target:
    """The request as published (its payload is the workflow's recorded request)."""
    request = Envelope(
        event_id=start["event_id"],
        type="START",
        workflow_type="support",
        tenant_id=TENANT,
        actor=Actor(id=start["actor_id"], role=start["actor_role"]),
        occurred_at=start["occurred_at"],
        payload=start["request"],
    )
    return Target(TENANT, workflow_id, request.to_bytes(), start["event_id"])


def _updated(target: Target, execution: dict[str, Any], version: int) -> Target:
    return replace(
        target,
        open_jobs={j: o["stage"] for j, o in (execution.get("open_jobs") or {}).items()},
        timers={t["id"]: t["event"] for t in (execution.get("timers") or {}).values()},
        version=version,
    )
