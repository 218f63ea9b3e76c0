"""The broker and the database `interlock chaos` may stop and start: the embedded ones it
starts itself, under its own directory, on ports that stay the same across restarts so every
client reconnects to the same address.

A broker that fsyncs before acknowledging (`sync_always`) is killed with SIGKILL, the way a
machine loses power; one that does not is stopped gracefully (it flushes what it
acknowledged), since killing it would lose acknowledged messages by design, not by defect.
The database is stopped with an immediate shutdown (no checkpoint; crash recovery on start).
"""

from __future__ import annotations

import asyncio
import os
import signal
from contextlib import suppress
from urllib.parse import urlsplit

from interlock.app.embedded import broker_sync, embedded_servers
from interlock.config.settings import Settings


class Servers:
    def __init__(self, settings: Settings) -> None:
        """The servers of the embedded stack under `settings.home`, secured as `up`'s are."""
        self._home = settings.home
        self.nats, self.postgres = embedded_servers(settings)
        # Restarts reuse the first port: leave 4222 to a user's `interlock up`, which could
        # take it while the broker is down.
        self.nats.preferred_port = None
        self.nats_url = ""
        self.database_url = ""

    async def start(self) -> None:
        self.nats_url = await asyncio.to_thread(self.nats.start)
        self.database_url = await asyncio.to_thread(self.postgres.start)
        self.nats.port = urlsplit(self.nats_url).port
        self.nats.monitor_port = urlsplit(self.nats.monitor_url).port
        self.postgres.port = urlsplit(self.database_url).port

    def sync(self) -> str:
        """The broker's JetStream sync setting: `always` (fsync before every ack), or the
        interval at which it flushes (`120s` is nats-server's default), or `unknown`."""
        return broker_sync(self.nats_url, self._home) if self.nats_url else "unknown"

    async def stop_nats(self) -> None:
        if self.sync() == "always":
            with suppress(ProcessLookupError, RuntimeError):
                signal_process(self.nats.pid, signal.SIGKILL)
        await asyncio.to_thread(self.nats.stop)

    async def start_nats(self) -> None:
        await asyncio.to_thread(self.nats.start)

    async def stop_postgres(self) -> None:
        with suppress(ProcessLookupError, RuntimeError):
            signal_process(self.postgres.pid, signal.SIGQUIT)
        await asyncio.to_thread(self.postgres.stop)

    async def start_postgres(self) -> None:
        await asyncio.to_thread(self.postgres.start)

    async def close(self) -> None:
        await asyncio.to_thread(self.nats.stop)
        await asyncio.to_thread(self.postgres.stop)


def signal_process(pid: int, sig: signal.Signals) -> None:
    os.kill(pid, sig)
