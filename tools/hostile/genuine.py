"""The genuine client of a hostile round, in a process of its own.

A genuine client does not share an event loop with the attacker: if it did, every burst the
attacker sends would delay the client's requests and approvals in the client itself, and that
delay would be counted against the stack. So the good traffic (`good.Good`) runs in a child
process, quiet round and attacked round alike, and the round asks it, over a pipe, to start
a workflow (it answers with the workflow's id and customer once the workflow exists) and,
at the end, for when each request was published.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.demo.runner import ApprovalDesk
from interlock.tools.hostile import timing
from interlock.tools.hostile.good import TERMINAL, Good, Stack

ANSWER_WITHIN_S = 90.0
"""The longest the child may take to answer one request (a start waits for its workflow)."""


class Genuine:
    """The parent's handle on the genuine client's process."""

    def __init__(self, stack: Stack, name: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(
            target=_child, args=(stack, name, child), name=f"interlock-{name}", daemon=True
        )
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> Genuine:
        self._process.start()
        await self._ask("ready")
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self._process.is_alive():
                await self._ask("stop")
        finally:
            await asyncio.to_thread(self._process.join, 10.0)
            if self._process.is_alive():
                self._process.kill()
            self._pipe.close()

    async def start(self) -> tuple[str, str]:
        """Start one good workflow: its id and its customer's."""
        workflow_id, customer_id = await self._ask("start")
        return str(workflow_id), str(customer_id)

    async def published(self) -> dict[str, datetime]:
        """When each workflow's request was published, by workflow id, in start order."""
        return dict(await self._ask("published"))

    async def _ask(self, request: str) -> Any:
        async with self._lock:
            self._pipe.send(request)
            if not await asyncio.to_thread(self._pipe.poll, ANSWER_WITHIN_S):
                raise TimeoutError(f"the genuine client did not answer {request!r}")
            ok, answer = self._pipe.recv()
        if not ok:
            raise RuntimeError(f"the genuine client failed on {request!r}: {answer}")
        return answer


def _child(stack: Stack, name: str, pipe: Connection) -> None:
    asyncio.run(_serve(stack, name, pipe))


async def _serve(stack: Stack, name: str, pipe: Connection) -> None:
    bus = await Clients.connect(stack.settings, stack.server, name)
    engine = queries.open_reader(stack.database_url, pool_size=2)
    good = Good(stack, bus, engine, ApprovalDesk(bus.approvals))
    await good.desk.start()
    try:
        while True:
            request = await asyncio.to_thread(pipe.recv)
            try:
                answer = await _answer(good, request)
            except Exception as exc:  # the parent reports it and ends the round
                pipe.send((False, f"{type(exc).__name__}: {exc}"))
                continue
            pipe.send((True, answer))
            if request == "stop":
                return
    finally:
        await good.stop()
        await engine.dispose()
        await bus.close()


async def _answer(good: Good, request: str) -> Any:
    if request == "start":
        run = await good.start()
        return run.workflow_id, run.customer_id
    if request == "published":
        return list(good.published.items())
    if request in ("ready", "stop"):
        return None
    raise ValueError(f"unknown request {request!r}")


async def quiet_round(
    stack: Stack, count: int, within: float = 120.0
) -> tuple[list[float], list[timing.Split]]:
    """Seconds each of `count` good workflows takes, one at a time on the quiet stack, and
    where they went; the genuine client runs in its own process, as in the round."""
    engine = queries.open_reader(stack.database_url, pool_size=2)
    try:
        async with Genuine(stack, "hostile-quiet") as genuine:
            for _ in range(count):
                workflow_id, _customer = await genuine.start()
                await _terminal(engine, workflow_id, within)
            return await timing.durations(engine, await genuine.published())
    finally:
        await engine.dispose()


async def _terminal(engine: AsyncEngine, workflow_id: str, within: float) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        view = await queries.workflow_view(engine, workflow_id)
        if view is not None and view["state"] in TERMINAL:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{workflow_id} did not finish within {within:.0f} s")
