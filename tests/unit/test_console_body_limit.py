"""The console reads at most `MAX_BODY` bytes of any request: a larger body — declared by its
`Content-Length` or streamed without one — is answered 413 before it is read (or as soon as it
is over the bound), so no one, logged in or not, makes the console hold an unbounded body."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from interlock.config.settings import ConsoleOperator
from interlock.console.bodylimit import MAX_BODY
from interlock.console.operators import Operators, hash_password
from tests.support.console import csrf_of, unconnected_client

pytestmark = pytest.mark.unit
PASSWORD = "correct horse battery staple"
CHUNK = b"n" * 65536


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    operators = Operators(
        {"alice": ConsoleOperator(password_hash=SecretStr(hash_password(PASSWORD)))}
    )
    async with unconnected_client(operators) as client:
        yield client


async def test_a_declared_body_over_the_bound_is_refused_413_unread(
    client: httpx.AsyncClient,
) -> None:
    token = csrf_of((await client.get("/login")).text)
    name = "n" * (MAX_BODY + 1)

    refused = await client.post("/login", data={"name": name, "password": "x", "csrf_token": token})
    ordinary = await client.post(
        "/login", data={"name": "alice", "password": "x", "csrf_token": token}
    )

    assert refused.status_code == 413
    assert ordinary.status_code == 401


async def test_a_streamed_body_is_read_only_up_to_the_bound(client: httpx.AsyncClient) -> None:
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b"name="
        while sent < 1024 * 1024 * 1024:
            sent += len(CHUNK)
            yield CHUNK

    response = await client.post(
        "/login",
        content=endless(),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )

    assert response.status_code == 413
    assert sent <= MAX_BODY + 2 * len(CHUNK)
