"""The event loop a component runs on (`INTERLOCK_EVENT_LOOP`).

uvloop's loop runs the same asyncio programs with its scheduling and socket I/O in C. What it
saves is per wake-up of the loop, so it matters most where each wake-up carries little work:
a projector partition holding a few workflows wakes once or twice per decision for its
database, broker and answers, where one projector deciding everything serves many at once.
`auto` takes uvloop where it is installed (it is a dependency everywhere but Windows) and the
standard loop otherwise; `asyncio` always takes the standard loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from interlock.contracts.errors import ConfigurationError

T = TypeVar("T")
EventLoop = Literal["auto", "uvloop", "asyncio"]
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(choice: EventLoop) -> LoopFactory | None:
    """What makes `choice`'s loop; None: the standard one. ConfigurationError (one line)
    when `choice` is uvloop and it is not installed."""
    if choice == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        if choice == "uvloop":
            raise ConfigurationError(
                "INTERLOCK_EVENT_LOOP=uvloop, but uvloop is not installed",
                hint="pip install uvloop, or INTERLOCK_EVENT_LOOP=auto",
            ) from None
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def run(work: Coroutine[Any, Any, T], choice: EventLoop) -> T:
    """Run `work` to completion on a new loop of `choice`, as `asyncio.run` would."""
    try:
        factory = loop_factory(choice)
    except ConfigurationError:
        work.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(work)
