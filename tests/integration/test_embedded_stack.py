"""The embedded servers, the stack that shares them between processes, and the fixtures."""

import json
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE, Popen
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import nats
import psutil
import pytest
from nats.aio.client import Client

from interlock.app.embedded import EmbeddedNats, EmbeddedPostgres, EmbeddedStack
from interlock.app.embedded._process import port_accepts
from tests.support.cli import free_port

pytestmark = pytest.mark.timeout(60)
PASSWORD = "superuser-password"

# Holds a stack open until its stdin closes, after printing what it got. Starts it on a
# worker thread when asked, where no parent-death signal can be armed.
_HOLD_STACK = """
import json, sys, threading
from pathlib import Path
from interlock.app.embedded import EmbeddedStack
stack = EmbeddedStack(Path(sys.argv[1]))
starter = threading.Thread(target=stack.start)
if sys.argv[2] == "worker thread":
    starter.start()
    starter.join()
with stack:
    print(json.dumps({"owner": stack.owner, **stack.record.model_dump()}), flush=True)
    sys.stdin.read()
"""


def _accepts(url: str) -> bool:
    address = urlsplit(url)
    return port_accepts(address.hostname or "", address.port or 0)


def _processes_mentioning(path: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(path) in cmdline and process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def _exited(pid: int, name: str) -> bool:
    """Whether ``pid`` is gone (or a zombie: gone, but not reaped by its adopter)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            process = psutil.Process(pid)
            if process.name() != name or process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


def _hold_stack(home: Path, started_in: str = "main thread") -> tuple[Popen[str], dict[str, Any]]:
    """A process holding the stack open until its stdin closes, and what it reported."""
    holder = Popen(
        [sys.executable, "-c", _HOLD_STACK, str(home), started_in],
        stdin=PIPE,
        stdout=PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert holder.stdout is not None
    return holder, json.loads(holder.stdout.readline())


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[EmbeddedStack]:
    with EmbeddedStack(tmp_path / "home") as started:
        yield started


async def test_embedded_nats_round_trips_a_jetstream_message(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path)
    client = await nats.connect(server.start())
    try:
        js = client.jetstream()
        await js.add_stream(name="PROBE", subjects=["probe.>"])
        ack = await js.publish("probe.one", b"hello")
        assert (await js.get_msg("PROBE", ack.seq)).data == b"hello"
    finally:
        await client.close()
        server.stop()


async def test_embedded_postgres_commits_and_rolls_back(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path, password=PASSWORD)
    connection = await asyncpg.connect(server.start(), password=PASSWORD)
    try:
        assert await connection.fetchval("SELECT current_database()") == "interlock"
        await connection.execute("CREATE TABLE t (n int)")
        async with connection.transaction():
            await connection.execute("INSERT INTO t VALUES (1)")

        async def insert_then_fail() -> None:
            async with connection.transaction():
                await connection.execute("INSERT INTO t VALUES (2)")
                await connection.execute("SELECT 1 / 0")

        with pytest.raises(asyncpg.DivisionByZeroError):
            await insert_then_fail()
        assert await connection.fetch("SELECT n FROM t") == [(1,)]
    finally:
        await connection.close()
        server.stop()


def test_another_process_attaches_to_the_running_stack(stack: EmbeddedStack) -> None:
    attacher, report = _hold_stack(stack.home)
    attacher.communicate("")

    assert report == {"owner": False, **stack.record.model_dump()}
    assert attacher.returncode == 0
    assert _accepts(stack.nats_url)
    assert _accepts(stack.database_url)


def test_stopping_an_attached_stack_leaves_the_servers_running(stack: EmbeddedStack) -> None:
    with EmbeddedStack(stack.home) as attached:
        assert not attached.owner
        assert (attached.nats_url, attached.database_url) == (stack.nats_url, stack.database_url)

    assert psutil.pid_exists(stack.record.nats_pid)
    assert psutil.pid_exists(stack.record.postgres_pid)
    assert _accepts(stack.nats_url)
    assert _accepts(stack.database_url)
    assert (stack.home / "stack.json").exists()


def test_concurrent_starts_share_one_stack(tmp_path: Path) -> None:
    (first, first_report), (second, second_report) = _hold_stack(tmp_path), _hold_stack(tmp_path)
    first.communicate("")
    second.communicate("")

    assert {first_report.pop("owner"), second_report.pop("owner")} == {False, True}
    assert first_report == second_report
    assert _processes_mentioning(tmp_path) == []


def test_servers_stop_when_their_owner_is_killed(tmp_path: Path) -> None:
    holder, killed = _hold_stack(tmp_path)
    holder.kill()
    holder.wait()

    assert _exited(killed["nats_pid"], "nats-server")
    assert _exited(killed["postgres_pid"], "postgres")
    with EmbeddedStack(tmp_path) as stack:
        assert stack.owner
        assert _accepts(stack.database_url)


def test_a_new_stack_replaces_servers_orphaned_by_a_killed_owner(tmp_path: Path) -> None:
    holder, killed = _hold_stack(tmp_path, started_in="worker thread")
    holder.kill()
    holder.wait()
    assert psutil.pid_exists(killed["postgres_pid"])

    with EmbeddedStack(tmp_path) as stack:
        assert stack.owner
        assert _exited(killed["nats_pid"], "nats-server")
        assert _exited(killed["postgres_pid"], "postgres")
        assert _accepts(stack.nats_url)
        assert _accepts(stack.database_url)
    assert _processes_mentioning(tmp_path) == []


def test_stop_closes_the_ports_and_leaves_no_server_process(tmp_path: Path) -> None:
    stack = EmbeddedStack(tmp_path).start()
    record = stack.record
    stack.stop()

    assert not _accepts(record.nats_url)
    assert not _accepts(record.database_url)
    assert not psutil.pid_exists(record.nats_pid)
    assert not psutil.pid_exists(record.postgres_pid)
    assert _processes_mentioning(tmp_path) == []
    assert not (tmp_path / "stack.json").exists()


async def test_embedded_postgres_asks_every_connection_for_the_password(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path, password=PASSWORD)
    url = server.start()
    try:
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(url, password="guessed")
        connection = await asyncpg.connect(url, password=PASSWORD)
        await connection.close()
    finally:
        server.stop()


async def test_a_cluster_that_trusted_local_connections_is_given_a_password(
    tmp_path: Path,
) -> None:
    made_before = EmbeddedPostgres(tmp_path, password=PASSWORD)
    made_before.start()
    made_before.stop()
    hba = tmp_path / "data" / "pg_hba.conf"
    hba.write_text("host all all 127.0.0.1/32 trust\n")  # as clusters were made before

    server = EmbeddedPostgres(tmp_path, password="the-new-one")
    url = server.start()
    try:
        connection = await asyncpg.connect(url, password="the-new-one")
        await connection.close()
        assert "trust" not in hba.read_text()
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(url, password=PASSWORD)
    finally:
        server.stop()


@pytest.mark.parametrize("run", [1, 2])
async def test_database_fixture_gives_each_test_a_fresh_migrated_database(
    db: asyncpg.Connection, run: int
) -> None:
    assert await db.fetchval("SELECT count(*) FROM alembic_version") == 1
    # Fails on the second run if the first run's database were handed out again.
    await db.execute("CREATE TABLE leftover (run int)")


@pytest.mark.parametrize("run", [1, 2])
async def test_nats_fixture_gives_each_test_a_server_without_streams(nc: Client, run: int) -> None:
    js = nc.jetstream()
    assert await nc.jsm().streams_info() == []
    await js.add_stream(name="LEFTOVER", subjects=["leftover.>"])
    await js.create_key_value(bucket="leftover")


def test_the_broker_takes_its_preferred_port_when_free_and_another_when_not(
    tmp_path: Path,
) -> None:
    wanted = free_port()
    server = EmbeddedNats(tmp_path / "free", preferred_port=wanted)
    try:
        assert urlsplit(server.start()).port == wanted
    finally:
        server.stop()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", wanted))
        taken.listen()
        server = EmbeddedNats(tmp_path / "taken", preferred_port=wanted)
        try:
            assert urlsplit(server.start()).port not in (wanted, None)
        finally:
            server.stop()
