"""Start-up says what is wrong: a database never migrated, a port in use, a bad adapter
configuration each is one line naming the setting or resource, exit 2, within seconds; `up`
stops on Ctrl-C or SIGTERM whatever its children do (hanging, or crash-looping as when a
folder shadows the package)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.support.cli import cli_env, one_line_refusal, run_cli

pytestmark = pytest.mark.timeout(180)
HELLO = Path(__file__).parents[1] / "fixtures" / "plugins" / "hello"


def _interlock(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cli_env(home, **env), *args, timeout=90)


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

    line = one_line_refusal(done)
    assert "no Interlock schema" in line
    assert "interlock migrate" in line


def _stack(nats_url: str, database_url: str, **env: str) -> dict[str, str]:
    return {"INTERLOCK_NATS_URL": nats_url, "INTERLOCK_DATABASE_URL": database_url, **env}


def test_a_console_port_in_use_is_one_line_and_no_foreign_url(
    tmp_path: Path, nats_url: str, database_url: str
) -> None:
    with socket.socket() as other_stack:
        other_stack.bind(("127.0.0.1", 0))
        other_stack.listen()
        port = str(other_stack.getsockname()[1])
        began = time.monotonic()
        done = _interlock(
            tmp_path / "home",
            "up",
            "--only",
            "console",
            **_stack(nats_url, database_url, INTERLOCK_CONSOLE_PORT=port),
        )

    line = one_line_refusal(done)
    assert time.monotonic() - began < 30
    assert "INTERLOCK_CONSOLE_PORT" in line
    assert port in line
    assert f"http://127.0.0.1:{port}" not in done.stdout


def test_a_missing_database_is_one_line_naming_it(
    tmp_path: Path, nats_url: str, stack_urls: tuple[str, str]
) -> None:
    base, _, _ = stack_urls[1].rpartition("/")
    began = time.monotonic()

    done = _interlock(tmp_path / "home", "list", **_stack(nats_url, f"{base}/t_nowhere"))

    line = one_line_refusal(done)
    assert time.monotonic() - began < 8  # at once: waiting will not create it
    assert "t_nowhere" in line
    assert "does not exist" in line


HANGING = """\
import signal
import sys
import time

if "service" in sys.argv:  # the component's process: deaf to SIGTERM, never ready
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("hanging", flush=True)
    time.sleep(3600)
from hello_workflow import PLUGIN
"""
CRASHING = """\
import os
import sys

if "service" in sys.argv:  # the component's process: dies at once, every time
    print("crashing", flush=True)
    os._exit(1)
from hello_workflow import PLUGIN
"""
MISBEHAVING = {
    # A stage process that hangs at start-up (before it is ever ready): seen once.
    "hanging": (HANGING, 1),
    # One that dies as it starts (exit 1: restarted, again and again): seen three times.
    "crashing": (CRASHING, 3),
}


def _misbehaving_site(root: Path, word: str) -> Path:
    """A plugin distribution whose stage process behaves as `MISBEHAVING[word]` says."""
    module = f"{word}_hello"
    site = root / "site"
    info = site / f"{module}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {word}-hello\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[interlock.workflows]\nhello = {module}:PLUGIN\n")
    (site / f"{module}.py").write_text(MISBEHAVING[word][0])
    return site


def _logged(log: Path, word: str, times: int, within: float = 60.0) -> None:
    """Return once the component wrote `word` `times` times (deaf, or restarted, by then)."""
    deadline = time.monotonic() + within
    while not (log.exists() and log.read_text().count(word) >= times):
        assert time.monotonic() < deadline, f"{log} shows no {times} x {word!r} after {within}s"
        time.sleep(0.1)


@pytest.mark.parametrize("word", list(MISBEHAVING))
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_up_while_a_component_hangs_or_crash_loops(
    tmp_path: Path, nats_url: str, database_url: str, stop_signal: signal.Signals, word: str
) -> None:
    home, site = tmp_path / "home", _misbehaving_site(tmp_path, word)
    env = _stack(
        nats_url,
        database_url,
        PYTHONPATH=f"{site}:{HELLO}",
        INTERLOCK_SHUTDOWN_GRACE="3",
        INTERLOCK_STAGE_HOST="off",
    )
    up = subprocess.Popen(
        [sys.executable, "-m", "interlock", "up", "--only", "projector", "--only", "hello.greet"],
        env=cli_env(home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _logged(home / "logs" / "hello.greet.log", word, MISBEHAVING[word][1])
        up.send_signal(stop_signal)
        signalled = time.monotonic()
        out, _ = up.communicate(timeout=30)
        stopped_after = time.monotonic() - signalled
    finally:
        up.kill()
        up.wait()

    assert stopped_after < 3 + 4, out  # the shutdown grace, whatever the children do
    assert "Traceback" not in out, out
    assert up.returncode in (0, 1, 130), out


def test_a_component_refusing_to_start_stops_up_with_its_line(
    tmp_path: Path, nats_url: str, database_url: str
) -> None:
    began = time.monotonic()

    done = _interlock(
        tmp_path / "home",
        "up",
        "--only",
        "projector",
        "--only",
        "hello.greet",  # not installed here: `service hello.greet` exits 2 at once
        **_stack(nats_url, database_url),
    )

    line = one_line_refusal(done)
    assert time.monotonic() - began < 60
    assert "hello.greet" in line


def test_a_folder_named_interlock_where_up_starts_is_named_and_shadows_nothing(
    tmp_path: Path, nats_url: str, database_url: str
) -> None:
    shadow = tmp_path / "work" / "interlock"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("a project folder, not Interlock")\n')
    script = Path(sys.executable).parent / "interlock"  # the installed command, as a user runs it
    up = subprocess.Popen(
        [str(script), "up", "--only", "projector", "--only", "relay"],
        cwd=shadow.parent,
        env=cli_env(tmp_path / "home", **_stack(nats_url, database_url)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert up.stdout is not None
        for line in up.stdout:  # up to the line printed once every component is ready
            seen.append(line)
            if "Ctrl-C stops everything" in line:
                break
        up.send_signal(signal.SIGINT)
        rest, _ = up.communicate(timeout=25)
    finally:
        up.kill()
        up.wait()

    printed = "".join(seen)
    assert "Ctrl-C stops everything" in printed, printed + rest
    assert [line for line in seen if "shadows" in line and str(shadow) in line], printed
    assert "Traceback" not in printed + rest


def test_an_adapter_configuration_its_stage_refuses_is_one_line_naming_it(
    tmp_path: Path, nats_url: str, database_url: str
) -> None:
    """Up's own check passes (the credential is read only when the adapter is built, in the
    stage's process): the stage's refusal, not a broker's closed connection, is reported."""
    adapters = (
        '{"request": {"effects": {"adapter": "http", "base_url": "http://127.0.0.1:9/", '
        '"headers": {"Authorization": {"env": "NOPE_EFFECTS_TOKEN"}}}}}'
    )
    began = time.monotonic()

    done = _interlock(
        tmp_path / "home",
        "up",
        "--only",
        "projector",
        "--only",
        "request.execute_effect",
        **_stack(nats_url, database_url, INTERLOCK_ADAPTERS=adapters, INTERLOCK_STAGE_HOST="off"),
    )

    line = one_line_refusal(done)
    assert time.monotonic() - began < 60
    assert "request.execute_effect cannot start" in line
    assert "NOPE_EFFECTS_TOKEN" in line
    assert "closed for good" not in line
