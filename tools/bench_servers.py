"""What the broker and the database spend on a benchmark's workflows, and what each projector
partition is delivered: the figures Interlock's own processes leave out.

The servers are found by the loopback ports their URLs name (the embedded ones, or any local
`nats-server` and PostgreSQL); a server elsewhere is not measured (its figure is `None`).
PostgreSQL is a process tree — a postmaster and one backend per connection — so its CPU is
the tree's: the live processes' and what the postmaster has reaped from finished children.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import nats
import psutil

from interlock.contracts.partitions import partition_of
from interlock.contracts.urls import nats_servers
from interlock.messaging.partition_streams import deliveries

SERVERS = ("nats", "postgres")
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _ports(url: str) -> set[int]:
    """The loopback ports of a URL, or of each URL of a comma-separated seed list."""
    ports = set()
    for one in url.split(","):
        parts = urlsplit(one.strip())
        if parts.hostname in _LOOPBACK and parts.port is not None:
            ports.add(parts.port)
    return ports


def listening(url: str) -> list[psutil.Process]:
    """The processes listening on `url`'s loopback ports (none for a remote server)."""
    wanted = _ports(url)
    found: dict[int, psutil.Process] = {}
    with suppress(psutil.Error):
        for conn in psutil.net_connections(kind="tcp"):
            port = getattr(conn.laddr, "port", None)
            listens = conn.status == psutil.CONN_LISTEN and port in wanted
            if listens and conn.pid and conn.pid not in found:
                with suppress(psutil.Error):
                    found[conn.pid] = psutil.Process(conn.pid)
    return list(found.values())


def _tree_seconds(root: psutil.Process) -> float:
    """CPU seconds of `root`, its live descendants and the children it has reaped."""
    total = 0.0
    with suppress(psutil.Error):
        t = root.cpu_times()
        total += t.user + t.system + t.children_user + t.children_system
        for child in root.children(recursive=True):
            with suppress(psutil.Error):
                c = child.cpu_times()
                total += c.user + c.system
    return total


class ServerCpu:
    """CPU seconds the broker's and the database's processes spend between `start` and
    `stop`."""

    def __init__(self, nats_url: str, database_url: str) -> None:
        self._roots = {"nats": listening(nats_url), "postgres": listening(database_url)}
        self._start: dict[str, float] = {}
        self._spent: dict[str, float | None] = dict.fromkeys(SERVERS)

    def _now(self) -> dict[str, float]:
        return {kind: sum(_tree_seconds(p) for p in roots) for kind, roots in self._roots.items()}

    def start(self) -> None:
        self._start = self._now()

    def stop(self) -> None:
        end = self._now()
        self._spent = {
            kind: round(end[kind] - self._start[kind], 2) if self._roots[kind] else None
            for kind in SERVERS
        }

    def summary(self) -> dict[str, float | None]:
        return dict(self._spent)


StreamCounts = dict[str, tuple[int, int]]
"""Per stream: (messages ever stored, i.e. its last sequence; messages it holds now)."""


async def broker_counts(nats_url: str, partitions: int) -> tuple[dict[int, int], StreamCounts]:
    """Read on one connection (`nats_url` carries credentials that may read them): the
    messages delivered so far to each projector partition's consumers on the inbound streams
    it reads (redeliveries included), and what each stream has stored so far and holds now."""
    nc = await nats.connect(
        servers=nats_servers(nats_url), allow_reconnect=False, connect_timeout=5
    )
    try:
        js = nc.jetstream()
        delivered = await deliveries(js, partitions)
        infos = await js.streams_info()
        streams = {
            i.config.name or "?": (int(i.state.last_seq), int(i.state.messages)) for i in infos
        }
        return delivered, streams
    finally:
        await nc.close()


def stream_writes(before: StreamCounts, after: StreamCounts) -> dict[str, dict[str, int]]:
    """Per stream, over a window: messages `stored` (each one a write the broker fsyncs before
    it acknowledges, under `sync_interval: always`) and `removed` (acknowledged off a work
    queue or interest stream, or expired: each one a delete the store records)."""
    writes = {}
    for name, (last, held) in sorted(after.items()):
        last_before, held_before = before.get(name, (0, 0))
        stored = last - last_before
        writes[name] = {"stored": stored, "removed": max(0, stored - (held - held_before))}
    return writes


class ServerWindow:
    """The servers' CPU, the streams' writes and the partitions' deliveries over the measured
    part of a run."""

    def __init__(self, nats_url: str, database_url: str, partitions: int) -> None:
        self._nats_url = nats_url
        self._partitions = partitions
        self._cpu = ServerCpu(nats_url, database_url)
        self._before: dict[int, int] = {}
        self._streams: StreamCounts = {}
        self.delivered: dict[int, int] = {}
        self.writes: dict[str, dict[str, int]] = {}

    async def open(self) -> None:
        self._cpu.start()
        self._before, self._streams = await broker_counts(self._nats_url, self._partitions)

    async def close(self) -> None:
        self._cpu.stop()
        after, streams = await broker_counts(self._nats_url, self._partitions)
        self.delivered = {k: v - self._before.get(k, 0) for k, v in after.items()}
        self.writes = stream_writes(self._streams, streams)

    def summary(self) -> dict[str, object]:
        return {
            "cpu_by_server": self._cpu.summary(),
            "delivered_by_partition": self.delivered,
            "stream_writes": self.writes,
        }


def partition_shares(
    resources: dict[str, Any], decisions: list[tuple[str, str, int]]
) -> list[dict[str, int]]:
    """Per projector partition: the inbound messages its consumer was delivered over the
    window, and the decisions it committed for the measured workflows (those it owns)."""
    delivered: dict[int, int] = resources.get("delivered_by_partition", {})
    count = max(len(delivered), 1)
    decided = dict.fromkeys(range(count), 0)
    for tenant_id, workflow_id, n in decisions:
        decided[partition_of(tenant_id, workflow_id, count)] += n
    return [
        {"partition": k, "delivered": delivered.get(k, 0), "decided": decided[k]}
        for k in range(count)
    ]


def per_workflow(writes: dict[str, dict[str, int]], done: int) -> dict[str, Any]:
    """The streams' writes (`stream_writes`) per workflow measured, in all and by stream."""

    def each(n: int) -> float | None:
        return round(n / done, 1) if done else None

    return {
        "stored": each(sum(w["stored"] for w in writes.values())),
        "removed": each(sum(w["removed"] for w in writes.values())),
        "by_stream": {
            name: {"stored": each(w["stored"]), "removed": each(w["removed"])}
            for name, w in writes.items()
            if w["stored"] or w["removed"]
        },
    }


def sampling(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The trace sampling the stack's processes run with: OpenTelemetry's standard
    `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (unset: every trace), and the share of
    new traces that `ratio` keeps (None for a sampler this cannot tell)."""
    sampler = environ.get("OTEL_TRACES_SAMPLER", "parentbased_always_on").lower()
    ratio: float | None = None
    if sampler.endswith("always_on"):
        ratio = 1.0
    elif sampler.endswith("always_off"):
        ratio = 0.0
    elif sampler.endswith("traceidratio"):
        try:
            ratio = float(environ.get("OTEL_TRACES_SAMPLER_ARG", ""))
        except ValueError:
            ratio = 1.0
        if not 0.0 <= ratio <= 1.0:
            ratio = 1.0  # the SDK, too, keeps every trace when the argument is not a rate
    return {"sampler": sampler, "ratio": ratio}
