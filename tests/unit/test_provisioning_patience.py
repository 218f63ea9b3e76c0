"""Provisioning waits out a JetStream that is briefly unavailable (a cluster electing a
leader answers 503 or nothing), and gives up on anything else at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import nats.errors
import pytest
from nats.js.errors import BadRequestError, ServiceUnavailableError

from interlock.messaging import streams


def _step(failures: list[Exception]) -> tuple[list[int], Callable[[], Awaitable[None]]]:
    calls: list[int] = []

    async def step() -> None:
        calls.append(1)
        if failures:
            raise failures.pop(0)

    return calls, step


async def test_an_unavailable_jetstream_is_asked_again_until_it_answers() -> None:
    unavailable = ServiceUnavailableError(code=503, err_code=10008, description="temporarily")
    calls, step = _step([unavailable, nats.errors.TimeoutError()])

    await streams._patiently(step, asyncio.get_running_loop().time() + 30)

    assert len(calls) == 3


async def test_other_refusals_and_a_lasting_outage_are_raised() -> None:
    calls, step = _step([BadRequestError(code=400, description="bad")])
    with pytest.raises(BadRequestError):
        await streams._patiently(step, asyncio.get_running_loop().time() + 30)
    assert len(calls) == 1

    _, step = _step([nats.errors.TimeoutError()])
    with pytest.raises(nats.errors.TimeoutError):
        await streams._patiently(step, asyncio.get_running_loop().time())


async def test_a_cluster_with_a_peer_not_yet_online_is_asked_again() -> None:
    """A cluster just started (or with a node restarting) refuses a replicated stream's
    placement for a moment: 400 'no suitable peers for placement, peer offline'. That waits,
    like an election; a cluster with too few nodes at all (`INSUFFICIENT_RESOURCES`) does not."""
    offline = BadRequestError(
        code=400,
        err_code=streams.NO_SUITABLE_PEERS,
        description="no suitable peers for placement, peer offline",
    )
    calls, step = _step([offline, offline])

    await streams._patiently(step, asyncio.get_running_loop().time() + 30)

    assert len(calls) == 3
    _, step = _step([offline])
    with pytest.raises(BadRequestError):
        await streams._patiently(step, asyncio.get_running_loop().time())
