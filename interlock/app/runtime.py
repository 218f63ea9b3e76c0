"""What a running component is given (`Runtime`), what it is (`Component`), and how it waits
between retries. Light on purpose: every component process imports it, and none of them
needs what brings a stack up (migrations, provisioning, the supervisor)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass

from interlock.config.settings import Settings
from interlock.contracts.urls import nats_inbox


@dataclass(frozen=True)
class Runtime:
    """What every component needs: settings and its own URLs (credentials included)."""

    settings: Settings
    nats_url: str
    database_url_or_none: str | None = None
    """None for a component without database access (the stages, the gateway)."""

    @property
    def database_url(self) -> str:
        if self.database_url_or_none is None:
            raise RuntimeError("this component has no database access")
        return self.database_url_or_none

    @property
    def inbox_prefix(self) -> str:
        """The only inbox this component's NATS user may subscribe to."""
        return nats_inbox(self.nats_url)


Component = Callable[[Runtime, asyncio.Event], Awaitable[None]]
"""A runnable part of the stack: it runs until its stop event is set."""


async def wait_at_most(awaitable: Awaitable[object], seconds: float) -> None:
    """Wait for `awaitable`, `seconds` at most (a stop event between retries)."""
    with suppress(TimeoutError):
        await asyncio.wait_for(awaitable, seconds)
