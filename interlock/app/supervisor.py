"""Runs components as child processes and restarts the ones that die.

Each child is `python -m interlock service NAME` with the environment it is given (its own
settings and credentials, nothing inherited),
logging to `<home>/logs/NAME.log`. A child that exits while the supervisor is running is
restarted after a growing delay (capped), so a crash — or a deliberate SIGKILL in a chaos
test — takes one component down for a moment, never the others.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from interlock.app.embedded import parent_death_signal

log = logging.getLogger("interlock.app.supervisor")
FIRST_RESTART_DELAY = 0.5
MAX_RESTART_DELAY = 10.0
STABLE_AFTER = 30.0
"""A child that ran this long before it exited is restarted after the first delay again."""
EXIT_REASONS = {
    75: "its broker connection closed for good",
    1: "an error",
    2: "a configuration or start-up failure",
}
TAIL_LINES = 3


def exit_reason(code: int) -> str:
    """Why a child exited, in words: the signal that killed it or what its status means."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}" + (f" ({EXIT_REASONS[code]})" if code in EXIT_REASONS else "")


def _last_lines(path: Path, since: int) -> str:
    """The last lines the child wrote to its log since `since`, indented under the report."""
    try:
        with path.open("rb") as out:
            # Only the end matters; a child that ran for days wrote far more than that.
            out.seek(max(since, path.stat().st_size - 8192))
            written = out.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [line for line in written.splitlines() if line.strip()][-TAIL_LINES:]
    return "".join(f"\n    {line}" for line in lines)


@dataclass
class Child:
    name: str
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    last_exit: str = ""
    last_code: int | None = None
    last_words: str = ""
    """The last line the child wrote before it last exited (its one-line error, if any)."""
    watcher: asyncio.Task[None] | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    released: asyncio.Event = field(default_factory=asyncio.Event)
    """Cleared while a chaos test or an operator keeps this child down on purpose."""

    def __post_init__(self) -> None:
        self.released.set()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None


class Supervisor:
    def __init__(
        self,
        environments: Mapping[str, dict[str, str]],
        log_dir: Path,
        *,
        started_up: bool = True,
    ) -> None:
        """`environments`: each child's name and its whole environment; `started_up=False`:
        the caller waits for the children to be ready, then sets `started_up`."""
        self.children = {name: Child(name) for name in environments}
        self._envs = dict(environments)
        self._log_dir = log_dir
        self._stopping = False
        self.started_up = started_up
        """Set once every child was ready: until then a child that refuses to start (exit
        2) is not restarted but left for the start-up to report (`refused`)."""

    async def start(self) -> None:
        self._log_dir.mkdir(parents=True, exist_ok=True)
        for child in self.children.values():
            child.watcher = asyncio.create_task(self._watch(child))
        await asyncio.gather(*(c.started.wait() for c in self.children.values()))

    async def _spawn(self, child: Child) -> None:
        with (self._log_dir / f"{child.name}.log").open("ab") as out:
            child.process = await asyncio.create_subprocess_exec(
                sys.executable,
                # -P: not the working directory first on the path, so a folder named
                # `interlock` where `up` was started cannot shadow the installed package.
                "-P",
                "-m",
                "interlock",
                "service",
                child.name,
                env=self._envs[child.name],
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                # A supervisor that dies, even by SIGKILL, takes its children with it:
                # only prctl() and getppid() run between fork and exec.
                preexec_fn=parent_death_signal(signal.SIGTERM),
            )
        child.started.set()

    async def _watch(self, child: Child) -> None:
        delay = FIRST_RESTART_DELAY
        loop = asyncio.get_running_loop()
        log_path = self._log_dir / f"{child.name}.log"
        while not self._stopping:
            since = log_path.stat().st_size if log_path.exists() else 0
            await self._spawn(child)
            assert child.process is not None
            began = loop.time()
            code = await child.process.wait()
            if self._stopping:
                return
            child.restarts += 1
            child.last_exit, child.last_code = exit_reason(code), code
            child.last_words = _last_lines(log_path, since).rsplit("\n", 1)[-1].strip()
            if code == 2 and not self.started_up:
                return
            if not child.released.is_set():
                await child.released.wait()
                delay = FIRST_RESTART_DELAY
                continue
            if loop.time() - began > STABLE_AFTER:
                delay = FIRST_RESTART_DELAY
            log.warning(
                "%s (pid %s) exited: %s; restarting in %.1fs (log: %s)%s",
                child.name,
                child.pid,
                child.last_exit,
                delay,
                log_path,
                _last_lines(log_path, since),
            )
            await asyncio.sleep(delay)
            delay = min(MAX_RESTART_DELAY, delay * 2)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Send `sig` to a child (chaos tests); returns the pid it was sent to."""
        child = self.children[name]
        process = child.process
        # exited and not yet restarted: there is nothing to signal
        if process is None or child.pid is None or process.returncode is not None:
            raise LookupError(f"{name} is not running")
        try:
            process.send_signal(sig)
        except ProcessLookupError:  # it died on its own and is not restarted yet
            raise LookupError(f"{name} is not running") from None
        return child.pid

    async def hold(self, name: str) -> None:
        """Kill a child with SIGKILL and keep it down until `release` (chaos tests)."""
        child = self.children[name]
        child.released.clear()
        self.kill(name)
        assert child.process is not None
        await child.process.wait()

    async def release(self, name: str) -> None:
        """Let a held child start again, and wait until it has."""
        child = self.children[name]
        child.started.clear()
        child.released.set()
        await child.started.wait()

    async def stop(self, grace: float = 15.0) -> None:
        """SIGTERM every child, wait up to `grace` seconds, then SIGKILL the stragglers."""
        self._stopping = True
        alive = [c for c in self.children.values() if c.alive]
        for child in alive:
            with suppress(ProcessLookupError):
                assert child.process is not None
                child.process.send_signal(signal.SIGTERM)
        waits = [c.process.wait() for c in alive if c.process is not None]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), grace)
        except TimeoutError:
            for child in alive:
                with suppress(ProcessLookupError):
                    assert child.process is not None
                    child.process.kill()
        for child in self.children.values():
            if child.watcher is not None:
                child.watcher.cancel()
                with suppress(asyncio.CancelledError):
                    await child.watcher

    def refused(self) -> Child | None:
        """A child whose last exit was a configuration or start-up failure (status 2): one
        that restarting will not mend."""
        return next((c for c in self.children.values() if c.last_code == 2), None)

    def pids(self) -> dict[str, int]:
        return {c.name: c.pid for c in self.children.values() if c.pid is not None}

    def status(self) -> list[dict[str, object]]:
        return [
            {
                "name": c.name,
                "pid": c.pid,
                "alive": c.alive,
                "restarts": c.restarts,
                "last_exit": c.last_exit,
            }
            for c in self.children.values()
        ]
