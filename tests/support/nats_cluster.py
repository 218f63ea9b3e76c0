"""A real NATS JetStream cluster for tests: three nats-server processes of the installed
wheel, each with its own client and route ports and its own store, configured by
`natsconf.render` with a cluster block (the users and permissions of the session's secrets),
started together and waited for until every node sees the full cluster and a meta leader."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from interlock.app.embedded._process import wait_until
from interlock.app.embedded.nats import EmbeddedNats
from interlock.config import access, natsconf
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from tests.support.cli import free_port

READY_WITHIN_S = 60.0


class NatsCluster:
    """`size` nodes named `n1`..`nN` under `root`; `seeds` is their comma-separated client
    URLs (what INTERLOCK_NATS_URL is set to), without credentials."""

    def __init__(self, root: Path, settings: Settings, secrets: Secrets, size: int = 3) -> None:
        self.names = [f"n{i + 1}" for i in range(size)]
        self.ports = [free_port() for _ in self.names]
        route_ports = [free_port() for _ in self.names]
        routes = [f"127.0.0.1:{port}" for port in route_ports]
        permissions = access.broker_permissions(settings)
        passwords = secrets.nats_passwords(list(permissions))
        route_password = secrets.nats_password(natsconf.ROUTE_IDENTITY)
        self.nodes = []
        for name, port, route_port in zip(self.names, self.ports, route_ports, strict=True):
            store = root / name
            config = natsconf.render(
                host="127.0.0.1",
                port=port,
                store_dir=store / "jetstream",
                passwords=passwords,
                permissions=permissions,
                cluster=natsconf.Cluster(name, routes, route_port, name="interlock-test"),
                route_password=route_password,
            )
            self.nodes.append(EmbeddedNats(store, config=config, port=port))

    @property
    def seeds(self) -> str:
        return ",".join(f"nats://127.0.0.1:{port}" for port in self.ports)

    def start(self) -> str:
        """Start every node at once (none is healthy before a quorum has formed) and wait
        for the cluster; returns `seeds`."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda node: node.start(), self.nodes))
        self.wait_formed(self.names)
        return self.seeds

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def kill(self, name: str) -> None:
        """SIGKILL the node `name` (no lame-duck mode, no flush: a machine lost)."""
        node = self.nodes[self.names.index(name)]
        os.kill(node.pid, signal.SIGKILL)
        node.stop()  # reaps the process

    def restart(self, name: str) -> None:
        """Start the node `name` again on its ports and store, and wait until it is back in
        the cluster."""
        self.nodes[self.names.index(name)].start()
        self.wait_formed(self.names)

    def wait_formed(self, names: list[str], within: float = READY_WITHIN_S) -> None:
        """Until each of `names` counts every node in its meta group and knows its leader."""
        for name in names:
            wait_until(
                lambda: True if self._formed(name) else None,  # noqa: B023 (called at once)
                timeout=within,
                what=f"NATS node {name} in a formed cluster",
            )

    def _formed(self, name: str) -> bool:
        """Whether the node knows a meta leader of a group of every node, and, being the
        leader itself, has every other node current."""
        meta = (self._jsz(name) or {}).get("meta_cluster") or {}
        if not meta.get("leader") or meta.get("cluster_size") != len(self.nodes):
            return False
        others = meta.get("replicas") or []
        leads = meta["leader"] == name
        return not leads or (
            len(others) == len(self.nodes) - 1 and all(p["current"] for p in others)
        )

    def _jsz(self, name: str) -> dict[str, Any] | None:
        node = self.nodes[self.names.index(name)]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(f"{node.monitor_url}/jsz", timeout=1) as response:
                found: dict[str, Any] = json.loads(response.read())
                return found
        except (OSError, ValueError, RuntimeError):
            return None
