"""The chaos tier's stacks: every component of every installed type as a supervised child
process, with a short sweeper bound, wide windows around lost answers, the shipped request
cases' classifier and crash points armed from a directory (`tests.support.chaos_stack`).

A stack takes 30-50 s to start on two cores, and no test here needs one nobody used before
(each starts workflows of its own, for fresh customers): one stack of a kind serves the
consecutive modules that ask for it (tests/conftest.py runs them one after the other), and
is stopped once the next module asks for another kind or none, so at most one runs at a
time and none outlives its modules. A module in which a test failed hands on no stack: the
next module starts a fresh one, as if each had its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager

import pytest

from interlock.config.secrets import Secrets
from tests.conftest import clean_broker, demo_timings, fresh_database, installation
from tests.support.chaos_stack import SHARED_STACKS, Stack, running_stack

Start = Callable[[str], AbstractAsyncContextManager[Stack]]


class SharedStacks:
    """The one chaos stack running, if any, and the fixture name it was started for."""

    def __init__(self, start: Start) -> None:
        self._start = start
        self._name: str | None = None
        self._running: Stack | None = None
        self._exits = AsyncExitStack()

    async def get(self, name: str) -> Stack:
        """The running stack if it is of this kind, else a fresh one (the other stopped)."""
        if self._name != name or self._running is None:
            await self.close()
            exits = AsyncExitStack()
            self._running = await exits.enter_async_context(self._start(name))
            self._name, self._exits = name, exits
        return self._running

    async def close(self) -> None:
        exits, self._exits = self._exits, AsyncExitStack()
        self._name, self._running = None, None
        await exits.aclose()


@pytest.fixture(scope="session")
async def shared_stacks(
    stack_urls: tuple[str, str],
    template_database: str,
    session_secrets: Secrets,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[SharedStacks]:
    @asynccontextmanager
    async def start(name: str) -> AsyncIterator[Stack]:
        """A fresh database and a broker without streams, the demo's short timings
        inherited by the components, and a home of its own."""
        nats_url, server_url = stack_urls
        async with fresh_database(server_url, template_database) as database_url:
            await clean_broker(nats_url)
            with demo_timings():
                settings = installation(tmp_path_factory, session_secrets)
                async with running_stack(
                    settings, nats_url, database_url, tmp_path_factory, **SHARED_STACKS[name]
                ) as running:
                    yield running

    stacks = SharedStacks(start)
    try:
        yield stacks
    finally:
        await stacks.close()


@asynccontextmanager
async def _lease(request: pytest.FixtureRequest, stacks: SharedStacks) -> AsyncIterator[Stack]:
    """The shared stack of the requesting fixture's kind for this module; stopped after it
    unless the next module asks for the same kind and every test here passed."""
    name = request.fixturename
    assert name is not None
    failed_before = request.session.testsfailed
    running = await stacks.get(name)
    try:
        yield running
    finally:
        if request.session.testsfailed != failed_before or not _next_module_asks(request, name):
            await stacks.close()


def _next_module_asks(request: pytest.FixtureRequest, name: str) -> bool:
    """Whether the first test after this module's last asks for the fixture `name`."""
    items = request.session.items
    mine = [i for i, item in enumerate(items) if item.getparent(pytest.Module) is request.node]
    after = mine[-1] + 1 if mine else len(items)
    return after < len(items) and name in getattr(items[after], "fixturenames", ())


@pytest.fixture(scope="module")
async def stack(
    request: pytest.FixtureRequest, shared_stacks: SharedStacks
) -> AsyncIterator[Stack]:
    """Every stage service in its own process."""
    async with _lease(request, shared_stacks) as running:
        yield running


@pytest.fixture(scope="module")
async def hosted_stack(
    request: pytest.FixtureRequest, shared_stacks: SharedStacks
) -> AsyncIterator[Stack]:
    """Every stage service in the one process of the stage host."""
    async with _lease(request, shared_stacks) as running:
        yield running


@pytest.fixture(scope="module")
async def quiet_sweeper_stack(
    request: pytest.FixtureRequest, shared_stacks: SharedStacks
) -> AsyncIterator[Stack]:
    """Every stage service in its own process, the open-job sweeper's bound longer than a
    test: a job's deliveries are the stage's own (a re-dispatched job would restart their
    count, and a stage that keeps failing would never give up)."""
    async with _lease(request, shared_stacks) as running:
        yield running


@pytest.fixture(scope="module")
async def quiet_hosted_stack(
    request: pytest.FixtureRequest, shared_stacks: SharedStacks
) -> AsyncIterator[Stack]:
    """As `quiet_sweeper_stack`, every stage service in the one process of the stage host
    (a lighter stack, for a test whose point is not a stage's own process)."""
    async with _lease(request, shared_stacks) as running:
        yield running
