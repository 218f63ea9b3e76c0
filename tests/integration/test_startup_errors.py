"""Start-up says what is wrong: a database never migrated, a port in use, a bad adapter
configuration each is one line naming the setting or resource, exit 2, within seconds; `up`
stops on Ctrl-C whatever its children do."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.cli import cli_env

pytestmark = pytest.mark.timeout(180)


def _interlock(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlock", *args],
        env=cli_env(home, **env),
        text=True,
        capture_output=True,
        timeout=90,
        check=False,
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr
    return lines[0]


@pytest.fixture
async def unmigrated_database(stack_urls: tuple[str, str]) -> AsyncIterator[str]:
    """A database that exists but was never migrated: no Interlock table in it."""
    server_url = stack_urls[1]
    name = f"t_empty_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        base, _, _ = server_url.rpartition("/")
        yield f"{base}/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.mark.parametrize("args", [("list",), ("show", "wf-1"), ("list", "--json")])
def test_a_database_without_the_schema_is_one_line_naming_migrate(
    tmp_path: Path, nats_url: str, unmigrated_database: str, args: tuple[str, ...]
) -> None:
    done = _interlock(
        tmp_path / "home",
        *args,
        INTERLOCK_NATS_URL=nats_url,
        INTERLOCK_DATABASE_URL=unmigrated_database,
    )

    line = _one_line(done)
    assert "no Interlock schema" in line
    assert "interlock migrate" in line
