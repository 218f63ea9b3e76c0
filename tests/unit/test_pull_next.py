"""The continuous pull consumer hands on a message already queued at once: a burst costs no
timer and no task per message (`asyncio.wait_for` made both for every message)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from interlock.messaging.pull import _next


async def test_a_queued_message_is_handed_on_without_waiting() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    for n in range(3):
        queue.put_nowait(cast(Any, n))
    # No time at all to wait: only a message already queued can be handed on.
    handed: list[Any] = [await _next(queue, 0.0) for _ in range(3)]
    assert handed == [0, 1, 2]


async def test_an_empty_queue_is_waited_on_until_the_timeout() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    with pytest.raises(TimeoutError):
        await _next(queue, 0.01)


async def test_a_message_arriving_while_waiting_is_handed_on() -> None:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    asyncio.get_running_loop().call_soon(queue.put_nowait, "late")
    handed: Any = await _next(queue, 5.0)
    assert handed == "late"
