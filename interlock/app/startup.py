"""What `interlock up` checks before it starts anything, so that a start-up failure is one line
naming the setting or resource (exit 2) within seconds rather than a crash loop: the ports its
HTTP components listen on (a taken metrics port only warns), and a directory that would shadow
the installed package."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from interlock.app import terminal
from interlock.config.components import TABLE
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError


def require_free_ports(s: Settings, names: list[str]) -> None:
    """`ConfigurationError` naming the variable when the port of a component in `names` that
    listens (its row's `listens`: the gateway, the console) is already taken: `up` must never
    report, or send operators to, a server it does not own."""
    for row in TABLE:
        if row.listens is None or row.name not in names:
            continue
        host, port = (getattr(s, field) for field in row.listens)
        variable = f"INTERLOCK_{row.listens[1].upper()}"
        if not _free(host, port):
            raise ConfigurationError(
                f"{variable}: {host}:{port} is already in use (another `interlock up`, or "
                f"another program, listens there)",
                hint=f"stop it, or set {variable} to a free port",
            )


def without_taken_metrics_port(s: Settings) -> Settings:
    """`s`, or `s` without a scrape endpoint (a warning says why) when its port is taken: the
    metrics are observability, not a reason to refuse a stack, and `endpoints.json` must not
    name a server this stack does not own."""
    if not s.metrics_port or _free(s.metrics_host, s.metrics_port):
        return s
    terminal.errors.print(
        f"warning: INTERLOCK_METRICS_PORT: {s.metrics_host}:{s.metrics_port} is already in use; "
        "no metrics endpoint (set INTERLOCK_METRICS_PORT to a free port)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return s.model_copy(update={"metrics_port": 0})


def _free(host: str, port: int) -> bool:
    """Whether a server could listen on `host:port` now (as the servers bind: reusing an
    address in TIME_WAIT, which is not "in use")."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def shadowing_directory(installed_at: Path, cwd: Path) -> Path | None:
    """A directory `interlock` in `cwd` that is not the installed package: `python -m
    interlock` run there would import it instead (components are started with `-P`, which
    does not put the working directory on the path, so they are not affected)."""
    candidate = cwd / "interlock"
    if candidate.is_dir() and candidate.resolve() != installed_at.resolve():
        return candidate
    return None
