"""The simulator process: serves the simulated systems over core NATS request/reply.

Every subscription joins the queue group `sim`, so each request reaches exactly one of the
running instances; they share one set of ledgers, so a retry landing on another instance
still finds the first one's effect.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import Error as NatsError

from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.services.adapters.sim import (
    ACCOUNT_INSPECT,
    ACTION_EXECUTE,
    ACTION_LOOKUP,
    ACTION_REVERSE,
    EFFECT_EXECUTE,
    EFFECT_LOOKUP,
    EFFECT_REVERSE,
    ERROR_REJECTED,
    NOTIFY_SEND,
    POLICY_CURRENT,
    POLICY_VERSION,
    QUEUE_GROUP,
)
from interlock.simulators import effect_ledger, effects, ledger, reads
from interlock.simulators.db import Connection, create_pool
from interlock.simulators.outcomes import BAD_REQUEST, BadRequest, Outcome, error_reply
from interlock.simulators.schema import ensure_schema

log = logging.getLogger("interlock.sim")

Handler = Callable[[Connection, dict[str, Any]], Awaitable[Outcome]]
ROUTES: dict[str, Handler] = {
    ACCOUNT_INSPECT: reads.inspect,
    POLICY_CURRENT: reads.policy_current,
    POLICY_VERSION: reads.policy_version,
    ACTION_LOOKUP: reads.lookup,
    ACTION_EXECUTE: effects.execute,
    ACTION_REVERSE: effects.reverse,
    NOTIFY_SEND: effects.notify,
    EFFECT_EXECUTE: effect_ledger.execute,
    EFFECT_LOOKUP: effect_ledger.lookup,
    EFFECT_REVERSE: effect_ledger.reverse,
}
DRAIN_TIMEOUT = 10.0
"""Seconds a stopping simulator waits for calls in flight (latency steps) to finish."""


async def run_simulator(
    database_url: str,
    nats_url: str,
    stop: asyncio.Event,
    *,
    latency_ms: float = 0.0,
    ready: asyncio.Event | None = None,
    pool_size: int = 8,
    connection: Mapping[str, Any] | None = None,
    on_connect: Callable[[Client], None] = lambda _nc: None,
) -> None:
    """Serve until `stop` is set, then drain: stop taking requests, finish those in flight
    (up to `DRAIN_TIMEOUT`), close. `latency_ms` delays every call; `ready` is set once
    every subscription is registered with the server. Raises if PostgreSQL or NATS
    cannot be reached at start. `connection`: options for `nats.connect` (reconnecting,
    callbacks); `on_connect` is given the connection once it is up."""
    await ensure_schema(database_url)
    pool = await create_pool(database_url, pool_size)
    try:
        nc = await nats.connect(
            nats_servers(nats_url),
            **{"name": "interlock-sim", "inbox_prefix": nats_inbox(nats_url), **(connection or {})},
        )
        on_connect(nc)
        try:
            await _serve(nc, _Dispatcher(pool, latency_ms), stop, ready)
        finally:
            await nc.close()
    finally:
        await pool.close()


async def _serve(
    nc: Client, dispatcher: _Dispatcher, stop: asyncio.Event, ready: asyncio.Event | None
) -> None:
    subscriptions = [
        await nc.subscribe(subject, queue=QUEUE_GROUP, cb=dispatcher.route(handler))
        for subject, handler in ROUTES.items()
    ]
    await nc.flush()  # the server has processed every SUB once its PONG is back
    log.info("simulator serving %d subjects", len(subscriptions))
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
        for subscription in subscriptions:
            # Drain, not unsubscribe: requests already delivered to us are still answered.
            await subscription.drain()  # type: ignore[no-untyped-call]  # untyped in nats-py
        await dispatcher.idle()
    finally:
        await dispatcher.cancel()  # only what outlived the drain, or all if we were cancelled
    log.info("simulator stopped")


class _Dispatcher:
    """Runs each request as its own task, so slow calls (latency steps, row locks) do not
    hold up the others on the same subject."""

    def __init__(self, pool: Any, latency_ms: float) -> None:
        self._pool = pool
        self._latency = max(latency_ms, 0.0) / 1000
        self._tasks: set[asyncio.Task[None]] = set()

    def route(self, handler: Handler) -> Callable[[Msg], Awaitable[None]]:
        async def on_message(msg: Msg) -> None:
            task = asyncio.create_task(self._answer(handler, msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        return on_message

    async def idle(self) -> None:
        """Wait up to `DRAIN_TIMEOUT` for the calls in flight."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=DRAIN_TIMEOUT)

    async def cancel(self) -> None:
        """Cancel the calls still in flight (rolling their transactions back) and wait."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _answer(self, handler: Handler, msg: Msg) -> None:
        reply = await self._handle(handler, msg)
        if reply is None or not msg.reply:
            return
        try:
            await msg.respond(json.dumps(reply).encode())
        except NatsError:
            # Indistinguishable, for the caller, from a lost response: it reconciles.
            log.warning("could not answer on %s", msg.subject)

    async def _handle(self, handler: Handler, msg: Msg) -> dict[str, Any] | None:
        """The reply to send, or None for silence. An unexpected failure is answered with
        silence too: the transaction may or may not have committed, and only a timeout
        tells the caller to reconcile instead of trusting that nothing happened."""
        try:
            if self._latency:
                await asyncio.sleep(self._latency)
            async with self._pool.acquire() as conn, conn.transaction():
                outcome = await handler(conn, _body(msg.data))
                await ledger.record_call(conn, outcome)
        except BadRequest as exc:
            log.warning("bad request on %s: %s", msg.subject, exc)
            return error_reply(ERROR_REJECTED, BAD_REQUEST, str(exc))
        except Exception:
            log.exception("simulator failed on %s; not answering", msg.subject)
            return None
        call = outcome.call
        log.debug(
            "%s customer=%s key=%s -> %s",
            call.operation,
            call.customer_id,
            call.key,
            outcome.outcome,
        )
        return outcome.reply


def _body(data: bytes) -> dict[str, Any]:
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise BadRequest("the request is not JSON") from exc
    if not isinstance(body, dict):
        raise BadRequest("the request must be a JSON object")
    return body
