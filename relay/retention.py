"""Retention, run periodically in the relay's process: finished workflows move to the archive
(`interlock show` still finds them there), and processed events, refusals and spent timers
past the retention are forgotten, so the hot tables hold what is still moving. The histories
of workflows that have not moved for the history retention are forgotten whole.

Pruning goes through `interlock_prune` (migration 0006) and `interlock_prune_history`
(migration 0008) in batches; a failed pass is logged and tried again at the next interval.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import asyncpg

from interlock.contracts.envelope import utcnow
from interlock.contracts.registry import Registry
from interlock.messaging.waiting import wait_any
from interlock.relay.gauges import terminal_states

log = logging.getLogger("interlock.retention")
PRUNE = "SELECT * FROM interlock_prune($1::text[], $2::text[], $3, $4, $5)"
PRUNE_HISTORY = "SELECT interlock_prune_history($1, $2)"


@dataclass(frozen=True)
class Pruned:
    archived: int = 0
    """Finished workflows moved to the archive."""
    events: int = 0
    """Processed and refused events forgotten."""
    timers: int = 0
    """Fired or cancelled timers forgotten."""
    histories: int = 0
    """Histories of long-idle workflows forgotten."""


class Retention:
    def __init__(
        self,
        database_url: str,
        *,
        registry: Registry,
        archive_after: float,
        forget_after: float,
        history_after: float = 30 * 24 * 3600.0,
        interval: float = 3600.0,
        batch: int = 1000,
    ) -> None:
        """`archive_after`: seconds a workflow stays terminal before it is archived;
        `forget_after`: seconds processed events, refusals and spent timers are kept;
        `history_after`: seconds a workflow's history is kept after its last decided event."""
        self._url = database_url
        self._archive_after = timedelta(seconds=archive_after)
        self._forget_after = timedelta(seconds=forget_after)
        self._history_after = timedelta(seconds=history_after)
        self._interval = interval
        self._batch = batch
        self._terminal = terminal_states(registry)

    async def prune(self, now: datetime | None = None) -> Pruned:
        """Prune until a batch comes back short; what was pruned, in total."""
        now = now or utcnow()
        total = Pruned()
        connection = await asyncpg.connect(self._url, timeout=10)
        try:
            while True:
                row = await connection.fetchrow(
                    PRUNE,
                    *self._terminal,
                    now - self._archive_after,
                    now - self._forget_after,
                    self._batch,
                )
                assert row is not None
                total = Pruned(
                    total.archived + row["archived"],
                    total.events + row["events"],
                    total.timers + row["timers"],
                )
                if max(row["archived"], row["events"], row["timers"]) < self._batch:
                    break
            while True:
                forgotten = await connection.fetchval(
                    PRUNE_HISTORY, now - self._history_after, self._batch
                )
                total = replace(total, histories=total.histories + forgotten)
                if forgotten < self._batch:
                    return total
        finally:
            await connection.close()

    async def run(self, stop: asyncio.Event) -> None:
        """Prune every `interval` seconds until `stop` is set."""
        while not stop.is_set():
            try:
                pruned = await self.prune()
                if pruned != Pruned():
                    log.info("retention: %s", pruned)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("retention pass failed: %s", type(exc).__name__)
            await wait_any([stop], self._interval)
