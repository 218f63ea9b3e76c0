"""The hostile-input suite in CI: against the real stack (the support workflow's components
and the gateway, each in its own process), Hypothesis chooses rounds of hostile messages of
every kind, interleaved with good refund requests. Every round: no component crashes, every
hostile message is refused, dead-lettered or dropped with a reason (none accepted, none
unaccounted for), and every good workflow completes exactly as it would without the noise.
The full run (>= 10,000 messages) is `interlock hostile --messages 10000`."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interlock.settings import Settings
from interlock.supervisor import Supervisor
from interlock.tools.hostile import hostile_stack
from interlock.tools.hostile.account import ACCEPTED, UNACCOUNTED
from interlock.tools.hostile.round import Stack, play

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
async def stack(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> AsyncIterator[tuple[Stack, Supervisor]]:
    async with hostile_stack(e2e_settings, module_nats, module_database) as running:
        yield running


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rng=st.randoms(use_true_random=False), messages=st.integers(min_value=40, max_value=150))
async def test_hostile_messages_change_nothing_and_every_one_is_accounted_for(
    stack: tuple[Stack, Supervisor], rng: random.Random, messages: int
) -> None:
    running, supervisor = stack

    report = await play(running, rng, messages, good=2)

    assert report.fates.get(ACCEPTED, 0) == 0, report.as_json()
    assert report.fates.get(UNACCOUNTED, 0) == 0, report.as_json()
    assert report.good_as_without_noise == report.good == 2, report.as_json()
    assert sum(report.fates.values()) == messages
    assert {n: c.restarts for n, c in supervisor.children.items() if c.restarts} == {}
