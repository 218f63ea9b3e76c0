"""Connections shared by the integration tier (real NATS and PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import nats
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext
from typer.testing import CliRunner

from interlock.messaging.streams import provision
from interlock.projector.store.postgres import PostgresWorkflowStore, open_store
from tests.support.harness import Harness, projector_running
from tests.support.workflows import STAGES


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    """A NATS connection to the test's clean server."""
    client = await nats.connect(nats_url)
    yield client
    await client.close()


@pytest.fixture
async def js(nc: Client) -> JetStreamContext:
    """JetStream with Interlock's streams and consumers provisioned."""
    context = nc.jetstream()
    await provision(context, STAGES)
    return context


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection to the test's fresh database."""
    connection = await asyncpg.connect(database_url)
    yield connection
    await connection.close()


@pytest.fixture
async def h(nats_url: str, database_url: str) -> AsyncIterator[Harness]:
    """An in-process projector on the test's NATS and database (see `projector_running`)."""
    async with projector_running(nats_url, database_url) as harness:
        yield harness


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PostgresWorkflowStore]:
    """A PostgreSQL store (two connections) on the test's fresh database."""
    opened = await open_store(database_url, size=2)
    yield opened
    await opened.close()


@pytest.fixture
def cli(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The CLI in process, on the test's database and a home of its own, with no model chosen
    by the environment the tests run in."""
    monkeypatch.setenv("INTERLOCK_DATABASE_URL", database_url)
    monkeypatch.setenv("INTERLOCK_HOME", str(tmp_path))
    monkeypatch.delenv("INTERLOCK_MODEL", raising=False)
    return CliRunner()
