"""A live table of scenario progress (a terminal nicety; `--json` turns it off)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Protocol

from rich.live import Live
from rich.table import Table

from interlock.app.terminal import console


class Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def expected(self) -> str: ...


class Run(Protocol):
    name: str
    state: str
    workflow_id: str


class Progress:
    def __init__(self, scenarios: Sequence[Named], *, enabled: bool) -> None:
        self._expected = {s.name: s.expected for s in scenarios}
        self._runs: dict[str, Run] = {}
        self._done: dict[str, bool] = {}
        self._enabled = enabled

    def track(self, run: Run) -> None:
        self._runs[run.name] = run

    def finish(self, run: Run, ok: bool) -> None:
        self._done[run.name] = ok

    def table(self) -> Table:
        table = Table("scenario", "expected", "now", "result", "workflow", box=None)
        table.columns[0].no_wrap = True
        table.columns[4].no_wrap = True
        for name, expected in self._expected.items():
            run = self._runs.get(name)
            done = self._done.get(name)
            result = "" if done is None else "[green]ok[/]" if done else "[red]MISMATCH[/]"
            table.add_row(
                name, expected, run.state if run else "-", result, run.workflow_id if run else ""
            )
        return table

    @asynccontextmanager
    async def live(self) -> AsyncIterator[None]:
        if not self._enabled:
            yield
            return
        with Live(self.table(), console=console, refresh_per_second=8) as live:
            refresher = asyncio.create_task(self._refresh(live))
            try:
                yield
            finally:
                refresher.cancel()
                with suppress(asyncio.CancelledError):
                    await refresher
                live.update(self.table())

    async def _refresh(self, live: Live) -> None:
        while True:
            live.update(self.table())
            await asyncio.sleep(0.125)
