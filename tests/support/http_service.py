"""A real HTTP service on 127.0.0.1 for the HTTP adapters' tests (aiohttp, in-process).

It behaves as a well-kept provider does: ``POST /v1/operations`` performs an action at most
once per `Idempotency-Key` header and answers its receipt, ``GET /v1/operations/{key}``
answers the receipt of a key (404 if none), and ``GET /v1/accounts/{customer_id}`` is a read.
The service keeps its own ledger of effects by key, and the order in which calls arrived.

A test scripts faults on the next request of a method (`inject`): act or not, then answer a
status, a garbled body, nothing at all (the connection dropped) or late (held until the
service stops).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web

from interlock.workflows.support.systems import AccountSnapshot


@dataclass(frozen=True)
class Fault:
    """What the next request of a method suffers."""

    perform: bool = True
    """Act before answering (a POST only): False answers without having done anything."""
    status: int | None = None
    """Answer this status instead of the usual one."""
    body: bytes | None = None
    """Answer these bytes instead of the usual JSON."""
    headers: Mapping[str, str] = field(default_factory=dict)
    drop: bool = False
    """Close the connection instead of answering."""
    stall: bool = False
    """Hold the answer until the service stops (the client gives up first)."""


CLEAN = Fault()


@dataclass
class Call:
    method: str
    path: str
    key: str | None
    headers: dict[str, str]
    query: dict[str, str]


class LedgerService:
    """Use as an async context manager; `base_url` ends in ``/v1/``."""

    def __init__(self) -> None:
        self.ledger: dict[str, dict[str, Any]] = {}
        """Receipts of the effects performed, by idempotency key: one entry per effect."""
        self.replays: list[str] = []
        """Keys POSTed again after their effect was performed (answered from the ledger)."""
        self.calls: list[Call] = []
        self._faults: dict[str, deque[Fault]] = {"GET": deque(), "POST": deque()}
        self._released = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/"

    def inject(self, *faults: Fault, method: str = "POST") -> None:
        self._faults[method].extend(faults)

    def trail(self) -> list[tuple[str, str | None]]:
        """``(method, key)`` of every effect call (POST or lookup), in arrival order."""
        return [(c.method, c.key) for c in self.calls if "/operations" in c.path]

    async def __aenter__(self) -> LedgerService:
        app = web.Application()
        app.router.add_post("/v1/operations", self._execute)
        app.router.add_get("/v1/operations/{key}", self._lookup)
        app.router.add_get("/v1/accounts/{customer_id}", self._account)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self._released.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _execute(self, request: web.Request) -> web.StreamResponse:
        key = request.headers.get("Idempotency-Key")
        body = await request.json()
        self._note(request, key)
        fault = self._next("POST")
        if key is None or body.get("idempotency_key") != key:
            return web.json_response({"error": "idempotency key missing or mismatched"}, status=400)
        receipt = self.ledger.get(key)
        if receipt is not None:
            self.replays.append(key)
        elif fault.perform:
            receipt = self.ledger[key] = {
                "idempotency_key": key,
                "operation_id": f"op-{len(self.ledger) + 1}",
                "status": "succeeded",
                "amount": body["amount"],
                "currency": body["currency"],
            }
        return await self._answer(request, fault, 201, receipt)

    async def _lookup(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        self._note(request, key)
        receipt = self.ledger.get(key)
        return await self._answer(request, self._next("GET"), 200 if receipt else 404, receipt)

    async def _account(self, request: web.Request) -> web.StreamResponse:
        self._note(request, None)
        customer_id = request.match_info["customer_id"]
        account = AccountSnapshot(
            account_ref=f"acct-{customer_id}",
            customer_id=customer_id,
            status="active",
            currency=request.query.get("currency", "EUR"),
        )
        return await self._answer(request, self._next("GET"), 200, account.model_dump(mode="json"))

    def _note(self, request: web.Request, key: str | None) -> None:
        self.calls.append(
            Call(request.method, request.path, key, dict(request.headers), dict(request.query))
        )

    def _next(self, method: str) -> Fault:
        faults = self._faults[method]
        return faults.popleft() if faults else CLEAN

    async def _answer(
        self, request: web.Request, fault: Fault, status: int, content: dict[str, Any] | None
    ) -> web.StreamResponse:
        if fault.stall:
            await self._released.wait()
        if fault.drop:
            assert request.transport is not None
            request.transport.close()  # the answer below is never written
        body = fault.body if fault.body is not None else json.dumps(content).encode()
        return web.Response(
            status=fault.status or status,
            body=body,
            headers={"Content-Type": "application/json", **fault.headers},
        )
