"""Owning server processes: launching, waiting for readiness, stopping, cleaning up at exit."""

import atexit
import contextlib
import ctypes
import logging
import os
import pwd
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TypeVar

import psutil

from interlock.app.errors import ExitedEarly

_log = logging.getLogger(__name__)

_POLL_INTERVAL = 0.02
_PR_SET_PDEATHSIG = 1

Process = subprocess.Popen[bytes] | psutil.Process
StopPlan = Sequence[tuple[signal.Signals, float]]
T = TypeVar("T")


def raise_if_exited(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        raise ExitedEarly(f"exited with status {process.returncode}")


def nothing() -> None:
    """The exit-hook canceller of a server that registered no hook."""


def wait_until(probe: Callable[[], T | None], *, timeout: float, what: str) -> T:
    """Poll ``probe`` until it returns something other than ``None``.

    ``probe`` may raise to abort the wait early (e.g. when the server process died).
    Raises ``TimeoutError`` naming ``what`` when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while (result := probe()) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f}s")
        time.sleep(_POLL_INTERVAL)
    return result


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (callers retry on a lost race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def log_tail(path: Path, *, since: int = 0, lines: int = 30) -> str:
    """The last ``lines`` lines written to ``path`` after byte offset ``since``."""
    try:
        with path.open("rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def launch(
    argv: Sequence[str],
    *,
    log_path: Path,
    death_signal: signal.Signals,
    run_as: pwd.struct_passwd | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start a server writing to ``log_path``, in its own session so a terminal's Ctrl-C
    reaches us (who stop it in order) rather than the server directly."""
    with log_path.open("ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            user=run_as.pw_uid if run_as else None,
            group=run_as.pw_gid if run_as else None,
            extra_groups=[] if run_as else None,
            # Only prctl() and getppid() run between fork and exec: no lock is taken there.
            preexec_fn=_parent_death_signal(death_signal),  # noqa: PLW1509
        )


def _parent_death_signal(sig: signal.Signals) -> Callable[[], None] | None:
    """Have Linux signal the server if we die without cleaning up (e.g. SIGKILL).

    Only from the main thread: the kernel fires it when the forking *thread* exits, so a
    server started from a worker thread would be stopped when that thread ends.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not (
        threading.main_thread()
    ):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def arm() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, int(sig))
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), sig)

    return arm


def stop_process(process: Process, plan: StopPlan) -> None:
    """Send each signal of ``plan`` in turn, waiting its grace period; SIGKILL as last resort."""
    for sig, grace in plan:
        with contextlib.suppress(ProcessLookupError, psutil.NoSuchProcess):
            process.send_signal(sig)
        if _exits_within(process, grace):
            return
        _log.warning("pid %d still running %.0fs after %s", process.pid, grace, sig.name)
    with contextlib.suppress(ProcessLookupError, psutil.NoSuchProcess):
        process.kill()
    _exits_within(process, 10)


def _exits_within(process: Process, timeout: float) -> bool:
    if isinstance(process, subprocess.Popen):
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    # Not our child: once it exits it may linger as a zombie until whoever adopted it
    # reaps it (and some container inits never do), so a zombie counts as exited.
    try:
        wait_until(lambda: _exited(process) or None, timeout=timeout, what="exit")
    except TimeoutError:
        return False
    return True


def _exited(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def running_server(pid: int, name: str) -> psutil.Process | None:
    """The live process ``pid`` if it is still the ``name`` server (pids get reused)."""
    try:
        process = psutil.Process(pid)
        if process.name() == name and process.status() != psutil.STATUS_ZOMBIE:
            return process
    except psutil.Error:
        pass
    return None


class _ExitHooks:
    """Hooks to run once when this process ends; a forked child does not inherit them."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.hooks: list[Callable[[], None]] = []

    def add(self, hook: Callable[[], None]) -> None:
        if self.pid != os.getpid():
            self.pid = os.getpid()
            self.hooks.clear()
            atexit.register(self.run)
        _stop_on_termination_signals()
        self.hooks.append(hook)

    def discard(self, hook: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self.hooks.remove(hook)

    def run(self) -> None:
        if self.pid != os.getpid():
            return
        while self.hooks:
            hook = self.hooks.pop()
            try:
                hook()
            except Exception:
                _log.exception("stopping an embedded server at exit failed")


_exit_hooks = _ExitHooks()


def on_exit(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` when this process exits, including on SIGTERM and SIGHUP.

    Returns a function that cancels the hook.
    """
    _exit_hooks.add(hook)
    return lambda: _exit_hooks.discard(hook)


def _stop_on_termination_signals() -> None:
    """By default SIGTERM and SIGHUP end Python without running atexit; stop our servers first.

    A handler someone else installed is left alone: they own shutdown and exit normally.
    Idempotent: once installed, ours is no longer the default handler.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _stop_then_die)


def _stop_then_die(signum: int, _frame: FrameType | None) -> None:
    _exit_hooks.run()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
