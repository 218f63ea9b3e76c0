"""Checking a console password (argon2id: ~90 ms of CPU and 64 MiB here) happens off the
console's event loop, a bounded number at a time, and never twice at once for one name from
one client: a stream of logins under fresh names neither stops the console answering
everyone else nor runs an unbounded number of checks, and concurrent guesses of one name
cannot slip past its progressive delay together."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from interlock.console.operators import Operator, Operators
from tests.support.console import csrf_of, unconnected_client
from tests.unit.test_console_login import ALICE, PASSWORD

pytestmark = pytest.mark.unit
HELD_AT_MOST_S = 5.0
"""How long a held check waits to be released before it gives up (only reached when the
check holds the event loop, so that nothing can release it)."""


class HeldOperators(Operators):
    """Operators whose password checks wait until the test releases them."""

    def __init__(self) -> None:
        super().__init__(ALICE)
        self.release = threading.Event()
        self.entered = 0
        self.gave_up = False
        self._lock = threading.Lock()

    def authenticate(self, name: str, password: str) -> Operator | None:
        with self._lock:
            self.entered += 1
        if not self.release.wait(HELD_AT_MOST_S):
            self.gave_up = True
        return super().authenticate(name, password)


@pytest.fixture
def operators() -> HeldOperators:
    return HeldOperators()


@pytest.fixture
async def client(operators: HeldOperators) -> AsyncIterator[httpx.AsyncClient]:
    async with unconnected_client(operators) as client:
        yield client


async def _form(client: httpx.AsyncClient, name: str, password: str) -> dict[str, str]:
    token = csrf_of((await client.get("/login")).text)
    return {"name": name, "password": password, "csrf_token": token, "next": "/"}


async def _checking(operators: HeldOperators, count: int) -> None:
    """Wait until `count` checks are under way (polled, with a deadline)."""
    deadline = time.monotonic() + HELD_AT_MOST_S * 2
    while operators.entered < count:
        assert time.monotonic() < deadline, f"{operators.entered} of {count} checks started"
        await asyncio.sleep(0.01)


async def test_a_password_being_checked_does_not_hold_up_the_console(
    client: httpx.AsyncClient, operators: HeldOperators
) -> None:
    form = await _form(client, "alice", PASSWORD)
    login = asyncio.create_task(client.post("/login", data=form))
    await _checking(operators, 1)

    answered = await client.get("/healthz")
    held = not operators.gave_up
    operators.release.set()

    assert answered.status_code == 200
    assert held, "the check held the event loop: nothing else was answered meanwhile"
    assert (await login).status_code == 303


async def test_one_name_from_one_client_is_never_checked_twice_at_once(
    client: httpx.AsyncClient, operators: HeldOperators
) -> None:
    first = asyncio.create_task(client.post("/login", data=await _form(client, "alice", "x")))
    await _checking(operators, 1)

    second = await client.post("/login", data=await _form(client, "alice", PASSWORD))
    operators.release.set()

    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert (await first).status_code == 401
    assert operators.entered == 1


async def test_checks_beyond_the_bound_are_refused_at_once_and_others_go_on(
    client: httpx.AsyncClient, operators: HeldOperators
) -> None:
    held = [
        asyncio.create_task(client.post("/login", data=await _form(client, name, "x")))
        for name in ("alice", "bob")
    ]
    await _checking(operators, 2)

    beyond = await client.post("/login", data=await _form(client, "carol", "x"))
    operators.release.set()

    assert beyond.status_code == 429
    assert "busy" in beyond.text
    assert [(await task).status_code for task in held] == [401, 401]
    assert operators.entered == 2
    after = await client.post("/login", data=await _form(client, "alice", PASSWORD))
    assert after.status_code == 303
