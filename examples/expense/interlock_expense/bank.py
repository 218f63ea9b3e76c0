"""A simulated bank for the expense workflow: payments and notices over HTTP, at most one per
`Idempotency-Key` (the protocol `interlock.adapters.http.HttpEffects` speaks).

- ``POST /payments`` (``/notices``) with the key in the header: 201 with ``{"id"}``; the same
  key again answers the first receipt (200) and pays nothing more.
- ``GET /payments/{key}``: 200 with the receipt of the key's payment, 404 if none was made.
- ``GET /payments``: every payment made, ``{"payments": [{"id", "idempotency_key", …}]}``.
- ``POST /faults`` ``{"unavailable": N}``: the next N POSTs answer 503 (nothing done).

```sh
python -m interlock_expense.bank --port 8098     # the port's default base URL
```
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

KINDS = ("payments", "notices")


@dataclass
class Bank:
    """The ledgers (in memory, for one run of the simulator) and the faults still to inject."""

    made: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS}
    )
    unavailable: int = 0
    refused_503: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        for kind in KINDS:
            app.router.add_post(f"/{kind}", self._execute(kind))
            app.router.add_get(f"/{kind}/{{key}}", self._lookup(kind))
            app.router.add_get(f"/{kind}", self._list(kind))
        app.router.add_post("/faults", self._faults)
        return app

    def _execute(self, kind: str) -> Any:
        async def execute(request: web.Request) -> web.Response:
            key = request.headers.get("Idempotency-Key", "")
            if not key:
                return web.json_response({"error": "Idempotency-Key is required"}, status=400)
            if self.unavailable > 0:
                self.unavailable -= 1
                self.refused_503 += 1
                return web.json_response({"error": "try again"}, status=503)
            ledger = self.made[kind]
            if key in ledger:
                return web.json_response({"id": ledger[key]["id"]}, status=200)
            body = await request.json()
            ledger[key] = {**body, "id": f"{kind[:3].upper()}-{len(ledger) + 1:06d}"}
            ledger[key]["idempotency_key"] = key
            return web.json_response({"id": ledger[key]["id"]}, status=201)

        return execute

    def _lookup(self, kind: str) -> Any:
        async def lookup(request: web.Request) -> web.Response:
            found = self.made[kind].get(request.match_info["key"])
            if found is None:
                return web.json_response({"error": "not found"}, status=404)
            return web.json_response({"id": found["id"]})

        return lookup

    def _list(self, kind: str) -> Any:
        async def listed(request: web.Request) -> web.Response:
            return web.json_response({kind: list(self.made[kind].values())})

        return listed

    async def _faults(self, request: web.Request) -> web.Response:
        self.unavailable = int((await request.json()).get("unavailable", 0))
        return web.json_response({"unavailable": self.unavailable})


async def serve(bank: Bank, host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, str]:
    """Start `bank` on `host:port` (0: any free port); the runner and the base URL."""
    runner = web.AppRunner(bank.app())
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    return runner, f"http://{host}:{bound}/"


async def _main(host: str, port: int) -> None:
    _runner, url = await serve(Bank(), host, port)
    print(json.dumps({"base_url": url}), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The expense workflow's simulated bank.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8098)
    given = parser.parse_args()
    asyncio.run(_main(given.host, given.port))
