"""A NATS cluster of one's own: `interlock nats-config --cluster-node` renders each node from
the secrets of one home; the three nodes form a cluster, `interlock client-url` prints the
seeds with the client's credentials on each, and a client publishes onto streams at R3."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import nats
import pytest

from interlock.app.embedded._process import free_port, wait_until
from interlock.app.embedded.nats import nats_server_binary
from interlock.config import access
from interlock.config.secrets import Secrets
from interlock.contracts import subjects
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.messaging.permissions import ADMIN
from interlock.messaging.streams import provision
from tests.support.cli import cli_env, run_cli
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(90)
NODES = ("n1", "n2", "n3")


def _meta_leader(monitor_port: int) -> str | None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{monitor_port}/jsz", timeout=1) as response:
            meta = json.loads(response.read()).get("meta_cluster") or {}
    except (OSError, ValueError):
        return None
    return str(meta["leader"]) if meta.get("leader") and meta.get("cluster_size") == 3 else None


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[dict[str, str], Secrets]]:
    home = tmp_path / "home"
    env = cli_env(home, INTERLOCK_SECRETS_DIR=str(home / "secrets"))
    ports, routes, monitors = ([free_port() for _ in NODES] for _ in range(3))
    route_list = ",".join(f"127.0.0.1:{p}" for p in routes)
    servers = []
    try:
        for node, port, route, monitor in zip(NODES, ports, routes, monitors, strict=True):
            printed = run_cli(
                env,
                *("nats-config", "--host", "127.0.0.1", "--port", str(port)),
                *("--store-dir", str(tmp_path / node), "--cluster-node", node),
                *("--cluster-routes", route_list, "--cluster-port", str(route)),
            )
            assert printed.returncode == 0, printed.stderr
            config = tmp_path / f"{node}.conf"
            config.write_text(printed.stdout)
            servers.append(
                subprocess.Popen(
                    [str(nats_server_binary()), "-c", str(config), "-m", str(monitor)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for monitor in monitors:
            wait_until(partial(_meta_leader, monitor), timeout=30, what="a meta leader")
        seeds = ",".join(f"nats://127.0.0.1:{p}" for p in ports)
        yield {**env, "INTERLOCK_NATS_URL": seeds}, Secrets(home / "secrets")
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(10)


async def test_three_nodes_from_nats_config_serve_a_client_at_three_replicas(
    cluster: tuple[dict[str, str], Secrets],
) -> None:
    env, secrets = cluster
    seeds = env["INTERLOCK_NATS_URL"]
    admin = await nats.connect(nats_servers(access.nats_url_as(seeds, ADMIN, secrets)))
    try:
        await provision(admin.jetstream(), STAGES, replicas=3)
    finally:
        await admin.close()

    url = run_cli(env, "client-url", "upstream").stdout.strip()
    assert [s.split("@")[0].rpartition(":")[0] for s in nats_servers(url)] == [
        "nats://upstream"
    ] * len(NODES)
    upstream = await nats.connect(nats_servers(url), inbox_prefix=nats_inbox(url))
    try:
        ack = await upstream.jetstream().publish(subjects.request("support", "upstream"), b"{}")
        assert ack.stream == subjects.STREAM_IN
    finally:
        await upstream.close()
