"""Operational gauges sampled from PostgreSQL: outbox lag and stuck workflows.

A gauge callback runs on the metrics exporter's thread, so it must not query the database.
`Gauges.run` samples on the event loop every `interval` seconds and the instruments report
the last sample of every running `Gauges`. A failed sample keeps the previous values and is
logged: the gauges are observability, never a reason for the relay to stop.

A workflow counts as stuck by the rule of `relay.stuck`: no progress where progress was
expected, within its state's bound (`contracts.progress`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

import asyncpg
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg

from interlock.contracts.progress import Overrides, human_states
from interlock.contracts.registry import Registry
from interlock.messaging.waiting import wait_any
from interlock.otel import metrics
from interlock.relay.store import LAG
from interlock.relay.stuck import stuck_condition, workflows

log = logging.getLogger(__name__)

Columns = tuple[list[str], list[str]]


def _columns(pairs: Iterable[tuple[str, str]]) -> Columns:
    ordered = sorted(set(pairs))
    return [t for t, _ in ordered], [s for _, s in ordered]


def terminal_states(registry: Registry) -> Columns:
    """Every (workflow_type, terminal state), as two columns for `unnest`."""
    return _columns((d.workflow_type, s) for d in registry for s in d.terminal_states)


def human_waiting_states(registry: Registry) -> Columns:
    """(workflow_type, state) pairs where waiting on a person is normal (see
    `contracts.progress.human_states`)."""
    return _columns(human_states(registry))


def stuck_query(registry: Registry, overrides: Overrides, default: float, now: datetime) -> str:
    """The stuck workflows per (type, state) at `now`, as SQL with its values inlined (they
    are state names and bounds from the definitions, quoted by SQLAlchemy)."""
    query = (
        select(workflows.c.workflow_type, workflows.c.state, func.count().label("n"))
        .where(stuck_condition(registry, overrides, default, now))
        .group_by(workflows.c.workflow_type, workflows.c.state)
    )
    dialect = PGDialect_asyncpg()  # type: ignore[no-untyped-call]  # SQLAlchemy's own stub
    return str(query.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))


@dataclass(slots=True)
class Sample:
    outbox_rows: int = 0
    outbox_oldest_seconds: float = 0.0
    stuck: dict[tuple[str, str], int] = field(default_factory=dict)


_running: list[Gauges] = []


@cache
def _instruments() -> None:
    metrics.gauge(
        "interlock.outbox.lag",
        "{row}",
        "Committed outbox rows not yet relayed",
        lambda: [(float(g.last.outbox_rows), {"relay": g.relay}) for g in list(_running)],
    )
    metrics.gauge(
        "interlock.outbox.oldest_age",
        "s",
        "Age of the oldest committed outbox row not yet relayed",
        lambda: [(g.last.outbox_oldest_seconds, {"relay": g.relay}) for g in list(_running)],
    )
    metrics.gauge(
        "interlock.workflows.stuck",
        "{workflow}",
        "Workflows that stopped moving outside terminal states",
        lambda: [point for g in list(_running) for point in g.stuck_points()],
    )


class Gauges:
    """Samples relay `relay_name`'s lag and the stuck workflows of one database."""

    def __init__(
        self,
        database_url: str,
        *,
        registry: Registry,
        relay_name: str = "default",
        interval: float = 15.0,
        stuck_after: float = 300.0,
        parameters: Overrides | None = None,
    ) -> None:
        """`stuck_after`: the bound of states no parameter bounds; `parameters`: the
        deployment's overrides of definition parameters, by workflow type."""
        self._url = database_url
        self.relay = relay_name
        self._interval = interval
        self._stuck_after = stuck_after
        self._registry = registry
        self._parameters: Overrides = dict(parameters or {})
        self._reported: set[tuple[str, str]] = set()
        self.last = Sample()

    def stuck_points(self) -> Iterable[tuple[float, dict[str, str]]]:
        # Report 0 for a (type, state) once seen, so a cleared alert drops to zero.
        self._reported |= set(self.last.stuck)
        return [
            (float(self.last.stuck.get(key, 0)), {"workflow_type": key[0], "state": key[1]})
            for key in sorted(self._reported)
        ]

    async def sample(self) -> Sample:
        """Query the database once and keep the result as `last`."""
        connection = await asyncpg.connect(self._url, timeout=10)
        try:
            lag = await connection.fetchrow(LAG, self.relay)
            now = await connection.fetchval("SELECT now()")
            stuck = await connection.fetch(
                stuck_query(self._registry, self._parameters, self._stuck_after, now)
            )
        finally:
            await connection.close()
        self.last = Sample(
            int(lag["rows"]),
            float(lag["oldest_seconds"]),
            {(r["workflow_type"], r["state"]): int(r["n"]) for r in stuck},
        )
        return self.last

    async def run(self, stop: asyncio.Event) -> None:
        """Sample every `interval` seconds until `stop` is set; the instruments report this
        instance's values while it runs."""
        _instruments()
        _running.append(self)
        try:
            while not stop.is_set():
                try:
                    await self.sample()
                except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                    log.warning("gauge sample failed: %s: %s", type(exc).__name__, exc)
                await wait_any([stop], self._interval)
        finally:
            _running.remove(self)
