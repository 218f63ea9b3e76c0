"""The relay's watch over waits on a person: it sends the due reminders (`relay.reminders`)
and samples, per declared (type, state), how many workflows wait, the oldest wait and how many
are past their deadline, for the gauges `interlock.human_waits.count`, `.oldest_age` and
`.overdue`. As with the other gauges, a failed pass keeps the previous sample and is logged:
reminders are due again on the next pass, nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import cache

import asyncpg

from interlock.contracts.progress import Overrides, wait_rules
from interlock.contracts.registry import Registry
from interlock.messaging.waiting import wait_any
from interlock.otel import metrics
from interlock.relay.reminders import WAITS, remind_due, rule_columns
from interlock.relay.store import UNAVAILABLE, close_quietly

log = logging.getLogger("interlock.reminders")

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Waiting:
    """One declared (type, state): workflows waiting, the oldest wait (s), how many overdue."""

    count: int = 0
    oldest_s: float = 0.0
    overdue: int = 0


_running: list[HumanWaits] = []


def _points(value: str) -> list[tuple[float, dict[str, str]]]:
    return [
        (float(getattr(w, value)), {"workflow_type": t, "state": s})
        for g in list(_running)
        for (t, s), w in sorted(g.last.items())
    ]


@cache
def _instruments() -> None:
    metrics.gauge(
        "interlock.human_waits.count",
        "{workflow}",
        "Workflows waiting on a person, per declared wait",
        lambda: _points("count"),
    )
    metrics.gauge(
        "interlock.human_waits.oldest_age",
        "s",
        "How long the oldest workflow of a declared wait has waited since its last move",
        lambda: _points("oldest_s"),
    )
    metrics.gauge(
        "interlock.human_waits.overdue",
        "{workflow}",
        "Workflows waiting on a person past the wait's deadline",
        lambda: _points("overdue"),
    )


class HumanWaits:
    """Every `interval` seconds: send the due reminders (at most `batch` a pass) and sample
    the waits of every declared (type, state) of `registry`."""

    def __init__(
        self,
        database_url: str,
        *,
        registry: Registry,
        parameters: Overrides | None = None,
        interval: float = 15.0,
        batch: int = 100,
    ) -> None:
        self._url = database_url
        self._rules = wait_rules(registry, parameters or {})
        self._interval = interval
        self._batch = batch
        self.last: dict[Pair, Waiting] = {}
        """The latest sample; a declared wait with nobody waiting reports zeros."""

    async def pass_once(self) -> list[Pair]:
        """Send the due reminders and sample the waits; returns the (type, state) of each
        reminder sent. Raises the driver's error when the database is unavailable."""
        if not self._rules:
            return []
        connection = await asyncpg.connect(self._url, timeout=10)
        try:
            sent = await remind_due(connection, self._rules, self._batch)
            rows = await connection.fetch(WAITS, *rule_columns(self._rules))
        finally:
            await close_quietly(connection)
        found = {
            (r["workflow_type"], r["state"]): Waiting(
                int(r["n"]), float(r["oldest"]), int(r["overdue"])
            )
            for r in rows
        }
        self.last = {(r.workflow_type, r.state): Waiting() for r in self._rules} | found
        return sent

    async def run(self, stop: asyncio.Event) -> None:
        """Pass every `interval` seconds until `stop` is set."""
        _instruments()
        _running.append(self)
        try:
            while not stop.is_set():
                try:
                    if sent := await self.pass_once():
                        log.info("reminded %d overdue wait(s) on a person", len(sent))
                except (*UNAVAILABLE, asyncpg.PostgresError) as exc:
                    log.warning("human waits pass failed: %s; again later", type(exc).__name__)
                await wait_any([stop], self._interval)
        finally:
            _running.remove(self)
