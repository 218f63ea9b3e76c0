"""The embedded servers keep what they held across a stop, a restart and a killed owner: a
table in PostgreSQL (also over the pid file of a killed postmaster, whose pid may name
another process by then) and a stream in NATS."""

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import PIPE, Popen

import asyncpg
import nats
import pytest

from interlock.app.embedded import EmbeddedNats, EmbeddedPostgres

pytestmark = pytest.mark.timeout(60)
PASSWORD = "superuser-password"


async def test_restarted_postgres_keeps_its_data(tmp_path: Path) -> None:
    await _create_table(EmbeddedPostgres(tmp_path, password=PASSWORD), crash=False)

    await _assert_table_survived(EmbeddedPostgres(tmp_path, password=PASSWORD))


async def test_restarted_nats_keeps_its_streams(tmp_path: Path) -> None:
    for run in (1, 2):
        server = EmbeddedNats(tmp_path)
        client = await nats.connect(server.start())
        try:
            js = client.jetstream()
            if run == 1:
                await js.add_stream(name="KEPT", subjects=["kept.>"])
                await js.publish("kept.one", b"durable")
            else:
                assert (await js.get_msg("KEPT", 1)).data == b"durable"
        finally:
            await client.close()
            server.stop()


async def test_postgres_restarts_over_the_pid_file_of_a_killed_postmaster(tmp_path: Path) -> None:
    await _create_table(EmbeddedPostgres(tmp_path, password=PASSWORD), crash=True)
    assert (tmp_path / "data" / "postmaster.pid").exists()

    await _assert_table_survived(EmbeddedPostgres(tmp_path, password=PASSWORD))


async def test_postgres_restarts_when_its_stale_pid_now_names_another_process(
    tmp_path: Path,
) -> None:
    await _create_table(EmbeddedPostgres(tmp_path, password=PASSWORD), crash=True)
    pid_file = tmp_path / "data" / "postmaster.pid"
    # A live process of the server's own user, as when a reboot hands the pid out again.
    with _process_of(pid_file.stat().st_uid) as squatter:
        _, rest = pid_file.read_text().split("\n", 1)
        pid_file.write_text(f"{squatter}\n{rest}")

        await _assert_table_survived(EmbeddedPostgres(tmp_path, password=PASSWORD))


@contextmanager
def _process_of(uid: int) -> Iterator[int]:
    """The pid of a live process owned by ``uid``, for as long as the block lasts."""
    process = Popen(["cat"], stdin=PIPE, user=uid if uid != os.getuid() else None)
    try:
        yield process.pid
    finally:
        process.communicate(b"")


async def _create_table(server: EmbeddedPostgres, *, crash: bool) -> None:
    """Create and fill a table, then stop the server, or SIGKILL it to simulate a crash."""
    connection = await asyncpg.connect(server.start(), password=PASSWORD)
    try:
        await connection.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
    finally:
        await connection.close()
    if crash:
        os.kill(server.pid, signal.SIGKILL)
    server.stop()


async def _assert_table_survived(server: EmbeddedPostgres) -> None:
    connection = await asyncpg.connect(server.start(), password=PASSWORD)
    try:
        assert await connection.fetchval("SELECT n FROM kept") == 42
    finally:
        await connection.close()
        server.stop()
