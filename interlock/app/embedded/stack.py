"""The embedded stack: one nats-server and one PostgreSQL per home, shared by processes."""

import contextlib
import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

import psutil

from interlock.app.embedded import nats, postgres
from interlock.app.embedded._process import (
    nothing,
    on_exit,
    port_accepts,
    running_server,
    stop_process,
    wait_until,
)
from interlock.app.embedded.nats import EmbeddedNats
from interlock.app.embedded.postgres import EmbeddedPostgres
from interlock.app.errors import EmbeddedStartError
from interlock.config import access, natsconf
from interlock.config.settings import Settings
from interlock.config.stackfile import StackRecord

# Covers another process starting or stopping the stack, which may include an initdb.
_LOCK_TIMEOUT = 180.0


class EmbeddedStack:
    """The embedded nats-server and PostgreSQL under ``home``, shared by all its processes.

    The first process to start the stack owns it: it records the servers in
    ``home/stack.json`` and stops them when it stops or exits. A process that finds a
    healthy stack with a live owner attaches instead: same URLs, and its ``stop()`` leaves
    the servers running. Works as a sync or async context manager; it never needs an
    event loop, and starting takes well under a second once the cluster exists.
    """

    def __init__(self, home: Path, settings: Settings | None = None) -> None:
        """`settings` say which clients the broker admits and where the secrets are
        (default: the environment's, with `home`)."""
        self.home = home.resolve()
        self._settings = settings
        self._record: StackRecord | None = None
        self._nats: EmbeddedNats | None = None
        self._postgres: EmbeddedPostgres | None = None
        self._cancel_exit_hook = nothing

    @property
    def nats_url(self) -> str:
        return self._started().nats_url

    @property
    def database_url(self) -> str:
        return self._started().database_url

    @property
    def owner(self) -> bool:
        """True if this object started the servers, False if it attached to another's."""
        return self._nats is not None

    @property
    def record(self) -> StackRecord:
        return self._started()

    def start(self) -> Self:
        """Attach to the stack running under ``home``, or start one."""
        if self._record is not None:
            return self
        self.home.mkdir(parents=True, exist_ok=True)
        with _locked(self.home / ".lock"):
            self._record = self._running_record() or self._start_servers()
        if self.owner:  # registered outside the lock, which the hook takes
            self._cancel_exit_hook = on_exit(self.stop)
        return self

    def stop(self) -> None:
        """Stop the servers if we own them; just detach otherwise."""
        self._record = None
        nats_server, pg_server, self._nats, self._postgres = self._nats, self._postgres, None, None
        if nats_server is None or pg_server is None:
            return
        self._cancel_exit_hook()
        with _locked(self.home / ".lock"):
            self._record_path.unlink(missing_ok=True)
            nats_server.stop()
            pg_server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _exc: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        # On the calling thread on purpose: signal handlers and the parent-death signal
        # that stop the servers with us can only be set up from the main thread.
        return self.start()

    async def __aexit__(
        self,
        _type: type[BaseException] | None,
        _exc: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def _record_path(self) -> Path:
        return self.home / "stack.json"

    def _started(self) -> StackRecord:
        if self._record is None:
            raise RuntimeError("EmbeddedStack is not started")
        return self._record

    def _running_record(self) -> StackRecord | None:
        """The record of a healthy stack with a live owner; clears a dead owner's leftovers."""
        try:
            record = StackRecord.model_validate_json(self._record_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        if record.owner_alive():
            if _servers_alive(record):
                return record
            raise EmbeddedStartError(
                f"the embedded stack in {self.home} (owned by pid {record.owner_pid}) is not "
                f"healthy: stop that process and retry; server logs are under {self.home}"
            )
        _stop_leftovers(record, self.home)
        self._record_path.unlink()
        return None

    def _start_servers(self) -> StackRecord:
        nats_server, pg_server = embedded_servers(self._settings or Settings(home=self.home))
        try:
            nats_url, database_url = nats_server.start(), pg_server.start()
        except BaseException:
            nats_server.stop()
            pg_server.stop()
            raise
        me = psutil.Process()
        record = StackRecord(
            owner_pid=me.pid,
            owner_started_at=me.create_time(),
            nats_pid=nats_server.pid,
            nats_url=nats_url,
            postgres_pid=pg_server.pid,
            database_url=database_url,
        )
        partial = self._record_path.with_suffix(".json.partial")
        partial.write_text(record.model_dump_json(indent=2))
        partial.replace(self._record_path)  # atomic: readers never see half a record
        self._nats, self._postgres = nats_server, pg_server
        return record


def running_record(home: Path) -> StackRecord | None:
    """The record of the stack running under `home` (its owner alive), without attaching."""
    try:
        record = StackRecord.model_validate_json((home / "stack.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return record if record.owner_alive() else None


def embedded_servers(settings: Settings) -> tuple[EmbeddedNats, EmbeddedPostgres]:
    """The broker and the database of the embedded stack under ``settings.home``, not yet
    started: the broker knows every identity and its permissions, the database demands the
    superuser's password."""
    home = settings.home.resolve()
    secrets = access.secrets_of(settings)
    permissions = access.broker_permissions(settings)
    config = natsconf.render(
        host="127.0.0.1",
        port=-1,
        store_dir=home / "nats",
        passwords=secrets.nats_passwords(list(permissions)),
        permissions=permissions,
    )
    return (
        EmbeddedNats(home / "nats", config=config, preferred_port=nats.CLIENT_PORT),
        EmbeddedPostgres(home / "pg", password=secrets.postgres_password(postgres.SUPERUSER)),
    )


@contextmanager
def resolve_urls(settings: Settings) -> Iterator[tuple[str, str]]:
    """Yield ``(nats_url, database_url)``: each from the settings when set, else from the
    embedded stack under ``settings.home`` (attached to, or started for the duration)."""
    if settings.nats_url is not None and settings.database_url is not None:
        yield settings.nats_url, settings.database_url
        return
    with EmbeddedStack(settings.home, settings) as stack:
        yield settings.nats_url or stack.nats_url, settings.database_url or stack.database_url


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``; closing the file releases it."""
    with path.open("a") as handle:

        def acquired() -> bool | None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            return True

        wait_until(acquired, timeout=_LOCK_TIMEOUT, what=f"lock {path}")
        yield


def _servers_alive(record: StackRecord) -> bool:
    return _serving(record.nats_pid, "nats-server", record.nats_url) and _serving(
        record.postgres_pid, "postgres", record.database_url
    )


def _serving(pid: int, name: str, url: str) -> bool:
    address = urlsplit(url)
    return running_server(pid, name) is not None and port_accepts(
        address.hostname or "", address.port or 0
    )


def _stop_leftovers(record: StackRecord, home: Path) -> None:
    """Stop servers whose owner died without stopping them (possible when it started them
    off the main thread, where no parent-death signal can be armed)."""
    for pid, name, plan in (
        (record.nats_pid, "nats-server", nats.STOP_PLAN),
        (record.postgres_pid, "postgres", postgres.STOP_PLAN),
    ):
        server = running_server(pid, name)
        with contextlib.suppress(psutil.Error):
            # The pid may since have been reused by a server on some other data directory.
            if server is not None and str(home) in " ".join(server.cmdline()):
                stop_process(server, plan)
