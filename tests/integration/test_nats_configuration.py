"""Running Interlock on a NATS of one's own: `interlock nats-config` prints the server's
configuration, `interlock client-url` a client's URL, both from the secrets of one home; and
Interlock refuses a broker that lets anonymous clients in unless told it is a development
setup."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

from interlock.app.embedded import EmbeddedNats
from interlock.app.embedded._process import free_port, port_accepts, wait_until
from interlock.app.embedded.nats import nats_server_binary
from interlock.config import access
from interlock.config.secrets import Secrets
from interlock.contracts import subjects
from interlock.contracts.urls import nats_inbox
from interlock.messaging.permissions import ADMIN
from interlock.messaging.streams import provision
from tests.support.cli import cli_env, run_cli
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def open_broker(tmp_path: Path) -> Iterator[str]:
    """A nats-server without any authorization: anyone may connect and publish."""
    server = EmbeddedNats(tmp_path / "open")
    yield server.start()
    server.stop()


def test_interlock_refuses_a_broker_that_accepts_anonymous_clients(
    tmp_path: Path, open_broker: str, database_url: str
) -> None:
    env = cli_env(tmp_path, INTERLOCK_NATS_URL=open_broker, INTERLOCK_DATABASE_URL=database_url)

    refused = run_cli(env, "migrate")

    assert refused.returncode == 2, refused.stderr
    assert "anonymous" in refused.stderr
    assert "INTERLOCK_INSECURE_NATS=1" in refused.stderr


def test_an_explicitly_insecure_setup_runs_with_a_warning(
    tmp_path: Path, open_broker: str, database_url: str
) -> None:
    env = cli_env(
        tmp_path,
        INTERLOCK_NATS_URL=open_broker,
        INTERLOCK_DATABASE_URL=database_url,
        INTERLOCK_INSECURE_NATS="1",
    )

    done = run_cli(env, "migrate")

    assert done.returncode == 0, done.stderr
    assert "INSECURE" in done.stderr


@pytest.fixture
def configured_server(tmp_path: Path) -> Iterator[tuple[dict[str, str], Secrets, str]]:
    """A nats-server started from `interlock nats-config` of a home of its own."""
    home, port = tmp_path / "home", free_port()
    env = cli_env(home, INTERLOCK_SECRETS_DIR=str(home / "secrets"))
    store = tmp_path / "jetstream"
    printed = run_cli(
        env, "nats-config", "--host", "127.0.0.1", "--port", str(port), "--store-dir", str(store)
    )
    assert printed.returncode == 0, printed.stderr
    config = tmp_path / "nats.conf"
    config.write_text(printed.stdout)
    server = subprocess.Popen(
        [str(nats_server_binary()), "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: port_accepts("127.0.0.1", port) or None, timeout=20, what="NATS")
        url = f"nats://127.0.0.1:{port}"
        yield {**env, "INTERLOCK_NATS_URL": url}, Secrets(home / "secrets"), printed.stdout
    finally:
        server.terminate()
        server.wait(10)


async def test_a_server_from_nats_config_admits_the_clients_of_the_same_home(
    configured_server: tuple[dict[str, str], Secrets, str],
) -> None:
    env, secrets, config = configured_server
    assert "sync_interval: always" in config
    assert secrets.directory.stat().st_mode & 0o777 == 0o700
    assert (secrets.directory / "nats.json").stat().st_mode & 0o777 == 0o600
    admin = await nats.connect(access.nats_url_as(env["INTERLOCK_NATS_URL"], ADMIN, secrets))
    try:
        await provision(admin.jetstream(), STAGES)
    finally:
        await admin.close()

    url = run_cli(env, "client-url", "upstream").stdout.strip()
    assert url.startswith("nats://upstream:")
    upstream = await nats.connect(url, inbox_prefix=nats_inbox(url))
    try:
        ack = await upstream.jetstream().publish(subjects.request("support", "upstream"), b"{}")
        assert ack.stream == subjects.STREAM_IN
    finally:
        await upstream.close()


def test_client_url_names_the_known_clients_for_an_unknown_one(
    configured_server: tuple[dict[str, str], Secrets, str],
) -> None:
    env, _, _ = configured_server

    unknown = run_cli(env, "client-url", "mallory")

    assert unknown.returncode == 2
    assert "approvals" in unknown.stderr
    assert "operator" in unknown.stderr
    assert unknown.stdout == ""
