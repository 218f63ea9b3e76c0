"""Logging in to the console, served in process without a database (the login page needs
none): an attempt during the delay is answered 429 with `Retry-After` without the password
being checked, the right password after the delay logs in, nobody behind the same address is
slowed, and names too long to be anyone's are refused at once, leaving nothing behind."""

from __future__ import annotations

import logging
import sys
from collections import deque
from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from interlock.config.settings import ConsoleOperator
from interlock.console.limiter import LoginLimiter
from interlock.console.operators import Operator, Operators, hash_password
from tests.support.console import ManualClock, csrf_of, unconnected_client

pytestmark = pytest.mark.unit
PASSWORD = "correct horse battery staple"
ALICE = {"alice": ConsoleOperator(password_hash=SecretStr(hash_password(PASSWORD)))}


class CountingOperators(Operators):
    """Operators that count how often a password was checked."""

    checked = 0

    def authenticate(self, name: str, password: str) -> Operator | None:
        self.checked += 1
        return super().authenticate(name, password)


@pytest.fixture
def operators() -> CountingOperators:
    return CountingOperators(ALICE)


@pytest.fixture
async def client(operators: CountingOperators) -> AsyncIterator[httpx.AsyncClient]:
    async with unconnected_client(operators) as client:
        yield client


async def log_in(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> httpx.Response:
    token = csrf_of((await client.get("/login")).text)
    return await client.post(
        "/login", data={"name": name, "password": password, "csrf_token": token, "next": "/"}
    )


def deep_size(value: object, seen: set[int] | None = None) -> int:
    """The bytes `value` holds, following containers and instance attributes."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, list | tuple | set | frozenset | deque):
        size += sum(deep_size(item, seen) for item in value)
    elif hasattr(value, "__dict__") and not callable(value):
        size += deep_size(vars(value), seen)
    return size


async def test_logins_with_huge_names_are_refused_at_once_and_keep_the_limiter_small(
    client: httpx.AsyncClient, operators: CountingOperators
) -> None:
    huge = "n" * (128 * 1024)  # under the body bound (`bodylimit`): the name bound refuses it
    statuses = {(await log_in(client, f"{i}{huge}", "x")).status_code for i in range(200)}

    assert statuses == {400}
    assert operators.checked == 0
    limiter = client._transport.app.state.console.limiter  # type: ignore[attr-defined]
    assert deep_size(limiter) < 64 * 1024


async def test_another_name_behind_the_same_address_is_not_slowed(
    client: httpx.AsyncClient,
) -> None:
    statuses = [(await log_in(client, "alice", "wrong")).status_code for _ in range(6)]

    assert statuses == [401] * 5 + [429]
    assert (await log_in(client, "bob", "wrong")).status_code == 401


async def test_during_the_delay_nothing_is_checked_and_after_it_the_right_password_logs_in(
    operators: CountingOperators,
) -> None:
    clock = ManualClock()
    limiter = LoginLimiter(free=2, base=4.0, cap=60.0, clock=clock)
    async with unconnected_client(operators, limiter) as client:
        assert [(await log_in(client, "alice", "wrong")).status_code for _ in range(2)] == [401] * 2
        checked = operators.checked

        refused = await log_in(client, "alice")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "4"
        assert operators.checked == checked

        clock.now += 4
        assert (await log_in(client, "alice")).status_code == 303
        assert (await client.get("/login")).status_code == 200


async def test_every_refused_login_is_logged_with_its_reason_and_a_quoted_name(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="interlock.console")
    for _ in range(6):
        await log_in(client, "alice", "wrong")
    await log_in(client, "x\nforged line" + "n" * 300, "x")
    await log_in(client, "alice")  # the right password, but during the delay

    refusals = [r.getMessage() for r in caplog.records if "login refused" in r.getMessage()]
    assert len(refusals) == 8
    assert sum("wrong name or password" in line for line in refusals) == 5
    assert ["too many failed attempts" in line for line in refusals[5:]] == [True, False, True]
    assert "name over 200 characters" in refusals[6]
    assert all("\n" not in line and "'alice'" in line for line in refusals[:6])
